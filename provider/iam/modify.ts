// Read-modify-write of a policy, the way every resource writes, batched: changes to one policy that arrive
// while a cycle is pending or running join the next cycle. A cycle reads the policy once (version 3), applies
// every change of the batch in arrival order, and writes once with the read etag (version 3); each caller then
// has Google's answer. The next cycle starts from that answer, and its write, accepted on that etag, confirms
// the one before; the last write is confirmed by re-reading (IAM is eventually consistent) once the changes
// stop, and reads of the policy wait for that (IamFetcher.settle()). When another writer got in between
// (409 ABORTED) the whole batch is redone after a jittered backoff (1 s doubling, capped). A change the API
// refuses (400) is found by splitting the batch, and fails alone. The result is that of running the changes
// one after another.

import { Code, IamError } from "./errors";
import { IamFetcher } from "./fetcher";
import { changesBetween, Grant, grantsOf } from "./grants";
import { Parent, parentName } from "./names";
import { Policy } from "./policy";

export interface ModifyResult {
    /** The policy as written (Google's answer to the write), or as read when nothing needed changing. */
    policy: Policy;
}

export interface ModifyOptions {
    /** True when a policy shows the change: what confirms the write (checked on reads after it). */
    confirm?: (policy: Policy) => boolean;
    /** Update mask of the write. */
    updateMask?: string;
    /**
     * Told, before a write is sent, which grants this change adds to the parent's policy (a crash journal);
     * returns what to call when the API refuses the write, which then never applied.
     */
    record?: (parent: Parent, added: Grant[]) => () => void;
}

/** Backoff after a 409: 1 s doubling, capped, as Terraform's IAM writers do. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 16_000;

/** One caller's change, waiting for (or in) a cycle. */
interface Pending {
    change: (current: Policy) => Policy | undefined;
    opts: ModifyOptions;
    /** The caller's own deadline (its requestTimeout from when it asked). */
    deadline: number;
    resolve(result: ModifyResult): void;
    reject(error: unknown): void;
}

/** The changes queued for one policy of one fetcher, and whether a cycle is running. */
interface Queue {
    waiting: Pending[];
    running: boolean;
    /** A cycle is reading or writing now; how many cycles ran (for the timeout's message). */
    inCycle: boolean;
    cycles: number;
    /**
     * The policy as the cycle just finished left it (Google's answer to its write, or its read): the next
     * cycle starts from it instead of reading again, as the etag still guards the write. Kept only while
     * changes keep coming.
     */
    last?: Policy;
}

/**
 * How long a cycle waits for company before it starts. The engine answers a batch's RPCs together and sends
 * the next changes a few milliseconds apart: without this the first of them would run alone.
 */
const GATHER_MS = 40;
/**
 * After a cycle released k callers, the engine (whose parallelism they held) sends about k new changes: a cycle
 * waits up to this long for that many before it starts, so batches fill to the engine's parallelism.
 */
const REFILL_MS = 150;

const queues = new WeakMap<IamFetcher, Map<string, Queue>>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Applies `change` to the current policy of `parent`. `change` returns the policy to write, or undefined
 * when the current one already says what is wanted (nothing is written then). Resolves once the write (if
 * any) is confirmed; the whole of it, queueing included, is bounded by the request timeout.
 */
export function modifyPolicy(
    iam: IamFetcher,
    parent: Parent,
    change: (current: Policy) => Policy | undefined,
    opts: ModifyOptions = {},
): Promise<ModifyResult> {
    const name = parentName(parent);
    let byParent = queues.get(iam);
    if (!byParent) queues.set(iam, (byParent = new Map()));
    let queue = byParent.get(name);
    if (!queue) byParent.set(name, (queue = { waiting: [], running: false, inCycle: false, cycles: 0 }));
    const q = queue;
    const deadline = Date.now() + iam.requestTimeoutMs;
    let expiry: NodeJS.Timeout | undefined;
    const result = new Promise<ModifyResult>((resolve, reject) => {
        const entry: Pending = { change, opts, deadline, resolve, reject };
        q.waiting.push(entry);
        // Waiting in the queue counts against the caller's deadline, like any other part of the operation.
        // Whether other changes held it up is told by whether a cycle ran while it waited.
        const cyclesBefore = q.cycles;
        expiry = setTimeout(() => {
            const at = q.waiting.indexOf(entry);
            if (at < 0) return;
            q.waiting.splice(at, 1);
            const why = q.cycles > cyclesBefore || q.inCycle
                ? `the policy of ${name} stayed busy with other changes in this deployment for the whole request timeout`
                : `the request timeout (${iam.requestTimeoutMs} ms) ran out before the change to the policy of ${name} could be sent`;
            reject(new IamError(`${why}; raise ${iam.requestTimeoutSetting}`, undefined, Code.DEADLINE_EXCEEDED));
        }, Math.max(0, deadline - Date.now()));
    });
    void result.finally(() => clearTimeout(expiry)).catch(() => undefined);
    if (!q.running) void drain(iam, parent, q, byParent, name);
    return result;
}

