// Whether a process whose journal is in a bucket still runs, as far as another process can tell: pure, so the window
// is stated and tested once. A process renews its lease (rewrites one object) every LEASE_RENEW_MS, well under GCS's
// one write per second per object; a process whose lease is older than LEASE_WINDOW_MS by the bucket's own clock (the
// objects' `updated` against the server's Date: no two machines' clocks are compared) counts as dead. The window is
// six renewals: a process that a slow or failing bucket keeps from renewing a few times is not taken for dead, and a
// runner that replaces a lost one waits at most half a minute to take over what it left.

/** How often a process rewrites its lease. */
export const LEASE_RENEW_MS = 5000;
/** How long a lease holds without renewal. */
export const LEASE_WINDOW_MS = 30_000;

export interface LeaseView {
    /** What its PID says, where it is on this host and PID namespace (undefined elsewhere: the lease tells). */
    pid?: boolean;
    /** It said it ended (its `closed` object). */
    closed: boolean;
    /** Its latest object's time by the bucket's clock (ms), if any was seen. */
    renewed?: number;
}

/** Whether a process still runs: its PID where that tells, else its lease within the window of the bucket's `now`. */
export function leaseRuns(l: LeaseView, now: number): boolean {
    if (l.pid !== undefined) return l.pid;
    if (l.closed || l.renewed === undefined) return false;
    return now - l.renewed < LEASE_WINDOW_MS;
}
