// One policy's life in this process. Every read and write of one parent (a service, or a consumer of one) goes
// through its ParentPolicy, which holds all there is to know between a change arriving and its write being
// confirmed. The fetcher (fetcher.ts) keeps one per parent while it has work under way (see idle) and does the HTTP
// calls.
//
// What it holds:
//   waiting      changes queued for the next cycle
//   running      whether a cycle loop is under way (gathering, reading, writing)
//   last         what the next cycle starts from when batching is enabled: the policy as the last cycle left it
//                (Google's answer to its write, or its read), kept only while changes keep coming; or, for a loop's
//                first cycle, a read begun when the loop began
//   pace         when changes arrive: the last arrival, the typical gap between arrivals, and the most changes
//                outstanding at once (see gather); the fetcher keeps one more across all its policies
//   writing      the write in flight
//   unconfirmed  the last write answered, while its confirmation has not ended, and what a read must show for it
//   unshown      what a read must show for the last write, once its confirmation ended with no read showing it
//   shared       a lookup's read in flight that identical lookups join
//   snapshot     the read resources' Reads share (see refresh): in flight, or answered and when
//
// The rules, each written once below (the names are the methods'):
//   join      A change joins `waiting` and is answered with Google's answer to the write that carries it (not
//             when that write is confirmed). A cycle loop starts if none runs. A change waiting past its
//             requestTimeout fails, saying whether other changes held it up.
//   gather    A cycle waits for company while the engine is still sending (config `batching.sendAfter`, 40 ms
//             unless set, is the least the first batch of a loop waits). It goes when no change has come for a pause
//             of twice the typical gap between arrivals (the engine's own pace: with hundreds of resources it saves
//             its checkpoint before and after every step, so changes trickle in); after a cycle, already after one
//             gap once as many wait as this policy ever had outstanding at once (the engine's parallelism as this
//             policy meets it: it sends nothing more until it hears back); already after one gap of the fetcher's
//             once every policy's waiting and written changes are again as many as were ever outstanding at once (the
//             engine's slots are shared: spread over several policies, each holds a few, and none is answered
//             until one policy writes); or once the oldest has waited HOLD_MS (a quarter of the request timeout if
//             that is less). It sleeps until the next arrival or the next moment a rule can hold, never polls: a
//             long run at the engine's pace costs no CPU while it waits.
//             After a cycle the loop lingers for the next change as long as the engine takes to save the steps
//             answered and send the next (twice a gap per change answered), keeping the policy it wrote: the next cycle needs no read. With the API's
//             quota learned, a cycle waits for its turn before it takes its batch, so changes that come meanwhile
//             join it. With `batching.enableBatching` false there is no gathering: each cycle takes the oldest
//             change alone, so every change gets its own read and write, in arrival order.
//   cycle     One read (none when `last` is set and batching is enabled: the etag still guards the write; with
//             batching, a loop's first read begins with the loop and runs while its first batch gathers), every
//             change applied in arrival order (each a pure function of the policy: it is run again after a 409 or
//             a split), one write with the read's etag. A 409 redoes the whole batch from a fresh read after a
//             jittered backoff (retry.ts: RETRY.conflict), within the earliest caller's deadline. A 400 on a batch
//             of several is narrowed down by halves, so only the refused change fails. A write is noted as never
//             applied (the journal's undo) only when no attempt of it can have applied: see `neverApplied`.
//   wrote     Every write answered becomes the unconfirmed one, whatever became of the one before it meanwhile
//             (its confirmation may have ended during the write), and ends what an earlier write left unshown (it
//             was accepted on the etag of what its cycle read). A write accepted on the etag of the write it replaces
//             confirms that one (the policy was still that write's when this one landed); otherwise that one is
//             confirmed by reading. A write's end, answered or failed, is applied in one step: it is no longer in
//             flight, the snapshot and the shared read are dropped (they may have begun before it) and, answered,
//             it is the unconfirmed one; nothing waiting for the write resumes in between.
//   confirm   The unconfirmed write is read back until a read shows it (at most CONFIRM_READS reads,
//             CONFIRM_INTERVAL_MS apart): when the changes stop, when a read of the parent comes, or at
//             shutdown. The read that shows it becomes the snapshot if no write was sent since. If none shows it
//             (another writer may have replaced it: the user is warned), or the re-reads fail or are cancelled,
//             the confirmation gave up: it gives no policy, and the write is unshown until a read shows it.
//   within    A read shared by several callers runs within the deadline of the one that began it; each caller
//             keeps its own. When the shared read ran out of time (its retries, a Retry-After or its turn under
//             the quota reaching past that deadline: errors.ts, OutOfTime), a caller whose own deadline is later
//             tries again, within its own, as soon as Google lets it (after the Retry-After, at the quota's turn)
//             if that is before its deadline. Any other failure fails every caller that shared it.
//   read      A lookup waits for the unconfirmed write's confirmation and gets the read that showed it (or, if it
//             gave up, reads anew); otherwise it joins the shared read in flight, unless it asks for a fresh one:
//             never older than this process's last write.
//   refresh   A resource's Read (a refresh, an import) takes the snapshot while it stands: in flight, or answered
//             at most SNAPSHOT_MS before the Read came; otherwise it begins one. A Read that comes while a write is
//             in flight waits for it; while a write is unconfirmed, it gets the read that confirms it, or, if the
//             confirmation gave up, goes on as if there had been none. An answer that does not show an unshown
//             write goes to the Reads that joined its read but is no snapshot: the next Read asks again. Hence,
//             for every Read:
//             - never older than its engine run's start (the engine starts a plugin for each run, a command's
//               preview and its update being two, and each Configure starts a new fetcher), nor answered more
//               than SNAPSHOT_MS before the Read came;
//             - never older than any write of this process, answered or in flight, nor than a confirmation's last
//               read that did not show it: it sees that write or asks Google again. A write answered while a Read
//               waits for the snapshot's answer is concurrent with that Read, which may take either side of it;
//             - never older than an earlier Read of the same resource: the snapshot is only ever replaced by a read
//               begun later;
//             - a snapshot read that fails is dropped, and fails each Read that joined it unless `within` lets it
//               try again (each names its own resource: the resource layer says which).
//             So the Reads of N resources of one policy cost one read per engine run as long as that run's Reads of
//             it come within SNAPSHOT_MS of its answer (docs/design/reads.md): `pulumi refresh --yes` and `pulumi up
//             --refresh --yes` make two (their preview's and their update's), with or without the API's quota.
//   idle      With nothing waiting or running, no write in flight, unconfirmed or unshown, and no read in flight,
//             a policy has no work under way: the fetcher forgets it, and its snapshot with it (fetcher.ts,
//             `forget`: an answered snapshot is kept while it stands, within a budget across policies).
//   cancel    The engine's Cancel: reads, waits and sleeps (gathering, backoff, confirmation) stop; changes not
//             yet written fail; a write already sent is let finish, so what it reports is what the policy holds.
//   shutdown  Reads in flight are dropped, no new write starts, and the writes already sent and their
//             confirmations are awaited (the fetcher's drain).

