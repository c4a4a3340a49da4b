// A tiny HTTP client for the emulator tests: one connection per request (no keep-alive pool to hang mocha),
// and a connection reset surfaces as `{ reset: true }` instead of an exception.

import http from "http";
import { createSign } from "crypto";

export interface Reply {
    status: number;
    headers: http.IncomingHttpHeaders;
    text: string;
    /** The parsed JSON body (undefined when not JSON); read it through `body<T>()` or `apiError()`. */
    json: unknown;
    reset: boolean;
}

export interface CallOptions {
    token?: string;
    body?: unknown;
    /** Sent as is (not JSON-encoded). */
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
}

/** Sends `method url`; `url` is absolute, or a path relative to `base` (which ends in `/v1/`). */
export function call(method: string, url: string, opts: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers.Authorization = `Bearer ${opts.token}`;
    let payload: string | Buffer | undefined = opts.rawBody;
    if (payload === undefined && opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers["Content-Type"] ??= "application/json";
    }
    if (payload !== undefined) headers["Content-Length"] = String(Buffer.byteLength(payload));
    return new Promise((resolve, reject) => {
        const req = http.request(url, { method, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("error", () => resolve({ status: 0, headers: {}, text: "", json: undefined, reset: true }));
            res.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8");
                let json: unknown;
                try { json = JSON.parse(text); } catch { json = undefined; }
                resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, reset: false });
            });
        });
        req.on("error", (e: NodeJS.ErrnoException) => {
            if (e.code === "ECONNRESET" || e.message === "socket hang up") {
                resolve({ status: 0, headers: {}, text: "", json: undefined, reset: true });
            } else {
                reject(e);
            }
        });
        req.end(payload);
    });
}

/** The reply's JSON body, typed as the caller expects it. */
export function body<T>(r: Reply): T {
    return r.json as T;
}

export interface ApiErrorBody {
    code: number;
    message: string;
    status: string;
    details: unknown[];
}

/** The `error` object of a Google JSON error reply. */
export function apiError(r: Reply): ApiErrorBody {
    return (r.json as { error: ApiErrorBody }).error;
}

/** An RS256 JWT signed with `privateKeyPem`, as google-auth-library builds its jwt-bearer assertions. */
export function signJwt(privateKeyPem: string, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
    const enc = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString("base64url");
    const signingInput = `${enc({ alg: "RS256", typ: "JWT", ...header })}.${enc(claims)}`;
    const signature = createSign("RSA-SHA256").update(signingInput).sign(privateKeyPem).toString("base64url");
    return `${signingInput}.${signature}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
