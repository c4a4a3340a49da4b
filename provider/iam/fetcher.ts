// The one IAM fetcher: every function and resource reads and writes policies through it. It speaks the
// Service Management REST API over keep-alive HTTP, retries what Google says is transient (429, 5xx,
// resets, timeouts) with jittered exponential backoff bounded by `requestTimeout`, and turns failures into
// messages a person can act on. What happens to one policy between a change and its confirmation — batching,
// read sharing (a lookup's, and the read a command's resource Reads share), confirmation — is its ParentPolicy's (parentPolicy.ts); the fetcher keeps one per parent
// while it has work under way (`forget`).

import { setMaxListeners } from "events";
import { checkProperties } from "../declare/check";
import { PropertyMap } from "../declare/properties";
import { describeStatus, failure, FailureContext, quotaSpent } from "./apiErrors";
import { Credentials, CredentialsError } from "./auth";
import { Code, IamError, OutOfTime, parseGoogleError, redact } from "./errors";
import { Grant, keepGrants, someGrant } from "./grants";
import { policyDataProperties } from "./model";
import { Parent, parentName } from "./names";
import { Change, ChangeOptions, Pace, ParentPolicy, PolicyApi, sleep, WriteMayHaveApplied } from "./parentPolicy";
import { Policy } from "./policy";
import { Pacer, QuotaWait, quotaAnswer } from "./quota";
import { Backoff, RETRY, retryAfterMs } from "./retry";
import { untrustedCertificateHint } from "./tls";
import { Answer, credentialTransportProblem, Transport, Verb } from "./transport";

export { USER_AGENT } from "./transport";

export interface FetcherOptions {
    /** Base URL ending in `/` (e.g. https://servicemanagement.googleapis.com/v1/). */
    endpoint: string;
    credentials: Credentials;
    /** Budget for one call, retries included. */
    requestTimeoutMs: number;
    /** How changes to one policy share read-modify-writes (config `batching`; see parentPolicy.ts, `gather`). */
    batching: PolicyApi["batching"];
    /**
     * The settings as the user wrote them, for messages: where the endpoint came from (a config key, an
     * environment variable, or the default) and how to raise the timeout.
     */
    settings?: { endpoint: string; requestTimeout: string; billing: string };
    /** Sent as X-Goog-User-Project (userProjectOverride + billingProject). */
    userProject?: string;
    /** Diagnostics (never given secrets). */
    log?: (message: string) => void;
    /** What a user should know though no call failed (a write that later reads do not show). */
    warn?: (message: string) => void;
}

const READ_BODY = { options: { requestedPolicyVersion: 3 } };
/**
 * See `forget`: the members the snapshots kept may hold in all, about 10 MiB (the bench's reads figure: some 100 bytes of
 * RSS a member): 100 policies of 1,000 members, far more than the policies one command's Reads share at once.
 */
const KEPT_MEMBERS = 100_000;

export class IamFetcher {
    private readonly transport: Transport;
    private readonly failures: FailureContext;
    private readonly policies = new Map<string, ParentPolicy>();
    /** How many calls are using each policy now (see `withPolicy`). */
    private readonly users = new Map<string, number>();
    /** Policies with no work under way kept for their snapshot, oldest first (see `forget`), and their members in all. */
    private readonly kept = new Map<string, { members: number; until: number }>();
    private keptMembers = 0;
    private sweep?: NodeJS.Timeout;
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
    /** Every call's turn under the API's rate quota (quota.ts). */
    private readonly pacer = new Pacer();
    /** The engine's pace across every policy: its slots are shared by them (parentPolicy.ts, `gather`). */
    private readonly pace = new Pace();

    constructor(private readonly options: FetcherOptions) {
        const base = new URL(options.endpoint.endsWith("/") ? options.endpoint : `${options.endpoint}/`);
        const problem = credentialTransportProblem(base);
        if (problem) throw new IamError(`refusing to send a bearer token to ${base.host}: ${problem}`, undefined, Code.INVALID_ARGUMENT);
        this.transport = new Transport(base, options.userProject);
        this.failures = { transport: this.transport, credentialsSource: options.credentials.source, endpointSetting: this.endpointSetting };
    }

