// The simulator's machines: one journal storage shared by the plugin processes of a stack (a stack's folder, or
// the same folder reached from another machine), processes that live and die by the simulation's word, a clock
// that moves only when told. Each process gets the journal host a real plugin gets (provider/deployment/), made of
// these parts instead of disks, PIDs and timers.

import type { JournalHost, Opened, Peer, Store, Writer } from "../provider/deployment/host";
import type { Line } from "../provider/journal/knowledge";

/** One process's file in the storage. */
interface SimFile {
    name: string;
    writer: Writer;
    lines: Line[];
    /** How many of `lines` are durable: a machine's crash loses the rest. */
    durable: number;
    touched: number;
    takenBy?: string;
    /** The one Peer object readers get (its `lines` is the file's, read whole). */
    peer: Peer<Line>;
}

/** What the storage does wrong, drawn per case. */
export interface StorageFaults {
    /** The folder cannot be used at all (read-only, not the user's): `open` says why. */
    unusable?: boolean;
    /** Appends fail from the n-th one on (a full disk). */
    fullAfter?: number;
}

export class World {
    now = 1_800_000_000_000;
    private readonly files = new Map<string, SimFile>();
    readonly alive = new Set<string>();
    /** The first run each CLI process made reach the folder (laterRunOfCli). */
    private readonly markers = new Map<string, string>();
    private appends = 0;
    /** The recorded writers `load` last marked as running. */
    private loadedAlive = new Set<string>();
    private nextPid = 100;

    constructor(public faults: StorageFaults = {}) {}

    /** A new plugin process of the CLI process `cli`, on `host`. */
    spawn(cli: string, host = "sim-host"): SimProcess {
        const id = `p${this.nextPid}`;
        const writer: Writer = { id, pid: this.nextPid++, host };
        this.alive.add(id);
        return new SimProcess(this, writer, cli);
    }

    kill(p: SimProcess): void {
        this.alive.delete(p.writer.id);
    }

    /** The machine dies: every process, and every line not yet durable. */
    crash(): void {
        this.alive.clear();
        for (const f of this.files.values()) f.lines.length = f.durable;
    }

    /** The torn last line of a dead process's file (it died mid-write): readers skip it. */
    tear(writer: string): void {
        const f = this.files.get(`${writer}.jsonl`);
        if (f && f.lines.length > 1 && !this.alive.has(writer)) {
            f.lines.pop();
            f.durable = Math.min(f.durable, f.lines.length);
        }
    }

    /**
     * `pulumi stack rename`: the stack's folder is named by its stack, so the next run opens a new, empty one; the old
     * folder stays where no run reads it.
     */
    rename(): void {
        this.files.clear();
    }

    /**
     * The folder as a real plugin left it (a recorded trace): each file's lines, every line durable, its writer dead
     * unless `alive` names it. A torn last line is skipped, as the shell's reader skips it.
     */
    load(files: Record<string, string>, alive: string[] = []): void {
        this.files.clear();
        for (const id of this.loadedAlive) this.alive.delete(id);
        this.loadedAlive = new Set(alive);
        for (const id of alive) this.alive.add(id);
        for (const [name, text] of Object.entries(files)) {
            const lines: Line[] = [];
            for (const raw of text.split("\n")) {
                try {
                    if (raw.trim()) lines.push(JSON.parse(raw) as Line);
                } catch {
                    // torn
                }
            }
            const hello = lines[0];
            if (hello?.op !== "hello") continue;
            const file: SimFile = { name, writer: hello.writer, lines, durable: lines.length, touched: this.now, peer: { file: name, lines, touched: this.now, writer: hello.writer } };
            this.files.set(name, file);
        }
    }

    fileCount(): number {
        return this.files.size;
    }

    open(p: SimProcess, header: Line): Opened<Line> {
        if (this.faults.unusable) return { where: "the simulated stack folder", why: "it is read-only (EROFS)" };
        const name = `${p.writer.id}.jsonl`;
        const file: SimFile = { name, writer: p.writer, lines: [], durable: 0, touched: this.now, peer: { file: name, lines: [], touched: this.now, writer: p.writer } };
        file.peer.lines = file.lines;
        this.files.set(name, file);
        const store = new SimStore(this, p, file);
        try {
            store.append(header, true);
        } catch (e) {
            this.files.delete(name);
            return { where: "the simulated stack folder", why: `a file cannot be written there (${(e as { code?: string }).code ?? String(e)})` };
        }
        return { store };
    }

