// Errors of the IAM fetcher, written for the person running the deployment: what failed, on which
// resource, what to check, and never a token or key.

/** gRPC status codes the server maps fetcher errors to (values of grpc.status). */
export const Code = {
    CANCELLED: 1,
    UNKNOWN: 2,
    INVALID_ARGUMENT: 3,
    DEADLINE_EXCEEDED: 4,
    NOT_FOUND: 5,
    PERMISSION_DENIED: 7,
    RESOURCE_EXHAUSTED: 8,
    FAILED_PRECONDITION: 9,
    ABORTED: 10,
    UNAVAILABLE: 14,
    UNAUTHENTICATED: 16,
} as const;

export class IamError extends Error {
    constructor(
        message: string,
        /** The HTTP status of the last answer, if there was one. */
        readonly httpStatus: number | undefined,
        /** The gRPC code the provider answers with. */
        readonly code: number,
    ) {
        super(message);
    }
}

/**
 * A call stopped by its `deadline` rather than by an answer that settles it (its retries, a Retry-After or its turn
 * under the quota reached past it): `retryAt` is the soonest Google lets another attempt go (its Retry-After, the
 * quota's turn; else the moment it gave up). A caller with a later deadline of its own that shared the call may try
 * again then (parentPolicy.ts, `within`).
 */
export class OutOfTime extends IamError {
    constructor(cause: IamError, readonly deadline: number, readonly retryAt: number) {
        super(cause.message, cause.httpStatus, cause.code);
    }
}

// Bearer tokens, JWTs and PEM blocks: anything that looks like one is removed from text we did not write.
const SECRETS = [
    /-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)/g,
    /\bya29\.[A-Za-z0-9._-]+/g,
    /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
    /\b(Bearer|bearer)\s+[A-Za-z0-9._~+/=-]+/g,
    /[A-Za-z0-9_-]{40,}/g,
];

/** Removes anything that looks like a credential from a message that came from elsewhere. */
export function redact(text: string): string {
    let out = text;
    for (const pattern of SECRETS) out = out.replace(pattern, "[redacted]");
    return out.length > 1000 ? `${out.slice(0, 1000)}…` : out;
}

/** The error object of a Google API JSON error response, when the body is one. */
export interface GoogleError {
    code?: number;
    message?: string;
    status?: string;
    details?: unknown[];
}

export function parseGoogleError(body: string): GoogleError {
    try {
        const parsed = JSON.parse(body) as { error?: GoogleError };
        if (parsed && typeof parsed.error === "object" && parsed.error) return parsed.error;
    } catch {
        // not JSON: fall through
    }
    return {};
}