    /** The budget of one call, retries included (config `requestTimeout`). */
    get requestTimeoutMs(): number {
        return this.options.requestTimeoutMs;
    }

    /** The timeout setting as the user writes it, for messages that tell them to raise it. */
    get requestTimeoutSetting(): string {
        return this.options.settings?.requestTimeout ?? "cloud:requestTimeout";
    }

    /** The settings a message about the API's quota names. */
    private get quotaSettings(): Parameters<typeof quotaSpent>[3] {
        return {
            requestTimeout: this.requestTimeoutSetting,
            billing: this.options.settings?.billing ?? "cloud:billingProject with cloud:userProjectOverride",
            userProject: this.options.userProject,
        };
    }

    /** Where the endpoint came from, for messages that tell the user to check it. */
    private get endpointSetting(): string {
        return this.options.settings?.endpoint ?? "cloud:serviceManagementCustomEndpoint";
    }

    /**
     * Runs `use` on the life of one parent's policy in this process (parentPolicy.ts); once no call uses it and it
     * has no work under way, it is forgotten (see `forget`).
     */
    private withPolicy<T>(parent: Parent, use: (p: ParentPolicy) => Promise<T>): Promise<T> {
        const name = parentName(parent);
        let p = this.policies.get(name);
        if (!p) this.policies.set(name, (p = new ParentPolicy(parent, this.api)));
        const policy = p;
        this.unkeep(name);
        this.users.set(name, (this.users.get(name) ?? 0) + 1);
        return use(policy).finally(() => {
            const left = (this.users.get(name) ?? 1) - 1;
            if (left > 0) this.users.set(name, left);
            else this.users.delete(name);
            this.forget(policy);
        });
    }

    /**
     * A policy no call uses and with no work under way is forgotten, unless it holds a snapshot that may still stand
     * (parentPolicy.ts, `refresh`): those are kept, oldest first, while they stand and while all those kept hold at
     * most KEPT_MEMBERS members. So memory grows with the policies in use, not with those ever read; dropping a
     * snapshot early only costs the next Read of its policy a read.
     */
    private forget(policy: ParentPolicy): void {
        const name = policy.name;
        if (this.policies.get(name) !== policy || this.users.has(name) || !policy.idle) return;
        this.unkeep(name);
        const kept = policy.kept();
        if (!kept) return void this.policies.delete(name);
        this.kept.set(name, kept);
        this.keptMembers += kept.members;
        this.trim();
    }

    private unkeep(name: string): void {
        const kept = this.kept.get(name);
        if (!kept) return;
        this.kept.delete(name);
        this.keptMembers -= kept.members;
    }

    /** Drops the oldest kept snapshots while they are too many or no longer stand; wakes when the oldest expires. */
    private trim(): void {
        clearTimeout(this.sweep);
        const now = Date.now();
        for (const [name, kept] of this.kept) {
            if (this.keptMembers <= KEPT_MEMBERS && kept.until > now) {
                this.sweep = setTimeout(() => this.trim(), kept.until - now).unref();
                return;
            }
            this.unkeep(name);
            this.policies.delete(name);
        }
    }

    /** A parent's policy at version 3, as ParentPolicy.read gives it (`fresh`: a read that starts now). */
    getIamPolicy(parent: Parent, opts: { fresh?: boolean; deadline?: number } = {}): Promise<Policy> {
        return this.withPolicy(parent, (p) => p.read(opts));
    }

    /** A parent's policy for a resource's Read: the read every Read of it shares in this command (ParentPolicy.refresh). */
    refreshPolicy(parent: Parent): Promise<Policy> {
        return this.withPolicy(parent, (p) => p.refresh());
    }

    /**
     * Applies `change` to a parent's policy in a read-modify-write (ParentPolicy.change): resolves with Google's
     * answer to the write, or the policy as read when nothing needed changing.
     */
    modify(parent: Parent, change: Change, opts?: ChangeOptions): Promise<Policy> {
        return this.withPolicy(parent, (p) => p.change(change, opts));
    }