    append(file: SimFile, line: Line, durable: boolean): void {
        if (!this.files.has(file.name)) throw Object.assign(new Error("the file is gone"), { code: "ENOENT" });
        // A killed process writes nothing more: its journal object, still running in this process, is no process.
        if (!this.alive.has(file.writer.id)) return;
        this.appends++;
        if (this.faults.fullAfter !== undefined && this.appends > this.faults.fullAfter) throw Object.assign(new Error("no space left"), { code: "ENOSPC" });
        // A JSON round trip, as a file would: no object is shared between processes.
        file.lines.push(JSON.parse(JSON.stringify(line)) as Line);
        file.touched = this.now;
        file.peer.touched = this.now;
        if (durable) file.durable = file.lines.length;
    }

    peersOf(file: SimFile): Peer<Line>[] {
        return [...this.files.values()].filter((f) => f !== file).map((f) => {
            f.peer.takenBy = f.takenBy;
            return f.peer;
        });
    }

    take(taker: SimProcess, own: SimFile, peer: Peer<Line>, keep: () => void): boolean {
        const f = this.files.get(peer.file);
        if (!f || (f.takenBy !== undefined && this.alive.has(f.takenBy))) return false;
        f.takenBy = taker.writer.id;
        keep();
        if (!this.files.has(own.name) || !this.alive.has(taker.writer.id)) return false;
        own.durable = own.lines.length;
        this.files.delete(f.name);
        return true;
    }

    laterRunOfCli(cli: string, run: string): boolean {
        const first = this.markers.get(cli);
        if (first === undefined) {
            this.markers.set(cli, run);
            return false;
        }
        return first !== run;
    }

    remove(file: SimFile): void {
        this.files.delete(file.name);
    }

    /** What the storage holds, for a transcript. */
    describe(): string[] {
        return [...this.files.values()].map((f) => `${f.name}${this.alive.has(f.writer.id) ? "" : " (dead)"}: ${f.lines.length} lines`);
    }
}

class SimStore implements Store<Line> {
    readonly where = "the simulated stack folder";
    private closed = false;

    constructor(private readonly world: World, private readonly p: SimProcess, private readonly file: SimFile) {}

    append(line: Line, durable = false): void {
        if (this.closed) throw new Error("the file is closed");
        this.world.append(this.file, line, durable);
    }

    sync(): Promise<void> {
        if (this.closed) return Promise.reject(new Error("the file is closed"));
        const upTo = this.file.lines.length;
        return Promise.resolve().then(() => {
            this.file.durable = Math.max(this.file.durable, Math.min(upTo, this.file.lines.length));
        });
    }

    peers(): Peer<Line>[] {
        return this.world.peersOf(this.file);
    }

    runs(peer: Peer<Line>): boolean {
        return peer.writer !== undefined && this.world.alive.has(peer.writer.id);
    }

    take(peer: Peer<Line>, keep: () => void): boolean {
        return this.world.take(this.p, this.file, peer, keep);
    }

    laterRunOfCli(run: string): boolean {
        return this.world.laterRunOfCli(this.p.cli, run);
    }

    close(remove: boolean): void {
        this.closed = true;
        if (remove) this.world.remove(this.file);
    }
}

/** FNV-1a, 32 bits twice over: a stable digest for names; the simulator needs no secrecy. */
function digest(text: string): string {
    let a = 0x811c9dc5;
    let b = 0x01000193;
    for (let i = 0; i < text.length; i++) {
        a = Math.imul(a ^ text.charCodeAt(i), 0x01000193) >>> 0;
        b = Math.imul(b ^ text.charCodeAt(i), 0x811c9dc5) >>> 0;
    }
    return (a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0")).repeat(4);
}

export class SimProcess {
    constructor(readonly world: World, readonly writer: Writer, readonly cli: string) {}

    get alive(): boolean {
        return this.world.alive.has(this.writer.id);
    }

    host(): JournalHost<Line> {
        const world = this.world;
        return {
            now: () => world.now,
            self: () => this.writer,
            runId: (address) => address ?? this.writer.id,
            open: (urn, header) => (/^urn:pulumi:/.test(urn) ? world.open(this, header) : undefined),
            digest,
            // Nothing the journal waits for here takes time: a sleep only lets what is already under way end first.
            sleep: (ms) => new Promise((resolve) => {
                world.now += Math.min(ms, 1);
                setImmediate(resolve);
            }),
        };
    }
}

