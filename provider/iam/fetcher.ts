// The one IAM fetcher: every function and resource reads and writes policies through it. It speaks the
// Service Management REST API over keep-alive HTTP, retries what Google says is transient (429, 5xx,
// resets, timeouts) with jittered exponential backoff bounded by `requestTimeout`, and turns failures into
// messages a person can act on. What happens to one policy between a change and its confirmation — batching,
// read sharing, confirmation — is its ParentPolicy's (parentPolicy.ts); the fetcher keeps one per parent.

import { setMaxListeners } from "events";
import * as http from "http";
import * as https from "https";
import { configKeyName, credentialTransportProblem, parseDuration, ResolvedConfig } from "../config";
import { PACKAGE_NAME, PACKAGE_VERSION } from "../version";
import { Credentials, CredentialsError, credentialsFor } from "./auth";
import { Code, IamError, parseGoogleError, redact } from "./errors";
import { Parent, parentName } from "./names";
import { Change, ChangeOptions, ParentPolicy, PolicyApi, sleep } from "./parentPolicy";
import { Policy } from "./policy";
import { deferredCaOptions, untrustedCertificateHint } from "./tls";

export const USER_AGENT = `pulumi-resource-${PACKAGE_NAME}/${PACKAGE_VERSION}`;

const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const RETRY_NETWORK = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ECONNABORTED", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH"]);
/** Answers that mean a wrong endpoint far more often than a blip: one quick retry, then fail naming it. */
const UNREACHABLE: Record<string, string> = { ECONNREFUSED: "the connection was refused", ENOTFOUND: "the host name is unknown" };

export interface FetcherOptions {
    /** Base URL ending in `/` (e.g. https://servicemanagement.googleapis.com/v1/). */
    endpoint: string;
    credentials: Credentials;
    /** Budget for one call, retries included. */
    requestTimeoutMs: number;
    /**
     * The settings as the user wrote them, for messages: where the endpoint came from (a config key, an
     * environment variable, or the default) and how to raise the timeout.
     */
    settings?: { endpoint: string; requestTimeout: string };
    /** Sent as X-Goog-User-Project (userProjectOverride + billingProject). */
    userProject?: string;
    /** First backoff delay; doubles per retry up to maxBackoffMs. */
    initialBackoffMs?: number;
    maxBackoffMs?: number;
    /** Diagnostics (never given secrets). */
    log?: (message: string) => void;
    /** What a user should know though no call failed (a write that later reads do not show). */
    warn?: (message: string) => void;
}

/**
 * The fetcher's options for a resolved configuration: the one place config keys become fetcher settings.
 * `serviceManagementCustomEndpoint` and `requestTimeout` have defaults and were checked, so a resolved
 * configuration always has them, the duration parseable.
 */
export function fetcherOptions(config: ResolvedConfig, log?: { debug(message: string): void; warn(message: string): void }): FetcherOptions {
    const v = config.values;
    const endpoint = v.serviceManagementCustomEndpoint;
    const requestTimeoutMs = v.requestTimeout === undefined ? undefined : parseDuration(v.requestTimeout);
    if (endpoint === undefined || requestTimeoutMs === undefined) {
        throw new Error("the resolved configuration lacks serviceManagementCustomEndpoint or a valid requestTimeout, which have defaults");
    }
    return {
        endpoint,
        credentials: credentialsFor(config),
        requestTimeoutMs,
        settings: {
            endpoint: config.sources.serviceManagementCustomEndpoint ?? `the default endpoint (set ${configKeyName("serviceManagementCustomEndpoint", config.origin)} for another)`,
            requestTimeout: configKeyName("requestTimeout", config.origin),
        },
        userProject: v.userProjectOverride && v.billingProject ? v.billingProject : undefined,
        log: log && ((m) => log.debug(m)),
        warn: log && ((m) => log.warn(m)),
    };
}

interface Answer {
    status: number;
    retryAfter?: string;
    body: string;
}

