// Service Management's rate quota ("Service Infrastructure quotas": 120 API calls per minute) and the error
// Google's front end answers once it is spent: 429 RESOURCE_EXHAUSTED with a google.rpc.ErrorInfo (reason
// RATE_LIMIT_EXCEEDED and the quota's metric, limit and consumer) and a google.rpc.Help link to ask for more,
// as Google's API error model (AIP-193) and its RATE_LIMIT_EXCEEDED reason (google/api/error_reason.proto)
// describe it. Google documents no Retry-After header for quota errors, so none is sent.

import { createHash } from "crypto";

export const QUOTA_WINDOW_MS = 60_000;
const SERVICE = "servicemanagement.googleapis.com";
/**
 * The bucket of calls sent without X-Goog-User-Project: Google bills them to the credentials' project, which
 * the emulator does not track per token; they share this project (that of the keys `--mint-key` writes).
 */
export const DEFAULT_CONSUMER = "emulator-project";

/** Counts admitted calls per consumer in a rolling window; calls it refuses are not counted. */
export class RateQuota {
    /** Admission times per consumer, oldest first; never more than `limit` of them. */
    private readonly admitted = new Map<string, number[]>();

    constructor(
        readonly limit: number,
        private readonly now: () => number = Date.now,
        private readonly windowMs: number = QUOTA_WINDOW_MS,
    ) {
        if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`quota per minute must be a whole number ≥ 1, got ${limit}`);
    }

    /** Counts a call of `consumer` and returns true, or returns false when the window already holds `limit`. */
    admit(consumer: string): boolean {
        const t = this.now();
        let times = this.admitted.get(consumer);
        if (!times) this.admitted.set(consumer, (times = []));
        let expired = 0;
        while (expired < times.length && times[expired] <= t - this.windowMs) expired++;
        if (expired) times.splice(0, expired);
        if (times.length >= this.limit) return false;
        times.push(t);
        return true;
    }
}

/**
 * The emulator has project IDs but no project numbers, and Google's quota errors name the consumer by number:
 * a stable 12-digit number derived from the ID stands in for it.
 */
export function projectNumber(projectId: string): string {
    const n = createHash("sha256").update(projectId).digest().readBigUInt64BE() % 900_000_000_000n;
    return String(100_000_000_000n + n);
}

/** The `error` of Google's answer to a call past the rate quota of `consumer`. */
export function quotaExceeded(consumer: string, limit: number): { message: string; details: object[] } {
    const number = projectNumber(consumer);
    return {
        message: "Quota exceeded for quota metric 'Default requests' and limit 'Default requests per minute' of " +
            `service '${SERVICE}' for consumer 'project_number:${number}'.`,
        details: [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                reason: "RATE_LIMIT_EXCEEDED",
                domain: "googleapis.com",
                metadata: {
                    service: SERVICE,
                    consumer: `projects/${number}`,
                    quota_metric: `${SERVICE}/default_requests`,
                    quota_limit: "DefaultRequestsPerMinutePerProject",
                    quota_limit_value: String(limit),
                    quota_location: "global",
                },
            },
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                links: [{ description: "Request a higher quota limit.", url: "https://cloud.google.com/docs/quotas/help/request_increase" }],
            },
        ],
    };
}