import { Code, IamError, OutOfTime } from "./errors";
import { Parent, parentName } from "./names";
import { Policy } from "./policy";
import { Backoff, RETRY } from "./retry";

/**
 * The failure of a write one attempt of which may have applied: it got no answer (a timeout, a lost connection) or
 * a 5xx, so Google may have applied it though a later attempt was refused (a 409: the etag it changed) or the call
 * gave up. Such a write is never taken for one that did not happen.
 */
export class WriteMayHaveApplied extends IamError {
    constructor(cause: IamError) {
        super(`${cause.message}. An attempt of this write got no answer or a server error, so it may have been ` +
            "applied: `pulumi refresh` shows the policy as it is", cause.httpStatus, cause.code);
    }
}

/**
 * Whether a write's failure proves that no attempt of it applied: every attempt was refused before Google could
 * apply it (a 4xx, including on the first attempt), or it was never sent (CANCELLED). Anything else, or one attempt
 * that may have applied (WriteMayHaveApplied), leaves its outcome open.
 */
export function neverApplied(e: unknown): boolean {
    if (!(e instanceof IamError) || e instanceof WriteMayHaveApplied) return false;
    return (e.httpStatus !== undefined && e.httpStatus < 500) || e.code === Code.CANCELLED;
}

/** What a ParentPolicy needs of the fetcher: its calls, budgets, signals and diagnostics. */
export interface PolicyApi {
    /** getIamPolicy at version 3, with the fetcher's retries, within `deadline`; stops when `signal` aborts. */
    read(parent: Parent, deadline: number, signal: AbortSignal): Promise<Policy>;
    /**
     * setIamPolicy at version 3 with `updateMask`; once sent, never aborted. Rejects (CANCELLED) when shutting down,
     * and with a WriteMayHaveApplied when an attempt may have applied.
     */
    write(parent: Parent, policy: Policy, updateMask: string, deadline: number): Promise<Policy>;
    readonly requestTimeoutMs: number;
    /** The timeout setting as the user writes it (for messages). */
    readonly requestTimeoutSetting: string;
    /** Config `batching`: see `gather`. */
    readonly batching: Batching;
    /** The pace of every policy of the fetcher together (see `gather`). */
    readonly pace?: Pace;
    /** How long (ms) until the API's quota admits a call, when it is known to be the limit (0: now). */
    quotaWaitMs?(): number;
    /** Aborted by the engine's Cancel (and, for `reading`, by shutdown); replaced afterwards. */
    readonly signals: { reading: AbortSignal; waiting: AbortSignal };
    /** Keeps work a shutdown must wait for (writes sent, confirmations). */
    track(work: Promise<unknown>): void;
    /** Told when some work of `policy` ended: it may have none under way now (see `idle`). */
    settled?(policy: ParentPolicy): void;
    warn?(message: string): void;
}

