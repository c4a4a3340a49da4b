// What the journal's decision core is told and what it asks for, as data. The core (journal.ts) reads no disk, clock
// or process: its shell (provider/deployment/shell.ts on a real machine and in the simulator) tells it what the
// storage shows and what time it is before each step, carries out the actions the step returns, and feeds the results
// back — as raft's caller does with its `Step` and `Ready`.

import type { Parent } from "../iam/names";
import type { Policy } from "../iam/policy";
import type { Claim } from "../resources/resource";
import type { Line } from "./knowledge";

/** Who wrote a file: enough to tell later whether that process still runs. */
export interface Writer {
    id: string;
    pid: number;
    host: string;
    /** The PID namespace (Linux), so a PID is only compared within its own. */
    pidns?: string;
    /** The process's start time where the system tells it (Linux: clock ticks since boot). */
    start?: string;
    /** The kernel it runs on (Linux: the boot id, the same in every PID namespace and container of one kernel). */
    boot?: string;
}

/** Another process's file as read so far. */
export interface Peer<L> {
    file: string;
    writer?: Writer;
    lines: L[];
    /** When its writer last touched it (ms): its last heartbeat or line. */
    touched: number;
    /** The id of the process that took it over and has not yet removed it, if one did. */
    takenBy?: string;
}

/** A peer as the shell saw it at the step: its file, and whether its writer still runs as far as the shell can tell. */
export interface PeerView extends Peer<Line> {
    alive: boolean;
}

/**
 * What the shell tells the core before each step: the time, and the other files of the stack's journal (left out
 * before a step that reads none of them: the core keeps the last it was told).
 */
export interface World {
    /** ms since the epoch. */
    now: number;
    peers?: PeerView[];
}

/**
 * What the command the engine runs says of this process's run, where the plugin can tell (process/command.ts):
 * `preview` when nothing the run reads is saved (`pulumi preview`, `--preview-only`), `partial` when it leaves resources
 * out; unknown otherwise.
 */
export interface RunCommand {
    preview?: boolean;
    /**
     * A command that saves what it does and, unless `--skip-preview` (`previewsFirst` false), previews it first in
     * plugin processes of their own (`pulumi up`, `destroy`, `refresh`): a run of it may be that preview.
     */
    previewsFirst?: boolean;
    /** `--target`, `--exclude` or `pulumi import`: the run sends only some of the resources the engine holds. */
    partial?: boolean;
    /** The run reads every resource first (`--refresh`, `pulumi refresh`): a Diff's olds are what it read. */
    refresh?: boolean;
    /** The URNs (or patterns, `*` for any text) of `--target`, and of `--exclude`. */
    targets?: string[];
    excludes?: string[];
}

/** How the stack's journal opened for this process: the run it serves, and its store or why there is none. */
export type Attached =
    | { run: string; where: string }
    | { run: string; where: string; why: string };

/** A resource operation, as what its request tells of the engine's state: a Read is a refresh (with state) or an import. */
export type OperationKind = "create" | "import" | "refresh" | "update" | "delete";

export interface Operation {
    urn: string;
    kind: OperationKind;
    preview: boolean;
    /** The claim of the state the request carries. */
    held?: Claim;
}

/** What the core asks the shell to do, in order. */
export type Action =
    /** Journal `line` in this process's file; `durable`: kept before the next action is carried out. */
    | { kind: "append"; line: Line; durable: boolean }
    /** Take a dead process's file, carrying `carry` into this process's file first; then tell `took`. */
    | { kind: "take"; file: string; carry: Line[] }
    /** Stop using the store; remove this process's file when `remove` (it holds nothing another process needs). */
    | { kind: "close"; remove: boolean }
    /** Say this to the user (the engine's log, as a warning on the stack). */
    | { kind: "warn"; message: string }
    | { kind: "debug"; message: string };

/** One policy the report must read before it says the items of it, with the credentials of this process's provider. */
export interface ReportRead {
    /** The parent, as the entries journal it. */
    parent: Parent;
    /** The provider whose credentials ask: this process's. */
    provider: string;
    /** Whether this process may ask Google (its own provider wrote it, or one with the same endpoint). */
    ask: boolean;
    /** Whether this process's provider wrote it. */
    own: boolean;
}

/** What a report's read came back with. */
export type ReadResult =
    | { policy: Policy }
    /** No reader (the provider is not configured): said unchecked. */
    | { unavailable: true }
    /** The shutdown cut the read off: it says nothing (the report at the run's end reads again). */
    | { cancelled: true }
    | { error: string };
