// The deployment's files on disk: one folder per stack under PULUMI_HOME, in which each plugin process keeps one
// append-only file of JSON lines and reads the others'. What makes them hold:
//   - a process is not its PID: files are named by a random id, and whether their writer still runs is told by its
//     PID together with its start time in the same PID namespace; on the same kernel (another PID namespace: a
//     container sharing PULUMI_HOME) by its beacon, a FIFO it holds open for reading, which the kernel shows
//     readerless the instant the process ends; else (another host) by a heartbeat (the file's mtime). So a reused
//     PID, a PID namespace or another host sharing the folder never keeps a dead process "alive" nor a live one
//     "dead";
//   - folders are never removed (a process that made one but has not written yet can never lose it) and files only
//     by a process that has taken over everything they held;
//   - a CLI process's marker (which of its runs came first: see laterRunOfCli) is removed only once that CLI, told
//     by its PID and start time, no longer runs;
//   - a line that guards a write is on disk (fsync) before the write is sent;
//   - a folder that is a symbolic link, belongs to another user or is open to others is never used: the caller
//     is told why, and runs on without it.

import { execFile } from "child_process";
import type * as Crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { Peer, Store, Writer } from "./host";

let loadedCrypto: typeof Crypto | undefined;

/**
 * node:crypto, loaded when first used: loading it is ~7 ms of the plugin's start (a profile of the executable's
 * start, `npm run bench`), and nothing before the first resource request needs it.
 */
export function crypto(): typeof Crypto {
    loadedCrypto ??= require("crypto");
    return loadedCrypto!;
}

/** How often a process touches its file, and how long without a touch makes it dead where its PID cannot tell. */
const HEARTBEAT_MS = 2000;
const STALE_MS = 15_000;

function bootId(): string | undefined {
    try {
        return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
    } catch {
        return undefined;
    }
}

function pidNamespace(): string | undefined {
    try {
        return fs.readlinkSync("/proc/self/ns/pid");
    } catch {
        return undefined;
    }
}

/** A process as /proc tells it (Linux): its state letter and its start time (clock ticks since boot). */
function procStat(pid: number): { state: string; start: string } | undefined {
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        // Fields 3 and 22, counted after the command name (which may hold spaces and parentheses).
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return { state: fields[0], start: fields[19] };
    } catch {
        return undefined;
    }
}

function startTime(pid: number): string | undefined {
    return procStat(pid)?.start;
}

/**
 * Whether a process of this PID namespace runs: it exists and is not a zombie. A plugin whose engine was killed
 * is reparented, and where nothing reaps orphans (a container's PID 1 that is not an init) it stays a zombie,
 * which signals still reach.
 */
function pidRuns(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
    }
    const state = procStat(pid)?.state;
    return state !== "Z" && state !== "X";
}

let thisWriter: Writer | undefined;

/** This process, as its file's lines name it (made at the first use: see crypto()). */
export function thisProcess(): Writer {
    thisWriter ??= {
        id: crypto().randomUUID(),
        pid: process.pid,
        host: os.hostname(),
        pidns: pidNamespace(),
        start: startTime(process.pid),
        boot: bootId(),
    };
    return thisWriter;
}

/** A writer's beacon in `folder`: a FIFO the writer holds open for reading while it runs. */
const beaconOf = (folder: string, id: string) => path.join(folder, `${id}.alive`);

/**
 * What the kernel says of a writer on this kernel: whether its beacon has a reader. Opening a FIFO for writing
 * without blocking fails with ENXIO exactly when no process holds it open for reading, and a process's files are
 * closed by the kernel as it ends (kill -9 included), in whatever PID namespace it ran. Undefined when it cannot
 * tell: another kernel (a FIFO does not reach across hosts), or no beacon (not made yet, or no mkfifo there).
 */