export interface ChangeOptions {
    /** True when a policy shows the change: what confirms the write (checked on reads after it). */
    confirm?: (policy: Policy) => boolean;
    /** The fields the change writes besides the bindings: `auditConfigs` for a whole policy. */
    auditConfigs?: boolean;
    /**
     * Told, before a write is sent, what the parent's policy was and what this change makes of it (a crash
     * journal). Returns what to call when the write never applied (`neverApplied`), and what the write must wait
     * for before it is sent (the journal on disk). `deadline`: no attempt of the write is sent after it.
     */
    record?: (parent: Parent, before: Policy, after: Policy, deadline: number) => Recorded;
    /**
     * Whether a change that leaves `current` as it is writes it all the same (a crash journal's fence: an unchanged
     * write moves the etag, so a write another process sent with that etag as it died can no longer land).
     */
    fence?: (parent: Parent, current: Policy) => boolean;
}

/** What recording a change gave: its undo, what its write waits for, and what to tell of Google's answer to it. */
export interface Recorded {
    undo(): void;
    /** Google accepted the write: `written` is the policy as it now is. */
    landed(written: Policy): void;
    /** Resolves once the record is durable (never rejects: a record that cannot be kept is the recorder's to report). */
    durable: Promise<void>;
}

/** A change to a policy: the policy to write, or undefined when the current one already says what is wanted. */
export type Change = (current: Policy) => Policy | undefined;

/** Config `batching` as a ParentPolicy uses it (see `gather`). */
export interface Batching {
    /** False: every change gets a cycle of its own, with its own read, in arrival order. */
    enabled: boolean;
    /** The gathering window before a cycle. */
    sendAfterMs: number;
}

/** See `gather`: the longest a change waits for company; a pause longer than BURST_GAP_MS starts a new burst. */
const HOLD_MS = 2000;
const BURST_GAP_MS = 2000;
/** See `confirm`. */
const CONFIRM_READS = 5;
const CONFIRM_INTERVAL_MS = 500;
/** See `refresh`: how long after its answer a snapshot may stand for the policy (docs/design/reads.md says why 10 s). */
export const SNAPSHOT_MS = 10_000;

/** One caller's change, waiting for (or in) a cycle. */
interface Pending {
    change: Change;
    opts: ChangeOptions;
    /** The caller's own deadline (its requestTimeout from when it asked). */
    deadline: number;
    /** When it arrived. */
    at: number;
    resolve(policy: Policy): void;
    reject(error: unknown): void;
}

/** A write not confirmed yet: what it wrote, and what a policy must show for it. */
interface Unconfirmed {
    written: Policy;
    shows(policy: Policy): boolean;
    /** The confirming reads, once started. */
    confirmation?: Promise<Policy | undefined>;
}

/** See `refresh`: a read the resources' Reads share, and when it was answered (unset while in flight). */
interface Snapshot {
    read: Promise<Policy>;
    answeredAt?: number;
    /** The members it holds: what keeping it costs (see `kept`). */
    members: number;
}

/** See `refresh`: whether a Read sent at `now` may take `snapshot` (in flight, or answered at most SNAPSHOT_MS ago). */
export function stands(snapshot: Snapshot, now: number): boolean {
    return snapshot.answeredAt === undefined || now - snapshot.answeredAt <= SNAPSHOT_MS;
}

function membersOf(policy: Policy): number {
    return (policy.bindings ?? []).reduce((n, b) => n + b.members.length, 0);
}

type Outcome = { policy: Policy } | { error: unknown };