type Verb = "getIamPolicy" | "setIamPolicy";

const READ_BODY = { options: { requestedPolicyVersion: 3 } };

export class IamFetcher {
    private readonly base: URL;
    private readonly agent: http.Agent;
    private readonly policies = new Map<string, ParentPolicy>();
    /**
     * Reads, writes and waits (gathering, backoff, confirmations) are cancelled separately: a shutdown drops
     * reads at once but lets writes and their confirmations finish; the engine's Cancel stops all but the
     * writes already sent.
     */
    private reading = IamFetcher.controller();
    private writing = IamFetcher.controller();
    private waiting = IamFetcher.controller();
    private draining = false;
    /** Writes sent and confirmations running: what a shutdown waits for. */
    private readonly inFlight = new Set<Promise<unknown>>();

    constructor(private readonly options: FetcherOptions) {
        this.base = new URL(options.endpoint.endsWith("/") ? options.endpoint : `${options.endpoint}/`);
        const problem = credentialTransportProblem(this.base);
        if (problem) throw new IamError(`refusing to send a bearer token to ${this.base.host}: ${problem}`, undefined, Code.INVALID_ARGUMENT);
        const agentOptions = { keepAlive: true, maxSockets: 64 };
        this.agent = this.base.protocol === "https:" ? new https.Agent({ ...agentOptions, ...deferredCaOptions() }) : new http.Agent(agentOptions);
    }

    /** The budget of one call, retries included (config `requestTimeout`). */
    get requestTimeoutMs(): number {
        return this.options.requestTimeoutMs;
    }

    /** The timeout setting as the user writes it, for messages that tell them to raise it. */
    get requestTimeoutSetting(): string {
        return this.options.settings?.requestTimeout ?? "cloud:requestTimeout";
    }

    /** Where the endpoint came from, for messages that tell the user to check it. */
    private get endpointSetting(): string {
        return this.options.settings?.endpoint ?? "cloud:serviceManagementCustomEndpoint";
    }

    /** The life of one parent's policy in this process (parentPolicy.ts). */
    private policy(parent: Parent): ParentPolicy {
        const name = parentName(parent);
        let p = this.policies.get(name);
        if (!p) this.policies.set(name, (p = new ParentPolicy(parent, this.api)));
        return p;
    }

    /** A parent's policy at version 3, as ParentPolicy.read gives it (`fresh`: a read that starts now). */
    getIamPolicy(parent: Parent, opts: { fresh?: boolean } = {}): Promise<Policy> {
        return this.policy(parent).read(opts);
    }

    /**
     * Applies `change` to a parent's policy in a read-modify-write (ParentPolicy.change): resolves with Google's
     * answer to the write, or the policy as read when nothing needed changing.
     */
    modify(parent: Parent, change: Change, opts?: ChangeOptions): Promise<Policy> {
        return this.policy(parent).change(change, opts);
    }

    /** What a ParentPolicy uses: the two calls, the budgets, the current signals, the in-flight set. */
    private readonly api: PolicyApi = (() => {
        const fetcher = this;
        return {
            read: (parent, deadline, signal) => fetcher.call(parent, "getIamPolicy", READ_BODY, deadline, signal),
            write: (parent, policy, updateMask, deadline) => {
                if (fetcher.draining) {
                    return Promise.reject(new IamError(`the provider is shutting down: the policy of ${parentName(parent)} was not changed`,
                        undefined, Code.CANCELLED));
                }
                const write = fetcher.call(parent, "setIamPolicy", { policy: { ...policy, version: 3 }, updateMask }, deadline);
                fetcher.track(write);
                return write;
            },
            get requestTimeoutMs() {
                return fetcher.requestTimeoutMs;
            },
            get requestTimeoutSetting() {
                return fetcher.requestTimeoutSetting;
            },
            get signals() {
                return { reading: fetcher.reading.signal, waiting: fetcher.waiting.signal };
            },
            track: (work) => fetcher.track(work),
            warn: (message) => fetcher.options.warn?.(message),
        };
    })();