    /**
     * Removes the grants `drop` picks from a parent's policy (and, with `auditConfigs`, its audit configs), writing
     * nothing when none is there, and resolves once a read shows them gone: what every Delete and the removal of
     * an orphaned write do. `onAttempt` runs before each read-modify-write (a 409 makes another).
     */
    removeGrants(parent: Parent, drop: (g: Grant) => boolean,
        opts: { auditConfigs?: boolean; onAttempt?: () => void } & Pick<ChangeOptions, "record" | "fence"> = {}): Promise<Policy> {
        const left = (p: Policy) => someGrant(p.bindings, drop) || (opts.auditConfigs === true && (p.auditConfigs ?? []).length > 0);
        return this.modify(parent, (current) => {
            opts.onAttempt?.();
            if (!left(current)) return undefined;
            const bindings = keepGrants(current, (g) => !drop(g));
            return opts.auditConfigs ? { bindings, auditConfigs: [] } : { ...current, bindings };
        }, { auditConfigs: opts.auditConfigs, confirm: (p) => !left(p), record: opts.record, fence: opts.fence });
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
                const attempts = { mayHaveApplied: false };
                const write = fetcher.call(parent, "setIamPolicy", { policy: { ...policy, version: 3 }, updateMask }, deadline, undefined, attempts)
                    .catch((e: unknown) => {
                        if (!attempts.mayHaveApplied) throw e;
                        const cause = e instanceof IamError ? e : new IamError(`setIamPolicy of ${parentName(parent)} failed: ${String(e)}`, undefined, Code.UNKNOWN);
                        throw new WriteMayHaveApplied(cause);
                    });
                fetcher.track(write);
                return write;
            },
            get requestTimeoutMs() {
                return fetcher.requestTimeoutMs;
            },
            get requestTimeoutSetting() {
                return fetcher.requestTimeoutSetting;
            },
            get batching() {
                return fetcher.options.batching;
            },
            pace: fetcher.pace,
            quotaWaitMs: () => fetcher.pacer.waitMs(),
            get signals() {
                return { reading: fetcher.reading.signal, waiting: fetcher.waiting.signal };
            },
            track: (work) => fetcher.track(work),
            settled: (policy) => fetcher.forget(policy),
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
     * their confirmations, so every write has either completed or not started, and shows when it completed. Reads
     * asked for after that (what the crash journal checks before it speaks) go out.
     */
    async drain(): Promise<void> {
        this.draining = true;
        this.reading.abort();
        for (const p of this.policies.values()) void p.confirm();
        while (this.inFlight.size) await Promise.all(this.inFlight);
        this.reading = IamFetcher.controller();
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
        void Promise.all(this.inFlight).then(() => this.transport.close());
    }

