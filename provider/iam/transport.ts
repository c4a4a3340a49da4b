// The HTTP side of the API: one keep-alive agent for the endpoint, the URL of a call, and one POST with its
// answer. Knows nothing of retries, errors or policies.

import * as http from "http";
import * as https from "https";
import { PACKAGE_NAME, PACKAGE_VERSION } from "../package/version";
import { Parent, parentName } from "./names";
import { deferredCaOptions } from "./tls";

export const USER_AGENT = `pulumi-resource-${PACKAGE_NAME}/${PACKAGE_VERSION}`;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/**
 * The one rule for every URL a credential is sent to (API endpoints, a key's token_uri): https, or plain
 * http to this machine only. Returns what is wrong, or undefined.
 */
export function credentialTransportProblem(url: URL): string | undefined {
    if (url.protocol === "https:") return undefined;
    if (url.protocol === "http:" && LOOPBACK.test(url.hostname)) return undefined;
    if (url.protocol === "http:") {
        return `plain http:// is allowed only for a loopback host (127.0.0.1, ::1, localhost), because credentials ` +
            `are sent with every request; use https:// for ${url.host}`;
    }
    return `the URL must use https:// (or http:// to a loopback host), not ${url.protocol}`;
}

export type Verb = "getIamPolicy" | "setIamPolicy";

/** An HTTP answer, whatever its status. */
export interface Answer {
    status: number;
    retryAfter?: string;
    body: string;
}

/** What an aborted request fails with: Node's own AbortError, as its `signal` option gives. */
function abortError(): Error {
    return Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR" });
}

export class Transport {
    private readonly agent: http.Agent;
    /**
     * Requests in flight by the signal that aborts them. Signals are shared by every request of their kind, so one
     * listener per signal does what Node's `signal` option does per request (its listeners and stream tracking were
     * 3% of the plugin's CPU per lookup in a profile under the bench's invoke load).
     */
    private readonly abortable = new WeakMap<AbortSignal, Set<http.ClientRequest>>();

    /** `base`: the API's base URL, ending in `/`; `userProject`: sent as X-Goog-User-Project. */
    constructor(readonly base: URL, private readonly userProject?: string) {
        const agentOptions = { keepAlive: true, maxSockets: 64 };
        this.agent = base.protocol === "https:" ? new https.Agent({ ...agentOptions, ...deferredCaOptions() }) : new http.Agent(agentOptions);
    }

    /** Request options for one call, built from the base URL once parsed (no URL parsing per request). */
    target(parent: Parent, verb: Verb): http.RequestOptions & { path: string } {
        const segments = parentName(parent).split("/").map(encodeURIComponent).join("/");
        return {
            protocol: this.base.protocol,
            hostname: this.base.hostname.replace(/^\[|\]$/g, ""),
            port: this.base.port,
            path: `${this.base.pathname}${segments}:${verb}`,
        };
    }

    /** The full URL of a call, for messages. */
    url(parent: Parent, verb: Verb): string {
        return `${this.base.origin}${this.target(parent, verb).path}`;
    }

    /**
     * One POST; `signal` (none for a write once sent) aborts it; rejects on network errors only, and with ETIMEDOUT
     * when the whole exchange (connecting, sending, the answer to its last byte) takes longer than `timeoutMs`.
     */
    send(url: http.RequestOptions, payload: string, authorization: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Answer> {
        const headers: http.OutgoingHttpHeaders = {
            "Authorization": authorization,
            "Content-Type": "application/json",
            "Content-Length": Buffer.byteLength(payload),
            "User-Agent": USER_AGENT,
            "Accept": "application/json",
        };
        if (this.userProject) headers["X-Goog-User-Project"] = this.userProject;
        const transport = url.protocol === "https:" ? https : http;
        return new Promise<Answer>((resolve, reject) => {
            if (signal?.aborted) return reject(abortError());
            const req = transport.request({ ...url, method: "POST", headers, agent: this.agent }, (res) => {
                const chunks: Buffer[] = [];
                res.on("data", (c: Buffer) => chunks.push(c));
                res.on("error", fail);
                res.on("end", () => {
                    clearTimeout(timer);
                    resolve({
                        status: res.statusCode ?? 0,
                        retryAfter: res.headers["retry-after"],
                        body: Buffer.concat(chunks).toString("utf8"),
                    });
                });
            });
            // A timer over the whole exchange, not the socket's idle timeout: an answer that trickles in, or a
            // connection kept alive without one, is as hung as silence. Destroying the request frees its socket.
            const timer = setTimeout(() => {
                const timedOut = Object.assign(new Error(`no answer within ${Math.round(timeoutMs)} ms`), { code: "ETIMEDOUT" });
                reject(timedOut);
                req.destroy(timedOut);
            }, Math.max(1, timeoutMs));
            function fail(e: Error): void {
                clearTimeout(timer);
                reject(e);
            }
            req.on("error", fail);
            if (signal) this.abortOn(signal, req);
            req.end(payload);
        });
    }

    private abortOn(signal: AbortSignal, req: http.ClientRequest): void {
        let inFlight = this.abortable.get(signal);
        if (!inFlight) {
            const requests = new Set<http.ClientRequest>();
            signal.addEventListener("abort", () => {
                for (const r of requests) r.destroy(abortError());
            }, { once: true });
            this.abortable.set(signal, requests);
            inFlight = requests;
        }
        inFlight.add(req);
        req.once("close", () => inFlight.delete(req));
    }

    close(): void {
        this.agent.destroy();
    }
}