/**
 * Waits `ms`, or less when `signal` aborts (then resolves false) or, given `wakers`, when one of them is called
 * (each waiter puts its waker in the set while it waits).
 */
export function sleep(ms: number, signal: AbortSignal, wakers?: Set<() => void>): Promise<boolean> {
    return new Promise((resolve) => {
        if (signal.aborted) return resolve(false);
        const timer = setTimeout(() => done(true), ms);
        function done(slept: boolean): void {
            clearTimeout(timer);
            signal.removeEventListener("abort", onAbort);
            wakers?.delete(wake);
            resolve(slept);
        }
        const onAbort = () => done(false);
        const wake = () => done(true);
        wakers?.add(wake);
        signal.addEventListener("abort", onAbort, { once: true });
    });
}

function cancelled(name: string): IamError {
    return new IamError(`the change to the policy of ${name} was cancelled before it was sent`, undefined, Code.CANCELLED);
}

/**
 * See `pace`: when changes arrive and how many are outstanding (waiting or in a write) — one per policy, and one in
 * the fetcher across its policies.
 */
export class Pace {
    lastArrival = 0;
    /** The typical gap between arrivals (the engine's pace); a pause past BURST_GAP_MS forgets it. */
    typicalGap?: number;
    /** The most changes ever outstanding at once: the engine's parallelism, as far as these changes meet it. */
    private peak = 0;
    private count = 0;
    /**
     * Whether the count has fallen below `peak` since it was last raised: until then the burst that set it may
     * still be rising (each arrival sets a new peak), so reaching it says nothing.
     */
    private settled = false;
    /** Gatherings asleep until the next arrival (see `next`). */
    private readonly sleepers = new Set<() => void>();

    arrived(now: number): void {
        const gap = now - this.lastArrival;
        this.typicalGap = gap >= BURST_GAP_MS ? undefined : this.typicalGap === undefined ? gap : 0.8 * this.typicalGap + 0.2 * gap;
        this.lastArrival = now;
        for (const wake of [...this.sleepers]) wake();
    }

    /**
     * When a typical gap will have passed without an arrival. The gap includes the round trips (a write, then the
     * engine saving its answers): a wait of only the gap between sends let a peak learned too low hold batches
     * there (a destroy of 1,000 Members at 4.4 per write).
     */
    get quietAt(): number {
        return this.lastArrival + (this.typicalGap ?? 0);
    }

    /**
     * Waits for the next arrival, at most `ms`; false when `signal` aborts. Gathering sleeps on it instead of
     * polling: an arrival or the passing of time is all that changes what its rules say.
     */
    next(ms: number, signal: AbortSignal): Promise<boolean> {
        return sleep(Math.max(1, ms), signal, this.sleepers);
    }

    outstanding(delta: number): void {
        this.count += delta;
        if (this.count > this.peak) (this.peak = this.count), (this.settled = false);
        else if (this.count < this.peak) this.settled = true;
    }

    /**
     * Whether `here` changes (all outstanding, unless said) are again as many as were ever outstanding at once (a
     * ceiling met before, not one still rising): once none has come for a typical gap (`quietAt`), the engine has
     * nothing more to send until it hears back.
     */
    full(here = this.count): boolean {
        return this.settled && this.peak >= 2 && here >= this.peak;
    }
}

export class ParentPolicy {
    readonly name: string;
    private waiting: Pending[] = [];
    private running = false;
    /** A cycle is reading or writing now, and how many cycles ran (for the timeout's message). */
    private inCycle = false;
    private cycles = 0;
    private last?: Promise<Policy>;
    /** See `pace`. */
    private readonly pace = new Pace();
    /** How many changes the last cycle answered. */
    private answered = 0;
    private inBatch = 0;
    /** waiting + inBatch as the Paces were last told (see counted). */
    private counting = 0;
    private unconfirmed?: Unconfirmed;
    /** See `confirm`: what a read must show for the last write, once its confirmation ended without a read showing it. */
    private unshown?: (policy: Policy) => boolean;
    private shared?: Promise<Policy>;
    /** See `refresh`. */
    private snapshot?: Snapshot;
    /** The write in flight: settles once its end is applied (see `wrote`). */
    private writing?: Promise<void>;

    constructor(readonly parent: Parent, private readonly api: PolicyApi) {
        this.name = parentName(parent);
    }

