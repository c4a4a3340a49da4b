// Read-modify-write of a policy, the way every resource writes: under one lock per policy in this
// process, read at version 3, change, write with the read etag at version 3; when another writer got in
// between (409 ABORTED), redo the whole cycle after a jittered backoff (1 s doubling, capped), bounded by
// the request timeout; then confirm by re-reading, as IAM is eventually consistent.

import { Code, IamError } from "./errors";
import { bounded, IamFetcher } from "./fetcher";
import { Parent, parentName } from "./names";
import { Policy } from "./policy";

/** One queue per policy, shared by every fetcher of this process (a reconfigure builds a new fetcher). */
const locks = new Map<string, Promise<unknown>>();

/** Runs `fn` once every earlier holder of `key` is done; waiting counts against the operation's deadline. */
async function withLock<T>(key: string, deadline: number, fn: () => Promise<T>): Promise<T> {
    const prior = locks.get(key) ?? Promise.resolve();
    let expired = false;
    // The queue still waits for `prior`; a caller that gave up waiting never runs.
    const run = prior.catch(() => undefined).then(() => (expired ? Promise.reject(new Error("gave up waiting")) : fn()));
    const tail = run.catch(() => undefined);
    locks.set(key, tail);
    try {
        await bounded(prior.catch(() => undefined), deadline, undefined, () => {
            expired = true;
            return new IamError(`the policy of ${key} stayed locked by other changes in this deployment for the whole ` +
                "request timeout; raise cloud:requestTimeout", undefined, Code.DEADLINE_EXCEEDED);
        });
        return await run;
    } finally {
        if (locks.get(key) === tail) locks.delete(key);
    }
}

export interface ModifyResult {
    /** The policy as written (or as read, when nothing needed changing). */
    policy: Policy;
    /** Writes refused with 409 before one went through. */
    conflicts: number;
}

export interface ModifyOptions {
    /** True when the re-read policy shows the change (checked after the write). */
    confirm?: (policy: Policy) => boolean;
    /** Update mask of the write. */
    updateMask?: string;
    initialBackoffMs?: number;
    maxBackoffMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Applies `change` to the current policy of `parent`. `change` returns the policy to write, or undefined
 * when the current one already says what is wanted (nothing is written then).
 */
export function modifyPolicy(
    iam: IamFetcher,
    parent: Parent,
    change: (current: Policy) => Policy | undefined,
    opts: ModifyOptions = {},
): Promise<ModifyResult> {
    const name = parentName(parent);
    // One deadline for the whole operation: the lock wait, every read, write, retry and confirming read.
    const deadline = Date.now() + iam.requestTimeoutMs;
    return withLock(name, deadline, async () => {
        let backoff = opts.initialBackoffMs ?? 1000;
        for (let conflicts = 0; ; conflicts++) {
            const current = await iam.getIamPolicy(parent, { fresh: true, deadline });
            const next = change(current);
            if (next === undefined) return { policy: current, conflicts };
            try {
                const written = await iam.setIamPolicy(parent, { ...next, etag: current.etag }, opts.updateMask, deadline);
                await confirm(iam, parent, opts.confirm, deadline);
                return { policy: written, conflicts };
            } catch (e) {
                if (!(e instanceof IamError) || e.httpStatus !== 409) throw e;
            }
            const wait = backoff / 2 + Math.random() * (backoff / 2);
            backoff = Math.min(backoff * 2, opts.maxBackoffMs ?? 16_000);
            if (Date.now() + wait >= deadline) {
                throw new IamError(`too many concurrent changes to the policy of ${name}: ${conflicts + 1} writes were ` +
                    "refused with 409 ABORTED within the request timeout; retry, or raise cloud:requestTimeout",
                    409, Code.ABORTED);
            }
            await sleep(wait);
        }
    });
}

/** Re-reads until the change shows (IAM may lag a write), a few times at most. */
async function confirm(iam: IamFetcher, parent: Parent, shows: ((p: Policy) => boolean) | undefined, deadline: number): Promise<void> {
    if (!shows) return;
    for (let read = 1; ; read++) {
        let policy: Policy;
        try {
            policy = await iam.getIamPolicy(parent, { fresh: true, deadline });
        } catch (e) {
            // Cancelled (shutdown): the write itself went through; report it done rather than failed.
            if (e instanceof IamError && e.code === Code.CANCELLED) return;
            throw e;
        }
        if (shows(policy)) return;
        if (read >= 5 || Date.now() + 500 >= deadline) {
            throw new IamError(`the policy of ${parentName(parent)} was written, but ${read} re-reads do not show the ` +
                "change; another writer may have replaced it", undefined, Code.ABORTED);
        }
        await sleep(500);
    }
}