    /**
     * One API call with its retries, within `deadline` (the operation's, when it is part of one). `attempts` learns
     * whether an attempt may have applied: it was sent and got no answer, or a 5xx (a 4xx refuses before applying).
     */
    private async call(parent: Parent, verb: Verb, body: object, deadline = Date.now() + this.options.requestTimeoutMs,
        signal = (verb === "setIamPolicy" ? this.writing : this.reading).signal, attempts = { mayHaveApplied: false }): Promise<Policy> {
        const o = this.options;
        const attemptMs = o.requestTimeoutMs * RETRY.attemptShare;
        const url = this.transport.target(parent, verb);
        const payload = JSON.stringify(body);
        const started = Date.now();
        const backoff = new Backoff(RETRY.call);
        let last = "";
        for (let attempt = 1; ; attempt++) {
            if (signal.aborted) throw cancelled(verb, parent);
            const turn = await this.pacer.admit(deadline, (ms) => sleep(ms, signal), () => cancelled(verb, parent)).catch((e: unknown) => {
                throw e instanceof QuotaWait ? new OutOfTime(quotaSpent(e, verb, parent, this.quotaSettings), deadline, Date.now() + e.turnInMs) : e;
            });
            let answer: Answer | undefined;
            let sending = false;
            try {
                const known = o.credentials.authorization();
                const authorization = typeof known === "string" ? known : await bounded(known, deadline, signal,
                    () => new IamError(`no access token was obtained from ${o.credentials.source} within the request timeout ` +
                        `(raise ${this.requestTimeoutSetting} to wait longer, or check the token endpoint)`, undefined, Code.DEADLINE_EXCEEDED));
                // A write once sent is never aborted: it may land, and then it must be reported as done. Each attempt
                // has its own timeout (RETRY.attemptShare), so one that hangs is retried within the deadline.
                sending = true;
                answer = await this.transport.send(url, payload, authorization, Math.min(attemptMs, deadline - Date.now()),
                    verb === "setIamPolicy" ? undefined : signal);
            } catch (e) {
                turn.done();
                const code = (e as NodeJS.ErrnoException).code ?? "";
                if (sending && !RETRY.unsent.has(code)) attempts.mayHaveApplied = true;
                if (signal.aborted) throw cancelled(verb, parent);
                if (e instanceof IamError) throw e;
                if (e instanceof CredentialsError) throw new IamError(e.message, undefined, Code.UNAUTHENTICATED);
                if (RETRY.unreachable[code] && attempt >= 2) {
                    throw new IamError(`cannot reach ${this.transport.base.origin} for ${verb} of ${parentName(parent)}: ${RETRY.unreachable[code]}. ` +
                        `Check the endpoint, from ${this.endpointSetting}`, undefined, Code.UNAVAILABLE);
                }
                if (!RETRY.network.has(code) && !/socket hang up/.test(String(e))) {
                    throw new IamError(`${verb} of ${parentName(parent)} failed: ${redact(String((e as Error).message ?? e))}${untrustedCertificateHint(e)}`,
                        undefined, Code.UNAVAILABLE);
                }
                last = `network error ${code || "socket hang up"}`;
            }
            if (answer) {
                // Only a 429's body is read for a quota: a success's body is parsed once, as the policy.
                const quota = answer.status === 429 ? quotaAnswer(answer.status, parseGoogleError(answer.body)) : undefined;
                if (quota) {
                    // Not retried on a schedule: the call waits for its turn under the quota it just learned.
                    turn.refused(quota);
                    o.log?.(`${verb} of ${parentName(parent)} refused for quota (${describeStatus(answer)}); waiting for room`);
                    continue;
                }
                turn.done();
                if (answer.status >= 500) attempts.mayHaveApplied = true;
                if (answer.status >= 200 && answer.status < 300) return parsePolicy(answer.body, verb, parent);
                if (!RETRY.statuses.has(answer.status)) throw failure(answer, verb, parent, this.failures);
                last = describeStatus(answer);
            }
            const retryAfter = retryAfterMs(answer?.retryAfter);
            const wait = backoff.next(retryAfter);
            if (Date.now() + wait >= deadline) {
                const seconds = ((Date.now() - started) / 1000).toFixed(1);
                throw new OutOfTime(new IamError(`${verb} of ${parentName(parent)} did not succeed within the request timeout ` +
                    `(${attempt} attempts over ${seconds}s; raise ${this.requestTimeoutSetting} to wait longer). Last answer: ${last}`,
                    answer?.status, answer?.status === 429 ? Code.UNAVAILABLE : Code.DEADLINE_EXCEEDED), deadline, Date.now() + retryAfter);
            }
            o.log?.(`retrying ${verb} of ${parentName(parent)} in ${Math.round(wait)}ms after ${last}`);
            await sleep(wait, signal);
        }
    }
}

/**
 * The API's answer as a policy, checked against the declaration that types it (model.ts): its shape only, as
 * Google wrote it (no input rule applies to what the API returns; fields this package does not know are kept).
 */
function parsePolicy(body: string, verb: Verb, parent: Parent): Policy {
    let parsed: unknown;
    try {
        parsed = JSON.parse(body || "{}");
    } catch {
        parsed = undefined;
    }
    const notPolicy = (why: string) => new IamError(`${verb} of ${parentName(parent)} returned a body that is not a policy: ${why}`,
        undefined, Code.UNKNOWN);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw notPolicy("not a JSON object");
    const { failures } = checkProperties(policyDataProperties, parsed as PropertyMap, () => false, false, false);
    if (failures.length) throw notPolicy(failures.map((f) => f.reason).join("; "));
    return parsed as Policy;
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