    /**
     * Whether no work is under way (nothing queued, running, written and unconfirmed or unshown, or read in flight): the
     * fetcher may forget this parent. An answered snapshot is no work: the fetcher keeps it while it may (see `kept`).
     */
    get idle(): boolean {
        return !this.running && this.waiting.length === 0 && !this.writing && !this.unconfirmed && !this.unshown &&
            !this.shared && (this.snapshot === undefined || this.snapshot.answeredAt !== undefined);
    }

    /**
     * See `refresh`: the answered snapshot this policy holds while it may still stand for it, as what it costs to keep
     * (its members) and until when; a snapshot past that is dropped.
     */
    kept(now = Date.now()): { members: number; until: number } | undefined {
        const s = this.snapshot;
        if (s?.answeredAt === undefined) return undefined;
        if (!stands(s, now)) return void (this.snapshot = undefined);
        return { members: s.members, until: s.answeredAt + SNAPSHOT_MS };
    }

    /** Tells the fetcher that some work ended. */
    private settled(): void {
        this.api.settled?.(this);
    }

    /** See `within`: `attempt` (which may join a read another caller began) for a caller whose deadline is `deadline`. */
    private async within(deadline: number, attempt: () => Promise<Policy>): Promise<Policy> {
        for (;;) {
            try {
                return await attempt();
            } catch (e) {
                if (!(e instanceof OutOfTime) || e.deadline >= deadline || e.retryAt >= deadline) throw e;
                if (!await sleep(e.retryAt - Date.now(), this.api.signals.reading)) throw e;
            }
        }
    }

    // --- read -----------------------------------------------------------------------------------------------

    /** The policy now: after the unconfirmed write's confirmation, from a shared read, or (`fresh`) a read that starts now. */
    read(opts: { fresh?: boolean; deadline?: number } = {}): Promise<Policy> {
        const deadline = opts.deadline ?? Date.now() + this.api.requestTimeoutMs;
        return this.within(deadline, () => this.readOnce(opts.fresh === true, deadline));
    }

    private readOnce(fresh: boolean, deadline: number): Promise<Policy> {
        const write = this.unconfirmed;
        if (write) return this.confirm(write).then((policy) => policy ?? this.readOnce(fresh, deadline));
        if (fresh) return this.api.read(this.parent, deadline, this.api.signals.reading);
        if (this.shared) return this.shared;
        const read = this.api.read(this.parent, deadline, this.api.signals.reading).finally(() => {
            if (this.shared === read) this.shared = undefined;
            this.settled();
        });
        this.shared = read;
        return read;
    }

    // --- refresh --------------------------------------------------------------------------------------------

    /** The policy for a resource's Read: the snapshot while it stands, unless a write of this process is newer. */
    refresh(): Promise<Policy> {
        const deadline = Date.now() + this.api.requestTimeoutMs;
        return this.within(deadline, () => this.refreshOnce(deadline));
    }

    private async refreshOnce(deadline: number): Promise<Policy> {
        for (;;) {
            if (this.writing) {
                await this.writing;
                continue;
            }
            if (this.unconfirmed) {
                // The read that shows it (which `confirm` makes the snapshot when it can be one); or, if none did, again.
                const shown = await this.confirm(this.unconfirmed);
                if (shown) return shown;
                continue;
            }
            if (this.snapshot && stands(this.snapshot, Date.now())) return this.snapshot.read;
            return this.snap(this.api.read(this.parent, deadline, this.api.signals.reading));
        }
    }

    /** Makes `read` (`answered`, if it is) the snapshot, and, once answered, keeps it or not (see `refresh`). */
    private snap(read: Promise<Policy>, answered?: Policy): Promise<Policy> {
        const snapshot: Snapshot = { read, members: 0 };
        this.snapshot = snapshot;
        const settle = (policy?: Policy) => {
            if (this.snapshot === snapshot) {
                if (policy && (!this.unshown || this.unshown(policy))) {
                    this.unshown = undefined;
                    snapshot.answeredAt = Date.now();
                    snapshot.members = membersOf(policy);
                } else {
                    this.snapshot = undefined;
                }
            }
            this.settled();
        };
        if (answered) settle(answered);
        else read.then(settle, () => settle());
        return read;
    }

    // --- join -----------------------------------------------------------------------------------------------

