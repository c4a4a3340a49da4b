// The API's rate quota as this process meets it. Google gives the Service Management API a per-minute quota of
// calls per consumer project (120 by default) and answers a call beyond it with 429 RESOURCE_EXHAUSTED and an
// ErrorInfo whose reason is RATE_LIMIT_EXCEEDED, naming the limit. Retrying such calls on a backoff schedule
// only spends the next minute's quota on refusals; instead every call passes through one Pacer:
//
//   unknown  No quota answer yet: calls go at once (most stacks never meet the quota, and a raised quota is
//            not slowed down by a guess).
//   learned  After the first quota answer, the limit is Google's (quota_limit_value) and calls are admitted in
//            arrival order so that at most that many are sent in any rolling window (a minute): the strictest
//            reading of "per minute", so pacing holds whether Google counts in fixed or rolling windows. A call
//            refused for quota gives its place back (refused calls do not count), and waits its turn again.
//   shared   A quota answer while this process's own calls leave room means someone else spends the same
//            quota (another plugin process, gcloud): admission then pauses on a backoff (RETRY.quota) that
//            grows with each such answer and starts over once a call gets through.
//
// A call whose turn would come after its deadline (requestTimeout) fails at once with a message that says it is
// the API's quota, whose, and what to do.

import { Backoff, RETRY } from "./retry";

/** What Google's quota answer says (its ErrorInfo metadata), as far as it says it. */
export interface QuotaAnswer {
    /** Calls allowed per window (quota_limit_value). */
    limit: number;
    windowMs: number;
    /** The quota limit's name (quota_limit), e.g. DefaultRequestsPerMinutePerProject. */
    limitName?: string;
    /** Whose quota: the consumer, e.g. `projects/123456` (metadata consumer). */
    consumer?: string;
}

/** The string metadata of the first google.rpc.ErrorInfo among an error's details. */
function errorInfoMetadata(details: readonly unknown[]): Map<string, string> {
    for (const d of details) {
        if (typeof d !== "object" || d === null || !("@type" in d) || d["@type"] !== "type.googleapis.com/google.rpc.ErrorInfo") continue;
        const meta = "metadata" in d && typeof d.metadata === "object" && d.metadata !== null ? d.metadata : {};
        return new Map(Object.entries(meta).filter((e): e is [string, string] => typeof e[1] === "string"));
    }
    return new Map();
}

/**
 * Google's quota answer, from a 429's error (status RESOURCE_EXHAUSTED whose ErrorInfo names the limit's value):
 * undefined for any other 429, which is retried as a transient failure.
 */
export function quotaAnswer(status: number, error: { status?: string; message?: string; details?: unknown[] }): QuotaAnswer | undefined {
    if (status !== 429 || error.status !== "RESOURCE_EXHAUSTED") return undefined;
    const meta = errorInfoMetadata(error.details ?? []);
    const limit = Number(meta.get("quota_limit_value"));
    const limitName = meta.get("quota_limit");
    const perDay = /day/i.test(`${limitName ?? ""} ${error.message ?? ""}`);
    if (!Number.isInteger(limit) || limit <= 0) return undefined;
    return {
        limit,
        windowMs: perDay ? 86_400_000 : 60_000,
        limitName,
        consumer: meta.get("consumer"),
    };
}

/** Why a call was not admitted in time: what the quota is and when the call's turn would have come. */
export class QuotaWait extends Error {
    constructor(readonly quota: QuotaAnswer, readonly turnInMs: number) {
        super("the API's quota leaves no room before the deadline");
    }
}

/** A call's place in the quota: give it back when Google refused the call for quota. */
export interface Admission {
    refused(answer: QuotaAnswer): void;
    /** The call got through (or failed otherwise): a shared-quota pause starts over. */
    done(): void;
}

export class Pacer {
    private quota?: QuotaAnswer;
    /** When calls were sent that Google has not refused for quota, oldest first (only within the window). */
    private readonly sent: number[] = [];
    private pausedUntil = 0;
    private readonly pause = new Backoff(RETRY.quota);
    /** Admissions are taken in arrival order: each waits for the one before it. */
    private turn: Promise<unknown> = Promise.resolve();
    /** Quota answers seen (what a test of the pacing counts). */
    refusals = 0;

    constructor(private readonly now: () => number = Date.now) {}

    /**
     * Waits for a call's turn, or rejects with QuotaWait when the turn would come after `deadline`, or with the
     * result of `sleep` returning false (cancelled) as `cancelled()`.
     */
    async admit(deadline: number, sleep: (ms: number) => Promise<boolean>, cancelled: () => Error): Promise<Admission> {
        const quota = this.quota;
        if (!quota) return this.record(); // a pause is only ever set once a quota answer came
        const mine = this.turn.then(() => this.waitForRoom(quota, deadline, sleep, cancelled));
        this.turn = mine.catch(() => undefined);
        return mine;
    }

    /** How long (ms) until a call would be admitted, once a quota is known (0: now, or no quota known). */
    waitMs(): number {
        const quota = this.quota;
        if (!quota) return 0;
        const now = this.now();
        while (this.sent.length && this.sent[0] <= now - quota.windowMs) this.sent.shift();
        return Math.max(0, this.roomAt(quota) - now);
    }

    /** When the next call fits: after a pause, and once the oldest call of a full window has left it. */
    private roomAt(quota: QuotaAnswer): number {
        // The oldest call leaves the window a little after windowMs (clocks differ; Google counts on arrival).
        return Math.max(this.pausedUntil, this.sent.length >= quota.limit ? this.sent[0] + quota.windowMs + 250 : 0);
    }

    private async waitForRoom(learned: QuotaAnswer, deadline: number, sleep: (ms: number) => Promise<boolean>, cancelled: () => Error):
        Promise<Admission> {
        for (;;) {
            const now = this.now();
            const quota = this.quota ?? learned; // a later answer may have named another limit
            while (this.sent.length && this.sent[0] <= now - quota.windowMs) this.sent.shift();
            const at = this.roomAt(quota);
            if (at <= now) return this.record();
            if (at > deadline) throw new QuotaWait(quota, at - now);
            if (!await sleep(at - now)) throw cancelled();
        }
    }

    private record(): Admission {
        const at = this.now();
        // Only the last window matters (a minute, until Google names another).
        while (this.sent.length && this.sent[0] <= at - (this.quota?.windowMs ?? 60_000)) this.sent.shift();
        this.sent.push(at);
        return {
            refused: (answer) => {
                this.refusals++;
                const i = this.sent.indexOf(at);
                if (i >= 0) this.sent.splice(i, 1);
                const windowStart = this.now() - answer.windowMs;
                const ours = this.sent.filter((t) => t > windowStart).length;
                this.quota = answer;
                // Our own calls do not fill the quota: someone else's do. Pause for all, longer each time.
                if (ours < answer.limit) this.pausedUntil = Math.max(this.pausedUntil, this.now() + this.pause.next());
            },
            done: () => this.pause.reset(),
        };
    }
}