function beaconSays(folder: string, w: Writer): boolean | undefined {
    if (w.boot === undefined || w.boot !== thisProcess().boot) return undefined;
    let fd: number;
    try {
        fd = fs.openSync(beaconOf(folder, w.id), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    } catch (e) {
        return (e as NodeJS.ErrnoException).code === "ENXIO" ? false : undefined;
    }
    try {
        return fs.fstatSync(fd).isFIFO() ? true : undefined;
    } finally {
        fs.closeSync(fd);
    }
}

/**
 * Whether the writer of a file in `folder`, last touched at `touched` (ms), still runs, as far as this process can
 * tell: its PID in this PID namespace, its beacon on this kernel, else its heartbeat.
 */
function stillRuns(folder: string, w: Writer, touched: number, now = Date.now()): boolean {
    return pidSays(w) ?? beaconSays(folder, w) ?? now - touched < STALE_MS;
}

/**
 * What a writer's PID says of it: whether it runs, where it ran on this host and in this PID namespace (and, where
 * its start time is known, that PID is still that process); undefined elsewhere, or where the PID cannot tell.
 */
export function pidSays(w: Writer): boolean | undefined {
    if (w.id === thisProcess().id) return true;
    if (w.host !== thisProcess().host || w.pidns !== thisProcess().pidns) return undefined;
    if (!pidRuns(w.pid)) return false;
    // The same PID with another start time is another process.
    if (w.start !== undefined && thisProcess().start !== undefined) return startTime(w.pid) === w.start;
    return undefined;
}

/** A CLI process's marker in a stack's folder (see laterRunOfCli), and a copy of one being made. */
const MARKER = /^cli-[0-9a-f]{16}\.run$/;
const MARKER_COPY = /^cli-[0-9a-f]{16}\.run\.[0-9a-f-]+$/;

interface CliMarker {
    pid: number;
    start?: string;
    host: string;
    pidns?: string;
    run: string;
}

/**
 * Whether `run` comes after another run of the CLI process that started this one, in `folder`: a recording
 * command (`pulumi up`, `destroy`, `refresh` without `--skip-preview`) runs its preview first, in plugin processes
 * of its own, then its update in new ones, and a preview does not send the resources it would delete. The CLI's
 * first run to reach the folder leaves a marker naming that run (made whole, then linked: a reader never sees half
 * of it); markers of CLI processes that no longer run are removed. False for the first run, and where it cannot tell.
 */
export function laterRunOfCli(folder: string, run: string): boolean {
    const me = thisProcess();
    const cli = { pid: process.ppid, start: startTime(process.ppid), host: me.host, pidns: me.pidns };
    const name = `cli-${crypto().createHash("sha256").update(JSON.stringify(cli)).digest("hex").slice(0, 16)}.run`;
    removeDeadMarkers(folder, name);
    const marker = path.join(folder, name);
    const copy = `${marker}.${me.id}`;
    try {
        fs.writeFileSync(copy, JSON.stringify({ ...cli, run } satisfies CliMarker), { mode: 0o600, flag: "wx" });
        try {
            fs.linkSync(copy, marker);
            return false;
        } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false;
        } finally {
            fs.rmSync(copy, { force: true });
        }
        return (JSON.parse(fs.readFileSync(marker, "utf8")) as CliMarker).run !== run;
    } catch {
        return false;
    }
}

/**
 * Removes the markers of CLI processes of this host and PID namespace that no longer run (another's cannot be
 * told: left), and copies a process died before linking.
 */
function removeDeadMarkers(folder: string, keep: string): void {
    const me = thisProcess();
    let names: string[];
    try {
        names = fs.readdirSync(folder);
    } catch {
        return;
    }
    for (const name of names) {
        const file = path.join(folder, name);
        try {
            if (MARKER_COPY.test(name)) {
                if (Date.now() - fs.statSync(file).mtimeMs > STALE_MS) fs.rmSync(file, { force: true });
                continue;
            }
            if (!MARKER.test(name) || name === keep) continue;
            const m = JSON.parse(fs.readFileSync(file, "utf8")) as CliMarker;
            if (m.host !== me.host || m.pidns !== me.pidns) continue;
            const runs = pidRuns(m.pid) && (m.start === undefined || startTime(m.pid) === m.start);
            if (!runs) fs.rmSync(file, { force: true });
        } catch {
            // gone already, or unreadable: another process is at it
        }
    }
}

/**
 * Makes `dir` (and its parents) if missing, private to the user, and says why it cannot be used if it cannot: a
 * symbolic link, not a folder, another user's, or open to others. Undefined when it is fit.
 */