    /** Applies `change` in the next cycle; resolves with Google's answer to the write (or the read, when nothing changed). */
    change(change: Change, opts: ChangeOptions = {}): Promise<Policy> {
        const now = Date.now();
        const deadline = now + this.api.requestTimeoutMs;
        this.pace.arrived(now);
        this.api.pace?.arrived(now);
        let expiry: NodeJS.Timeout | undefined;
        const result = new Promise<Policy>((resolve, reject) => {
            const entry: Pending = { change, opts, deadline, at: now, resolve, reject };
            this.waiting.push(entry);
            this.counted();
            const cyclesBefore = this.cycles;
            expiry = setTimeout(() => {
                if (!this.remove(entry)) return;
                const why = this.cycles > cyclesBefore || this.inCycle
                    ? `the policy of ${this.name} stayed busy with other changes in this deployment for the whole request timeout`
                    : `the request timeout (${this.api.requestTimeoutMs} ms) ran out before the change to the policy of ${this.name} could be sent`;
                reject(new IamError(`${why}; raise ${this.api.requestTimeoutSetting}`, undefined, Code.DEADLINE_EXCEEDED));
            }, Math.max(0, deadline - Date.now()));
        });
        void result.finally(() => clearTimeout(expiry)).catch(() => undefined);
        if (!this.running) void this.loop();
        return result;
    }

    /** See `pace`: tells this policy's and the fetcher's Pace how many changes are outstanding now. */
    private counted(): void {
        const now = this.waiting.length + this.inBatch;
        this.pace.outstanding(now - this.counting);
        this.api.pace?.outstanding(now - this.counting);
        this.counting = now;
    }

    /**
     * See `gather`: how long after a cycle the next change may still come. The engine saves each answered step
     * before it sends the next, one save at a time: about one gap per change answered, and one more.
     */
    private linger(): number {
        return Math.min(HOLD_MS, Math.max(this.pause(), 2 * (this.answered + 1) * (this.pace.typicalGap ?? 0)));
    }

    /** See `gather`: the longest a change waits for company, well within its request timeout. */
    private hold(): number {
        return Math.max(this.api.batching.sendAfterMs, Math.min(HOLD_MS, this.api.requestTimeoutMs / 4));
    }

    /** See `gather`: how long without an arrival means the engine has sent what it will until it hears back. */
    private pause(): number {
        return Math.min(this.hold(), Math.max(this.api.batching.sendAfterMs, 2 * (this.pace.typicalGap ?? 0)));
    }

    /** See `gather`: when the waiting batch goes, as things stand (an arrival may bring it forward). */
    private goesAt(cycled: boolean): number {
        const oldest = this.waiting[0].at;
        // The first batch of a loop waits out the window: that is how company is found.
        const windowOver = oldest + this.api.batching.sendAfterMs;
        const at = [oldest + this.hold(), Math.max(windowOver, this.pace.lastArrival + this.pause())];
        // All that was ever outstanding at once is here: this policy's changes, or every policy's (the engine's slots
        // are shared, so it sends nothing more until one of them is answered); a gap without arrivals confirms it.
        if (cycled && this.pace.full(this.waiting.length)) at.push(this.pace.quietAt);
        const all = this.api.pace;
        if (all?.full()) at.push(Math.max(all.quietAt, cycled ? 0 : windowOver));
        return Math.min(...at);
    }

    private remove(entry: Pending): boolean {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        this.counted();
        return at >= 0;
    }

    // --- gather, then cycles while changes come --------------------------------------------------------------

    private async loop(): Promise<void> {
        this.running = true;
        const waiting = this.api.signals.waiting;
        // The first cycle's read runs while the batch gathers (see `cycle`): the window costs no time of its own.
        if (this.api.batching.enabled) {
            const read = this.api.read(this.parent, this.waiting[0].deadline, this.api.signals.reading);
            read.catch(() => undefined); // a loop that ends without a cycle never looks at it
            this.last = read;
        }
        try {
            for (let cycled = false; ;) {
                if (!await this.gather(cycled, waiting)) {
                    for (const p of this.waiting.splice(0)) p.reject(cancelled(this.name));
                    this.counted();
                    break;
                }
                if (this.waiting.length === 0) break;
                const batch = this.api.batching.enabled ? this.waiting.splice(0) : this.waiting.splice(0, 1);
                this.inCycle = true;
                this.inBatch = batch.length;
                try {
                    await this.runBatch(batch);
                } finally {
                    this.answered = batch.length;
                    this.inCycle = false;
                    this.inBatch = 0;
                    this.counted();
                    this.cycles++;
                    cycled = true;
                }
            }
        } finally {
            this.running = false;
            this.last = undefined;
            // No more changes for now: the last write is read back (the ones before it were confirmed by the next).
            if (this.unconfirmed) void this.confirm(this.unconfirmed);
            this.settled();
        }
    }

