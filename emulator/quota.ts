// Service Management's rate quota ("Service Infrastructure quotas": 120 API calls per minute) and the error
// Google's front end answers once it is spent: 429 RESOURCE_EXHAUSTED with a google.rpc.ErrorInfo (reason
// RATE_LIMIT_EXCEEDED and the quota's metric, limit and consumer) and a google.rpc.Help link to ask for more,
// as Google's API error model (AIP-193) and its RATE_LIMIT_EXCEEDED reason (google/api/error_reason.proto)
// describe it. Google documents no Retry-After header for quota errors, so this refusal sends none. (The 429
// that fault injection answers, in server.ts, is another thing: a transient refusal that names no limit.)

import { createHash } from "crypto";
import { ApiError, errorInfo, SERVICE_MANAGEMENT } from "./errors";
import { DEFAULT_PROJECT } from "./tokens";

const QUOTA_WINDOW_MS = 60_000;

/**
 * The consumer a call is charged to: the project its X-Goog-User-Project header names. Google charges a call
 * without one to the project the credentials belong to, which the emulator does not track per token: such
 * calls all share one bucket, named after the project of the keys `--mint-key` writes by default, whatever
 * their credentials.
 */
export function consumerOf(userProject: string | undefined): string {
    return userProject || DEFAULT_PROJECT;
}

/** Counts admitted calls per consumer in a rolling window; calls it refuses are not counted. */
export class RateQuota {
    /** Admission times per consumer, oldest first; never more than `limit` of them. */
    private readonly admitted = new Map<string, number[]>();

    constructor(readonly limit: number, private readonly now: () => number = Date.now) {
        if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`quota per minute must be a whole number ≥ 1, got ${limit}`);
    }

    /** Counts a call of `consumer` and returns true, or returns false when the window already holds `limit`. */
    admit(consumer: string): boolean {
        const t = this.now();
        let times = this.admitted.get(consumer);
        if (!times) this.admitted.set(consumer, (times = []));
        let expired = 0;
        while (expired < times.length && times[expired] <= t - QUOTA_WINDOW_MS) expired++;
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
function projectNumber(projectId: string): string {
    const n = createHash("sha256").update(projectId).digest().readBigUInt64BE() % 900_000_000_000n;
    return String(100_000_000_000n + n);
}

/** Google's answer to a call past the rate quota of `consumer`. */
export function quotaExceeded(consumer: string, limit: number): ApiError {
    const number = projectNumber(consumer);
    return new ApiError(429, "RESOURCE_EXHAUSTED",
        "Quota exceeded for quota metric 'Default requests' and limit 'Default requests per minute' of " +
        `service '${SERVICE_MANAGEMENT}' for consumer 'project_number:${number}'.`,
        [
            errorInfo("RATE_LIMIT_EXCEEDED", {
                service: SERVICE_MANAGEMENT,
                consumer: `projects/${number}`,
                quota_metric: `${SERVICE_MANAGEMENT}/default_requests`,
                quota_limit: "DefaultRequestsPerMinutePerProject",
                quota_limit_value: String(limit),
                quota_location: "global",
            }),
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                links: [{ description: "Request a higher quota limit.", url: "https://cloud.google.com/docs/quotas/help/request_increase" }],
            },
        ]);
}