export function privateFolder(dir: string): string | undefined {
    try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
        return `it cannot be made (${whyNotMade(dir) ?? (e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
    let st: fs.Stats;
    try {
        st = fs.lstatSync(dir);
    } catch (e) {
        return `it cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
    if (st.isSymbolicLink()) return "it is a symbolic link";
    if (!st.isDirectory()) return "it is not a folder";
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
    if (uid !== undefined && st.uid !== uid) return `it belongs to another user (uid ${st.uid}, this is uid ${uid})`;
    // Windows reports no POSIX modes worth judging; its user profile is private already.
    if (process.platform !== "win32" && (st.mode & 0o077) !== 0) {
        return `it is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}; it must be 0700)`;
    }
    return undefined;
}

/**
 * Why a folder cannot be made: the error of making its first missing part, below the nearest one that exists (a
 * recursive mkdir on a read-only file system says ENOENT instead of EROFS).
 */
function whyNotMade(dir: string): string | undefined {
    let missing = dir;
    while (!fs.existsSync(path.dirname(missing)) && path.dirname(missing) !== missing) missing = path.dirname(missing);
    try {
        fs.mkdirSync(missing, { mode: 0o700 });
        fs.rmdirSync(missing);
        return undefined;
    } catch (e) {
        return (e as NodeJS.ErrnoException).code;
    }
}

/** `<id>.jsonl`, or `<id>.jsonl.taken-by-<taker>` while a taker carries it over. */
const FILE_NAME = /^[\w-]+\.jsonl(?:\.taken-by-([\w-]+))?$/;

/** This process's file in a folder, and what the other files there say (read incrementally). */
export class ProcessFile<L> implements Store<L> {
    private fd?: number;
    private readonly file: string;
    private heartbeat?: NodeJS.Timeout;
    private readonly read = new Map<string, { offset: number; rest: string; peer: Peer<L> }>();

    /** Opens this process's file, its first line `header`; throws with the reason it cannot be written. */
    constructor(readonly folder: string, header: L) {
        this.file = path.join(folder, `${thisProcess().id}.jsonl`);
        // O_EXCL and O_NOFOLLOW: never someone else's file, nor a link planted under this name.
        this.fd = fs.openSync(this.file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
        this.append(header, true);
        this.heartbeat = setInterval(() => {
            const now = new Date();
            fs.utimes(this.file, now, now, () => undefined); // a missed beat is only a later one
        }, HEARTBEAT_MS);
        this.heartbeat.unref();
        this.lightBeacon();
    }

    private beacon?: number;

    /**
     * Makes this process's beacon (see beaconSays): a FIFO made under another name, opened for reading, then renamed
     * into place, so no process ever finds it without its reader. Made asynchronously (mkfifo runs beside the first request); until it is
     * there the heartbeat tells. The kernel closes it when the process ends; a taker of the file removes it.
     */
    private lightBeacon(): void {
        if (process.platform === "win32" || thisProcess().boot === undefined) return;
        const beacon = beaconOf(this.folder, thisProcess().id);
        const making = `${beacon}-new`;
        execFile("mkfifo", ["-m", "600", making], (e) => {
            if (!e && this.fd !== undefined) {
                try {
                    this.beacon = fs.openSync(making, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
                    fs.renameSync(making, beacon);
                    return;
                } catch {
                    // no beacon: the heartbeat tells
                }
            }
            fs.rm(making, { force: true }, () => undefined);
        });
    }

    get where(): string {
        return this.folder;
    }

    laterRunOfCli(run: string): boolean {
        return laterRunOfCli(this.folder, run);
    }

    /** Whether a peer's writer still runs (see stillRuns). */
    runs(peer: Peer<L>): boolean {
        return peer.writer !== undefined && stillRuns(this.folder, peer.writer, peer.touched);
    }

    /** Appends a line; `durable`: on disk before this returns. Throws when the disk refuses. */
    append(line: L, durable = false): void {
        if (this.fd === undefined) throw new Error("the file is closed");
        fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
        if (durable) fs.fsyncSync(this.fd);
    }

    private syncing?: Promise<void>;
    private queued?: Promise<void>;

    /**
     * Resolves once every line appended before the call is on disk. Calls that come while an fsync runs share the
     * next one, so a batch of writes costs one fsync, off the event loop. Rejects when the disk refuses.
     */
    sync(): Promise<void> {
        const fd = this.fd;
        if (fd === undefined) return Promise.reject(new Error("the file is closed"));
        this.queued ??= (this.syncing ?? Promise.resolve()).catch(() => undefined).then(() => {
            this.syncing = this.queued;
            this.queued = undefined;
            return new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));
        });
        return this.queued;
    }

