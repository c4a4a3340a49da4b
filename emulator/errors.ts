// Google's JSON error model as the emulator answers it (AIP-193): the error itself and the google.rpc.ErrorInfo
// detail, shared by the server and the rate quota.

import type { OutgoingHttpHeaders } from "http";

/** The service the emulator stands in for, as Google's errors and token audiences name it. */
export const SERVICE_MANAGEMENT = "servicemanagement.googleapis.com";

/** An error answered in Google's JSON error format. */
export class ApiError extends Error {
    constructor(
        readonly code: number,
        readonly status: string,
        message: string,
        readonly details: object[] = [],
        readonly headers?: OutgoingHttpHeaders,
    ) {
        super(message);
    }
}

/** A google.rpc.ErrorInfo detail of domain googleapis.com. */
export function errorInfo(reason: string, metadata: Record<string, string>): object {
    return { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com", metadata };
}