    /** See `gather` (`cycled`: a cycle just ended, so the loop lingers); false when cancelled. */
    private async gather(cycled: boolean, signal: AbortSignal): Promise<boolean> {
        if (!this.api.batching.enabled) return !signal.aborted;
        const since = Date.now();
        // Asleep until the next arrival at any policy of the fetcher, or until the rules' next moment.
        const next = (at: number) => (this.api.pace ?? this.pace).next(at - Date.now(), signal);
        while (this.waiting.length === 0) {
            const lingered = Math.max(since, this.pace.lastArrival) + this.linger();
            if (!cycled || Date.now() >= lingered) return !signal.aborted;
            if (!await next(lingered)) return false;
        }
        while (this.waiting.length > 0) { // (each may leave at its request timeout)
            const at = this.goesAt(cycled);
            if (Date.now() >= at) break;
            if (!await next(at)) return false;
        }
        // The quota's turn is waited for before the batch is taken: what comes meanwhile joins it.
        for (let ms = this.api.quotaWaitMs?.() ?? 0; ms > 0 && this.waiting.length; ms = this.api.quotaWaitMs?.() ?? 0) {
            const room = Math.min(...this.waiting.map((p) => p.deadline)) - Date.now();
            if (ms >= room) break; // the write's own admission says why it cannot be sent in time
            if (!await sleep(ms, signal)) return false;
        }
        return true;
    }

    // --- cycle --------------------------------------------------------------------------------------------------

    /** One batch; a 400 on a batch of several is narrowed down by halves, so only the refused change fails. */
    private async runBatch(batch: Pending[]): Promise<void> {
        try {
            const outcomes = await this.cycle(batch);
            batch.forEach((p, i) => {
                const o = outcomes[i];
                if ("error" in o) p.reject(o.error);
                else p.resolve(o.policy);
            });
        } catch (e) {
            if (batch.length > 1 && e instanceof IamError && e.httpStatus === 400) {
                const half = Math.ceil(batch.length / 2);
                await this.runBatch(batch.slice(0, half));
                await this.runBatch(batch.slice(half));
                return;
            }
            for (const p of batch) p.reject(e);
        }
    }

    /** Read once (or start from `last`), apply every change in order, write once; a 409 redoes the whole cycle. */
    private async cycle(batch: Pending[]): Promise<Outcome[]> {
        const deadline = Math.min(...batch.map((p) => p.deadline));
        const backoff = new Backoff(RETRY.conflict);
        for (let conflicts = 0; ; conflicts++) {
            // Without batching, every change reads for itself: `last` is not reused.
            const reuse = conflicts === 0 && this.api.batching.enabled ? this.last : undefined;
            this.last = undefined;
            // Its own read: neither shared nor waiting for a confirmation (the etag guards the write).
            const current = await (reuse ?? this.api.read(this.parent, deadline, this.api.signals.reading));
            // Each change sees the policy as the changes before it left it; one that throws fails alone.
            let next = current;
            const failed = new Map<Pending, unknown>();
            let steps: { p: Pending; before: Policy; after: Policy }[] = [];
            for (const p of batch) {
                try {
                    const after = p.change(next);
                    if (after !== undefined) {
                        steps.push({ p, before: next, after });
                        next = after;
                    }
                } catch (e) {
                    failed.set(p, e);
                }
            }
            const outcome = (p: Pending, policy: Policy): Outcome => (failed.has(p) ? { error: failed.get(p) } : { policy });
            // Nothing to change, but a write in flight from a dead process may still land on this policy: written as it is.
            if (steps.length === 0) steps = batch.filter((p) => !failed.has(p) && p.opts.fence?.(this.parent, current)).map((p) => ({ p, before: current, after: current }));
            if (steps.length === 0) {
                this.last = Promise.resolve(current);
                return batch.map((p) => outcome(p, current));
            }
            // What the policy must show once written: each change's own check, unless a later change of the
            // batch undid it (as it would have, run after it).
            const final = next;
            const checks = batch.flatMap((p) => (p.opts.confirm && !failed.has(p) && p.opts.confirm(final) ? [p.opts.confirm] : []));
            // Each record names the etag the write is sent with (a later change of a batch starts from what the one
            // before it made, which carries none).
            const records = steps.flatMap(({ p, before, after }) => (p.opts.record ? [p.opts.record(this.parent, { ...before, etag: current.etag }, after, deadline)] : []));
            const mask = batch.some((p) => p.opts.auditConfigs) ? "bindings,etag,auditConfigs" : "bindings,etag";
            // The batch's records reach the disk together (one fsync), before the write they guard is sent.
            await Promise.all(records.map((r) => r.durable));
            try {
                const written = await this.wrote({ ...next, etag: current.etag }, mask, deadline, (p) => checks.every((shows) => shows(p)));
                for (const r of records) r.landed(written);
                this.last = Promise.resolve(written);
                return batch.map((p) => outcome(p, written));
            } catch (e) {
                // A 409 after an attempt that may have applied is most likely that attempt's own doing: not undone;
                // the fresh read of the next round shows whether it landed.
                if (neverApplied(e)) for (const r of records) r.undo();
                if (!(e instanceof IamError) || e.httpStatus !== 409) throw e;
            }
            const wait = backoff.next();
            if (Date.now() + wait >= deadline) {
                throw new IamError(`too many concurrent changes to the policy of ${this.name}: ${conflicts + 1} writes were ` +
                    `refused with 409 ABORTED within the request timeout; retry, or raise ${this.api.requestTimeoutSetting}`,
                    409, Code.ABORTED);
            }
            if (!await sleep(wait, this.api.signals.waiting)) throw cancelled(this.name);
        }
    }