    /** The other files of the folder, each with the lines appended since the last call added to what was read. */
    peers(): Peer<L>[] {
        const out = new Map<string, Peer<L>>();
        // A file renamed by its taker between the listing and its opening is found under its new name by listing
        // again: what a file holds is never missed for that.
        for (let pass = 0, missed = true; missed && pass < 3; pass++) {
            missed = false;
            let names: string[];
            try {
                names = fs.readdirSync(this.folder);
            } catch {
                return [];
            }
            for (const name of names) {
                const named = FILE_NAME.exec(name);
                const file = path.join(this.folder, name);
                if (!named || name === path.basename(this.file) || out.has(file)) continue;
                const peer = this.readPeer(file, named[1]);
                if (peer) out.set(file, peer);
                else missed = true;
            }
        }
        for (const file of [...this.read.keys()]) if (!out.has(file)) this.read.delete(file);
        return [...out.values()];
    }

    /** Reads what `file` appended since last time; undefined when it is gone (taken over, or removed at exit). */
    private readPeer(file: string, takenBy: string | undefined): Peer<L> | undefined {
        const known = this.read.get(file) ?? { offset: 0, rest: "", peer: { file, lines: [], touched: 0, ...(takenBy ? { takenBy } : {}) } };
        try {
            const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
            try {
                const st = fs.fstatSync(fd);
                known.peer.touched = st.mtimeMs;
                if (st.size > known.offset) {
                    const buf = Buffer.alloc(st.size - known.offset);
                    fs.readSync(fd, buf, 0, buf.length, known.offset);
                    known.offset = st.size;
                    const text = known.rest + buf.toString("utf8");
                    const parts = text.split("\n");
                    known.rest = parts.pop() ?? ""; // a line being written is read once complete
                    for (const raw of parts) {
                        try {
                            const line = JSON.parse(raw) as L;
                            if (known.peer.lines.length === 0 && known.peer.writer === undefined) known.peer.writer = writerOf(line);
                            known.peer.lines.push(line);
                        } catch {
                            // a torn line (the writer died mid-line): nothing of it was acted on
                        }
                    }
                }
            } finally {
                fs.closeSync(fd);
            }
        } catch {
            return undefined;
        }
        this.read.set(file, known);
        return known.peer;
    }

    /**
     * Takes a dead process's file (or one a dead taker left half carried): only one process can (the rename is
     * atomic), and only that one acts on its lines. `keep` carries what must outlive the file into this process's
     * own, which is on disk before the file is removed; until then the renamed file is still read by everyone.
     * Returns false when another process took it first.
     */
    take(peer: Peer<L>, keep: () => void): boolean {
        const claimed = `${peer.file.replace(/\.taken-by-[\w-]+$/, "")}.taken-by-${thisProcess().id}`;
        try {
            fs.renameSync(peer.file, claimed);
        } catch {
            return false;
        }
        this.read.delete(peer.file);
        keep();
        // This file failed while carrying (and was closed): the taken one stays, for a later process to take again.
        if (this.fd === undefined) return false;
        fs.fsyncSync(this.fd);
        fs.rmSync(claimed, { force: true });
        if (peer.writer) fs.rmSync(beaconOf(this.folder, peer.writer.id), { force: true });
        return true;
    }

    /**
     * Stops the heartbeat; removes the file when `remove` (it holds nothing another process needs). The beacon stays
     * lit until the process ends: it still runs, and a file it keeps is taken once it has ended.
     */
    close(remove: boolean): void {
        if (this.heartbeat) clearInterval(this.heartbeat);
        if (this.fd !== undefined) {
            try {
                fs.closeSync(this.fd);
            } catch {
                // already gone
            }
        }
        this.fd = undefined;
        if (remove) {
            fs.rmSync(this.file, { force: true });
            fs.rmSync(beaconOf(this.folder, thisProcess().id), { force: true });
        }
    }
}

function writerOf(line: unknown): Writer | undefined {
    const w = (line as { writer?: Writer } | null)?.writer;
    return w && typeof w.id === "string" && typeof w.pid === "number" && typeof w.host === "string" ? w : undefined;
}