    private track(work: Promise<unknown>): void {
        const tracked = work.catch(() => undefined).finally(() => this.inFlight.delete(tracked));
        this.inFlight.add(tracked);
    }

    /**
     * The engine's Cancel: aborts reads in flight and every wait (backoff, token); a write already sent is let
     * finish, so what it reports is what the policy holds. Later calls work again.
     */
    cancelAll(): void {
        for (const c of [this.reading, this.writing, this.waiting]) c.abort();
        this.reading = IamFetcher.controller();
        this.writing = IamFetcher.controller();
        this.waiting = IamFetcher.controller();
    }

    /**
     * Shutdown: reads in flight are dropped, no new write starts, and the writes already sent are awaited with
     * their confirmations, so every write has either completed or not started, and shows when it completed.
     */
    async drain(): Promise<void> {
        this.draining = true;
        this.reading.abort();
        for (const p of this.policies.values()) void p.confirm();
        while (this.inFlight.size) await Promise.all(this.inFlight);
    }

    /** One signal is shared by every request in flight, hence no listener limit. */
    private static controller(): AbortController {
        const c = new AbortController();
        setMaxListeners(0, c.signal);
        return c;
    }

    close(): void {
        this.cancelAll();
        // Writes already sent keep their connections until answered.
        void Promise.all(this.inFlight).then(() => this.agent.destroy());
    }

    /** Request options for one call, built from the base URL once parsed (no URL parsing per request). */
    private target(parent: Parent, verb: Verb): http.RequestOptions {
        const segments = parentName(parent).split("/").map(encodeURIComponent).join("/");
        return {
            protocol: this.base.protocol,
            hostname: this.base.hostname.replace(/^\[|\]$/g, ""),
            port: this.base.port,
            path: `${this.base.pathname}${segments}:${verb}`,
        };
    }

    /** One API call with its retries, within `deadline` (the operation's, when it is part of one). */
    private async call(parent: Parent, verb: Verb, body: object, deadline = Date.now() + this.options.requestTimeoutMs,
        signal = (verb === "setIamPolicy" ? this.writing : this.reading).signal): Promise<Policy> {
        const o = this.options;
        const url = this.target(parent, verb);
        const payload = JSON.stringify(body);
        const started = Date.now();
        let backoff = o.initialBackoffMs ?? 250;
        let last = "";
        for (let attempt = 1; ; attempt++) {
            if (signal.aborted) throw cancelled(verb, parent);
            let answer: Answer | undefined;
            try {
                const authorization = await bounded(o.credentials.authorization(), deadline, signal,
                    () => new IamError(`no access token was obtained from ${o.credentials.source} within the request timeout ` +
                        `(raise ${this.requestTimeoutSetting} to wait longer, or check the token endpoint)`, undefined, Code.DEADLINE_EXCEEDED));
                // A write once sent is never aborted: it may land, and then it must be reported as done.
                answer = await this.send(url, payload, authorization, deadline - Date.now(), verb === "setIamPolicy" ? undefined : signal);
            } catch (e) {
                if (signal.aborted) throw cancelled(verb, parent);
                if (e instanceof IamError) throw e;
                if (e instanceof CredentialsError) throw new IamError(e.message, undefined, Code.UNAUTHENTICATED);
                const code = (e as NodeJS.ErrnoException).code ?? "";
                if (UNREACHABLE[code] && attempt >= 2) {
                    throw new IamError(`cannot reach ${this.base.origin} for ${verb} of ${parentName(parent)}: ${UNREACHABLE[code]}. ` +
                        `Check the endpoint, from ${this.endpointSetting}`, undefined, Code.UNAVAILABLE);
                }
                if (!RETRY_NETWORK.has(code) && !/socket hang up/.test(String(e))) {
                    throw new IamError(`${verb} of ${parentName(parent)} failed: ${redact(String((e as Error).message ?? e))}${untrustedCertificateHint(e)}`,
                        undefined, Code.UNAVAILABLE);
                }
                last = `network error ${code || "socket hang up"}`;
            }
            if (answer) {
                if (answer.status >= 200 && answer.status < 300) return parsePolicy(answer.body, verb, parent);
                if (!RETRY_STATUS.has(answer.status)) throw this.failure(answer, verb, parent);
                last = describeStatus(answer);
            }
            // Jittered exponential backoff ("equal jitter"), at least what Retry-After asks for.
            const jittered = backoff / 2 + Math.random() * (backoff / 2);
            const wait = Math.max(jittered, retryAfterMs(answer?.retryAfter));
            backoff = Math.min(backoff * 2, o.maxBackoffMs ?? 8000);
            if (Date.now() + wait >= deadline) {
                const seconds = ((Date.now() - started) / 1000).toFixed(1);
                throw new IamError(`${verb} of ${parentName(parent)} did not succeed within the request timeout ` +
                    `(${attempt} attempts over ${seconds}s; raise ${this.requestTimeoutSetting} to wait longer). Last answer: ${last}`,
                    answer?.status, answer?.status === 429 ? Code.UNAVAILABLE : Code.DEADLINE_EXCEEDED);
            }
            o.log?.(`retrying ${verb} of ${parentName(parent)} in ${Math.round(wait)}ms after ${last}`);
            await sleep(wait, signal);
        }
    }

