// What the journal's shell is given by the code around it: the storage, this process, the clock and sleeps. The
// journal's core (provider/journal/) decides; the shell (shell.ts) carries its actions out on these, so the same shell
// runs on a real machine (deployment.ts: disks, PIDs, a bucket) and in the simulator (sim/: in memory, seeded).

import type { Peer, Writer } from "../journal/events";

export type { Peer, Writer } from "../journal/events";

/**
 * This process's file in its stack's journal, and what the other files there say. Every method may throw when the
 * storage refuses (full, read-only, gone): the journal then runs on without it, and says so once.
 */
export interface Store<L> {
    /** Where it is, for a person. */
    readonly where: string;
    /** Appends a line; `durable`: kept before this returns. */
    append(line: L, durable?: boolean): void;
    /** Resolves once every line appended before the call is kept; rejects when the storage refuses. */
    sync(): Promise<void>;
    /** The other files, each with the lines appended since the last call added to what was read. */
    peers(): Peer<L>[];
    /** Whether a peer's writer still runs, as far as this process can tell. */
    runs(peer: Peer<L>): boolean;
    /**
     * Takes a dead process's file: only one process can, and only that one acts on its lines. `keep` carries what
     * must outlive it into this process's file, which is kept before the taken one is removed. False when another
     * process took it first (or this file failed while carrying).
     */
    take(peer: Peer<L>, keep: () => void): boolean;
    /**
     * Whether `run` comes after another run of the CLI process that started this one: a recording command without
     * `--skip-preview` runs its preview first, in plugin processes of its own. False for the first run, and where it
     * cannot tell.
     */
    laterRunOfCli(run: string): boolean;
    /** Stops; removes this process's file when `remove` (it holds nothing another process needs). */
    close(remove: boolean): void;
}

/** Opening a stack's journal: the store, or why there is none (`where` and `why` are said to the user). */
export type Opened<L> = { store: Store<L> } | { where: string; why: string };

export interface JournalHost<L> {
    /** ms since the epoch. */
    now(): number;
    /** This process, as its file's lines name it. */
    self(): Writer;
    /** The engine run this process serves, from the engine's address (every plugin of one run shares it). */
    runId(engineAddress: string | undefined): string;
    /** Opens this process's file in the journal of the stack `urn` names; undefined when `urn` names no stack. */
    open(urn: string, header: L): Opened<L> | undefined;
    /** A short hex digest of `text` (names that must be the same wherever they are made). */
    digest(text: string): string;
    sleep(ms: number): Promise<void>;
}