    // --- wrote --------------------------------------------------------------------------------------------------

    /** Writes `policy` (its etag set); on Google's answer, applies `wrote` and makes this write the unconfirmed one. */
    private async wrote(policy: Policy, mask: string, deadline: number, shows: (p: Policy) => boolean): Promise<Policy> {
        const write = this.api.write(this.parent, policy, mask, deadline);
        // Applied in one step (see `wrote`): a Read that waited for the write finds it unconfirmed, never in between.
        const end = (written?: Policy) => {
            if (this.writing === ended) this.writing = undefined;
            this.snapshot = undefined;
            this.shared = undefined;
            if (!written) return void this.confirm(this.unconfirmed);
            // The unconfirmed write as it is now, not as it was when this one was sent: its confirmation may have
            // ended meanwhile, and this write must be read back all the same.
            const replaced = this.unconfirmed;
            const chained = replaced !== undefined && policy.etag !== undefined && policy.etag === replaced.written.etag;
            if (replaced && !chained) void this.confirm(replaced);
            this.unshown = undefined;
            this.unconfirmed = { written, shows };
        };
        const ended: Promise<void> = write.then(end, () => end());
        this.writing = ended;
        await ended;
        return write;
    }

    // --- confirm ------------------------------------------------------------------------------------------------

    /** Starts (once) the confirmation of `write`: resolves with the read that showed it, or undefined. */
    confirm(write: Unconfirmed | undefined = this.unconfirmed): Promise<Policy | undefined> {
        if (!write) return Promise.resolve(undefined);
        if (write.confirmation) return write.confirmation;
        const deadline = Date.now() + this.api.requestTimeoutMs;
        const signal = this.api.signals.waiting;
        const confirmation = (async (): Promise<Policy | undefined> => {
            for (let read = 1; ; read++) {
                const policy = await this.api.read(this.parent, deadline, signal);
                if (write.shows(policy)) {
                    if (this.unconfirmed === write) {
                        this.unconfirmed = undefined;
                        // Read after this write, and none sent since: later Reads share it.
                        if (!this.writing) this.snap(Promise.resolve(policy), policy);
                    }
                    return policy;
                }
                if (read >= CONFIRM_READS || Date.now() + CONFIRM_INTERVAL_MS >= deadline) {
                    this.api.warn?.(`the policy of ${this.name} was written, but ${read} re-reads since do not show the change: ` +
                        "another writer may have replaced it. Run `pulumi refresh` to see the policy as it is");
                    return undefined;
                }
                if (!await sleep(CONFIRM_INTERVAL_MS, signal)) return undefined;
            }
        })().catch((e: unknown) => {
            if (!(e instanceof IamError && e.code === Code.CANCELLED)) {
                this.api.warn?.(`the policy of ${this.name} was written, but reading it back failed: ${e instanceof Error ? e.message : String(e)}`);
            }
            return undefined;
        }).finally(() => {
            // Ended without a read showing it: until one does, no read that does not is a snapshot (see `refresh`).
            if (this.unconfirmed === write) {
                this.unconfirmed = undefined;
                this.unshown = write.shows;
            }
            this.settled();
        });
        write.confirmation = confirmation;
        this.api.track(confirmation);
        return confirmation;
    }
}