/** Runs cycles while changes wait; each cycle takes every change waiting when it starts. */
async function drain(iam: IamFetcher, parent: Parent, q: Queue, byParent: Map<string, Queue>, name: string): Promise<void> {
    q.running = true;
    try {
        // After a cycle the queue stays open for the changes its answers let the engine send: they start from
        // the policy the previous cycle left.
        for (let released = 0; ;) {
            await sleep(GATHER_MS);
            for (let waited = GATHER_MS; q.waiting.length < released && waited < REFILL_MS; waited += 10) await sleep(10);
            if (q.waiting.length === 0) break;
            const batch = q.waiting.splice(0);
            released = batch.length;
            q.inCycle = true;
            try {
                await runBatch(iam, parent, batch, q);
            } finally {
                q.inCycle = false;
                q.cycles++;
            }
        }
    } finally {
        q.running = false;
        q.last = undefined;
        // No more changes for now: the last write is read back (the ones before it were confirmed by the next).
        iam.settle(parent);
        if (q.waiting.length === 0 && byParent.get(name) === q) byParent.delete(name);
    }
}

/** One batch; a 400 on a batch of several is narrowed down by halves, so only the refused change fails. */
async function runBatch(iam: IamFetcher, parent: Parent, batch: Pending[], q: Queue): Promise<void> {
    try {
        const outcomes = await cycle(iam, parent, batch, q);
        batch.forEach((p, i) => {
            const o = outcomes[i];
            if ("error" in o) p.reject(o.error);
            else p.resolve(o);
        });
    } catch (e) {
        if (batch.length > 1 && e instanceof IamError && e.httpStatus === 400) {
            const half = Math.ceil(batch.length / 2);
            await runBatch(iam, parent, batch.slice(0, half), q);
            await runBatch(iam, parent, batch.slice(half), q);
            return;
        }
        for (const p of batch) p.reject(e);
    }
}

/** Masks merged: a change that writes audit configs makes the write carry them. */
function unionMask(batch: Pending[]): string {
    const paths = new Set<string>();
    for (const p of batch) for (const path of (p.opts.updateMask ?? "bindings,etag").split(",")) paths.add(path.trim());
    return [...paths].join(",");
}

type Outcome = ModifyResult | { error: unknown };

/** Read once, apply every change in order, write once (confirmed by the fetcher); a 409 redoes the whole cycle. */
async function cycle(iam: IamFetcher, parent: Parent, batch: Pending[], q: Queue): Promise<Outcome[]> {
    const name = parentName(parent);
    const deadline = Math.min(...batch.map((p) => p.deadline));
    let backoff = FIRST_BACKOFF_MS;
    for (let conflicts = 0; ; conflicts++) {
        // Where the previous cycle left the policy, on the first attempt; a fresh read after a conflict.
        const reuse = conflicts === 0 ? q.last : undefined;
        q.last = undefined;
        const current = reuse ?? await iam.getIamPolicy(parent, { fresh: true, unconfirmed: true, deadline });
        // Each change sees the policy as the changes before it left it: as if they ran one after another.
        // A change that cannot be applied fails alone.
        let next = current;
        let changed = false;
        const failed = new Map<Pending, unknown>();
        const adds = new Map<Pending, Grant[]>();
        for (const p of batch) {
            try {
                const after = p.change(next);
                if (after !== undefined) {
                    if (p.opts.record) adds.set(p, changesBetween(grantsOf(next.bindings), grantsOf(after.bindings)).added);
                    next = after;
                    changed = true;
                }
            } catch (e) {
                failed.set(p, e);
            }
        }
        const outcome = (p: Pending, policy: Policy): Outcome => (failed.has(p) ? { error: failed.get(p) } : { policy });
        if (!changed) {
            q.last = current;
            return batch.map((p) => outcome(p, current));
        }
        // What the policy must show once written: each change's own check, unless a later change of the batch
        // undid it (as it would have, run after it).
        const final = next;
        const checks = batch.flatMap((p) => (p.opts.confirm && !failed.has(p) && p.opts.confirm(final) ? [p.opts.confirm] : []));
        const undo = [...adds].flatMap(([p, added]) => (!failed.has(p) && added.length && p.opts.record ? [p.opts.record(parent, added)] : []));
        try {
            const written = await iam.setIamPolicy(parent, { ...next, etag: current.etag }, unionMask(batch), deadline,
                (policy) => checks.every((shows) => shows(policy)));
            q.last = written;
            return batch.map((p) => outcome(p, written));
        } catch (e) {
            // An answer from the API that refuses the write (4xx), or a write never sent: nothing was applied.
            if (e instanceof IamError && ((e.httpStatus !== undefined && e.httpStatus < 500) || e.code === Code.CANCELLED)) {
                for (const u of undo) u();
            }
            if (!(e instanceof IamError) || e.httpStatus !== 409) throw e;
        }
        const wait = backoff / 2 + Math.random() * (backoff / 2);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        if (Date.now() + wait >= deadline) {
            throw new IamError(`too many concurrent changes to the policy of ${name}: ${conflicts + 1} writes were ` +
                `refused with 409 ABORTED within the request timeout; retry, or raise ${iam.requestTimeoutSetting}`,
                409, Code.ABORTED);
        }
        await sleep(wait);
    }
}