    private send(url: http.RequestOptions, payload: string, authorization: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Answer> {
        const headers: http.OutgoingHttpHeaders = {
            "Authorization": authorization,
            "Content-Type": "application/json",
            "Content-Length": Buffer.byteLength(payload),
            "User-Agent": USER_AGENT,
            "Accept": "application/json",
        };
        if (this.options.userProject) headers["X-Goog-User-Project"] = this.options.userProject;
        const transport = url.protocol === "https:" ? https : http;
        return new Promise<Answer>((resolve, reject) => {
            const req = transport.request({ ...url, method: "POST", headers, agent: this.agent, signal }, (res) => {
                const chunks: Buffer[] = [];
                res.on("data", (c: Buffer) => chunks.push(c));
                res.on("error", reject);
                res.on("end", () => resolve({
                    status: res.statusCode ?? 0,
                    retryAfter: res.headers["retry-after"],
                    body: Buffer.concat(chunks).toString("utf8"),
                }));
            });
            req.setTimeout(Math.max(1, timeoutMs), () => req.destroy(Object.assign(new Error("request timed out"), { code: "ETIMEDOUT" })));
            req.on("error", reject);
            req.end(payload);
        });
    }

    /** A 404 that is not Google's word about the resource: the endpoint is wrong, and the user is told how. */
    private notTheApi(answer: Answer, verb: Verb, parent: Parent): IamError {
        const url = `${this.base.origin}${this.target(parent, verb).path}`;
        const err = parseGoogleError(answer.body);
        const what = err.message ? `an error that is not about the service: ${redact(err.message)}`
            : /^\s*</.test(answer.body) ? "a web page" : "a body that is not a Google API error";
        return new IamError(`${url} answered HTTP 404 with ${what}. That URL is not the Service Management API: check ` +
            `the endpoint, ${this.base.href}, from ${this.endpointSetting}. It must be the API's base URL ending in ` +
            "/v1/, e.g. https://servicemanagement.googleapis.com/v1/ or the URL line the emulator prints",
        answer.status, Code.FAILED_PRECONDITION);
    }

    private failure(answer: Answer, verb: Verb, parent: Parent): IamError {
        const name = parentName(parent);
        const status = describeStatus(answer);
        const source = this.options.credentials.source;
        const what = parent.kind === "service"
            ? `service ${JSON.stringify(parent.serviceName)}`
            : `service ${JSON.stringify(parent.serviceName)} (consumer ${JSON.stringify(parent.consumerProject)})`;
        const check = parent.kind === "service" ? "serviceName" : "serviceName and consumerProject";
        switch (answer.status) {
            case 404:
                // Google's word that the service or consumer does not exist; any other 404 (an HTML page, a
                // method the server does not know) means the URL is not the API, and nothing is gone.
                if (!isNotFoundAbout(parent, answer.body)) return this.notTheApi(answer, verb, parent);
                return new IamError(`${what} was not found (${status}): check ${check}, and that ${source} may see the service`,
                    answer.status, Code.NOT_FOUND);
            case 403:
                // Service Management answers a service that does not exist like one the caller may not see.
                return new IamError(`${what} was not found, or ${source} may not use it: Service Management answers both ` +
                    `with 403 (${status}). Check ${check}; if the service exists, grant servicemanagement.services.${verb} ` +
                    "(e.g. roles/servicemanagement.admin on the producer project)", answer.status, Code.PERMISSION_DENIED);
            case 401:
                return new IamError(`the request for ${name} was not authenticated (${status}); credentials used: ${source}. ` +
                    "Check that they are valid and not expired", answer.status, Code.UNAUTHENTICATED);
            case 409:
                return new IamError(`the policy of ${name} changed concurrently (${status})`, answer.status, Code.ABORTED);
            default:
                return new IamError(`${verb} of ${name} was refused (${status})`, answer.status,
                    answer.status === 400 ? Code.INVALID_ARGUMENT : Code.UNKNOWN);
        }
    }
}

/** Whether a 404's body is Google's NOT_FOUND error about this parent (it names the service or the consumer). */
function isNotFoundAbout(parent: Parent, body: string): boolean {
    const err = parseGoogleError(body);
    // A front end's "requested URL … was not found" or "method not found" names the path, not a resource.
    if (err.status !== "NOT_FOUND" || /requested URL|method not found/i.test(err.message ?? "")) return false;
    const text = `${err.message ?? ""} ${JSON.stringify(err.details ?? [])}`;
    return text.includes(parent.serviceName) || (parent.kind === "consumer" && text.includes(parent.consumerProject));
}

function describeStatus(answer: Answer): string {
    const err = parseGoogleError(answer.body);
    const detail = err.message ? `: ${redact(err.message)}` : "";
    return `HTTP ${answer.status}${err.status ? ` ${err.status}` : ""}${detail}`;
}

function retryAfterMs(header: string | undefined): number {
    if (!header) return 0;
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(header);
    return Number.isFinite(at) ? Math.max(0, at - Date.now()) : 0;
}

function parsePolicy(body: string, verb: Verb, parent: Parent): Policy {
    try {
        const p = JSON.parse(body || "{}") as Policy;
        if (typeof p === "object" && p !== null && !Array.isArray(p)) return p;
    } catch {
        // fall through
    }
    throw new IamError(`${verb} of ${parentName(parent)} returned a body that is not a policy`, undefined, Code.UNKNOWN);
}

/** `work`, or the error of `expired()` once the deadline passes, or CANCELLED when `signal` aborts first. */
export function bounded<T>(work: Promise<T>, deadline: number, signal: AbortSignal | undefined, expired: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => finish(() => reject(expired())), Math.max(0, deadline - Date.now()));
        const onAbort = () => finish(() => reject(new IamError("cancelled", undefined, Code.CANCELLED)));
        signal?.addEventListener("abort", onAbort, { once: true });
        function finish(settle: () => void): void {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            settle();
        }
        work.then((v) => finish(() => resolve(v)), (e: unknown) => finish(() => reject(e)));
    });
}

function cancelled(verb: Verb, parent: Parent): IamError {
    return new IamError(`${verb} of ${parentName(parent)} was cancelled`, undefined, Code.CANCELLED);
}
