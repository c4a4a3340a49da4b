// The retry policy, as data: which answers and network errors are transient, how long to wait between
// attempts, and how writes that lost a race (409) back off. Every call (fetcher.ts) and every conflict
// (parentPolicy.ts) follows it; the budget of both is the caller's deadline (`requestTimeout`).

export const RETRY = {
    /** Answers Google documents as transient. */
    statuses: new Set([429, 500, 502, 503, 504]),
    /** Network errors worth another attempt. */
    network: new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ECONNABORTED", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH"]),
    /**
     * Network errors raised before a request could leave (no connection, no address): the server never saw it. Any
     * other failure of a sent request (a reset, a timeout) leaves open whether Google applied it.
     */
    unsent: new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]),
    /** Network errors that mean a wrong endpoint far more often than a blip: one quick retry, then fail naming it. */
    unreachable: { ECONNREFUSED: "the connection was refused", ENOTFOUND: "the host name is unknown" } as Record<string, string>,
    /**
     * Each attempt's own timeout, as a share of the call's budget (`requestTimeout`): an attempt that never answers
     * (a connection dropped without a reset, a stuck front end) is given up and retried while the budget lasts,
     * instead of spending all of it. A third lets a hung attempt and a full second one fit, and most of a third after
     * the backoffs (at most 0.25 s, then 0.5 s; the last attempt gets what is left), while any answer Google gives in
     * time keeps ample room: IAM calls answer in well under a second, and an attempt gets 40 s at the default 120 s.
     */
    attemptShare: 1 / 3,
    /** Backoff between attempts of one call. */
    call: { firstMs: 250, maxMs: 8000 },
    /** Backoff before redoing a read-modify-write refused with 409 ABORTED, as Terraform's IAM writers do. */
    conflict: { firstMs: 1000, maxMs: 16_000 },
    /** Pause of every call when quota answers come though this process's own calls leave room (quota.ts). */
    quota: { firstMs: 1000, maxMs: 30_000 },
} as const;

/** Jittered exponential backoff ("equal jitter"): each wait is half the step plus a random half; the step doubles up to a cap. */
export class Backoff {
    private step: number;

    constructor(private readonly schedule: { firstMs: number; maxMs: number }) {
        this.step = schedule.firstMs;
    }

    /** Starts the schedule over. */
    reset(): void {
        this.step = this.schedule.firstMs;
    }

    /** The next wait, at least `atLeastMs` (what a Retry-After header asks for). */
    next(atLeastMs = 0): number {
        const wait = this.step / 2 + Math.random() * (this.step / 2);
        this.step = Math.min(this.step * 2, this.schedule.maxMs);
        return Math.max(wait, atLeastMs);
    }
}

/** A Retry-After header (seconds, or an HTTP date) in milliseconds; 0 when absent or unreadable. */
export function retryAfterMs(header: string | undefined): number {
    if (!header) return 0;
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(header);
    return Number.isFinite(at) ? Math.max(0, at - Date.now()) : 0;
}
