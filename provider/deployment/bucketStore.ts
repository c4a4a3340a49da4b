// The crash journal beside a stack's state in a `gs://` bucket, so a runner that replaces a lost one finds what it
// left. Each process keeps, under `<prefix>/.pulumi/plugins-state/pulumi-resource-cloud/stacks/<key>/<id>/`:
//   - `<seq>.jsonl`: its lines, a batch per object, each created only where none is (`ifGenerationMatch=0`) and in
//     order (gcs.ts's log lane): a reader takes a peer's batches in sequence, stopping at the first it lacks;
//   - `lease`: rewritten every LEASE_RENEW_MS while it runs (lease.ts says when it counts as dead); `closed` once it
//     ended leaving lines another process needs;
//   - `claim-<n>`: who took it over (the n-th taker), created only where none is: of two processes that would
//     take a dead one's lines (on two machines, or one), one creates it, and only that one acts on them.
// A process's own file on this machine (files.ts, in PULUMI_HOME) stays what it is: this machine's processes read
// each other's lines there at once and tell by their PIDs who runs. The bucket adds what another machine needs:
// lines that guard a write are in the bucket (written and acknowledged) before the write is sent, and a dead
// process's lines are taken there by one process only. When the bucket fails (missing, refused, too slow), the
// process says so once and goes on with its file here: nothing is removed because of it.

import type { Peer, Store } from "./host";
import type { Answer, Bucket, Listed } from "./gcs";
import { leaseRuns, LEASE_RENEW_MS } from "./lease";
import { pidSays, ProcessFile, thisProcess } from "./files";

interface RemotePeer<L> {
    id: string;
    peer: Peer<L>;
    /** The next batch to read (a reader never skips one). */
    next: number;
    objects: Map<string, Listed>;
    claims: number;
    closed: boolean;
}

const BATCH = /^(\d{8})\.jsonl$/;
const CLAIM = /^claim-(\d+)$/;
const seqName = (n: number) => `${String(n).padStart(8, "0")}.jsonl`;

export class BucketStore<L> implements Store<L> {
    private pending: L[] = [];
    private seq = 0;
    private readonly remote = new Map<string, RemotePeer<L>>();
    /** The bucket's clock less this one's, as last seen. */
    private skew = 0;
    private failed?: string;
    private renewing?: NodeJS.Timeout;
    private busy = false;
    private closed = false;
    /** Objects of taken processes whose removal is under way (see take). */
    private readonly removing = new Set<string>();
    /** The processes this one took: what of them a listing still shows is going, not to be read (or taken) again. */
    private readonly taken = new Set<string>();

    /** Opens the journal in the bucket, beside `local` (this process's file here, its header written); throws with the reason it cannot. */
    constructor(private readonly local: ProcessFile<L>, private readonly bucket: Bucket, private readonly folder: string,
        header: L, private readonly warn: (why: string) => void) {
        this.refreshNow();
        this.pending.push(header);
        const me = this.mine("lease");
        const [batch, lease] = this.bucket.now([this.batchRequest(), this.bucket.write(me, JSON.stringify({ writer: thisProcess().id }))]);
        for (const a of [batch, lease]) if (a.status !== 200) throw new Error(this.bucket.why(a));
        this.renewing = setInterval(() => void this.renew(), LEASE_RENEW_MS);
        this.renewing.unref();
    }

    get where(): string {
        return `gs://${this.bucket.bucket}/${this.folder}`;
    }

    private mine(name: string): string {
        return `${this.folder}/${thisProcess().id}/${name}`;
    }

    private batchRequest() {
        const lines = this.pending.splice(0);
        return this.bucket.write(this.mine(seqName(this.seq++)), lines.map((l) => `${JSON.stringify(l)}\n`).join(""), { onlyNew: true });
    }

    /** The bucket failed: said once; the journal goes on here. */
    private fail(why: string): void {
        if (this.failed) return;
        this.failed = why;
        this.pending = [];
        if (this.renewing) clearInterval(this.renewing);
        this.warn(why);
    }

    private checked(a: Answer, ok = 200): boolean {
        if (a.status === ok) return true;
        this.fail(this.bucket.why(a));
        return false;
    }

    append(line: L, durable = false): void {
        this.local.append(line, durable);
        if (this.failed || this.closed) return;
        this.pending.push(line);
        if (durable) this.flushNow();
    }

    /** Writes what is pending, and waits for the bucket's answer. */
    private flushNow(): void {
        if (this.failed || this.pending.length === 0) return;
        this.checked(this.bucket.now([this.batchRequest()])[0]);
    }

    private uploading?: Promise<void>;
    private queued?: Promise<void>;

    /**
     * Resolves once every line appended before the call is here and in the bucket (or the bucket failed, and said
     * so). Calls that come while a batch is on its way share the next one, so a burst of writes costs one request.
     */
    sync(): Promise<void> {
        this.queued ??= (this.uploading ?? Promise.resolve()).then(async () => {
            this.uploading = this.queued;
            this.queued = undefined;
            if (this.failed || this.pending.length === 0) return;
            // The log lane keeps batches in order: this one is answered after every earlier one.
            this.checked((await this.bucket.later([this.batchRequest()]))[0]);
        });
        return Promise.all([this.local.sync(), this.queued]).then(() => undefined);
    }

    /** Renews the lease and reads what the other processes added (at most one at a time). */
    private async renew(): Promise<void> {
        if (this.busy || this.failed || this.closed) return;
        this.busy = true;
        try {
            const [lease] = await this.bucket.later([this.bucket.write(this.mine("lease"), JSON.stringify({ writer: thisProcess().id }))]);
            if (!this.checked(lease)) return;
            const { items, date } = await this.bucket.listAllLater(`${this.folder}/`); // throws: read again at the next renewal
            const want = this.merge(items, date);
            const answers = await this.bucket.later(want.map((w) => this.bucket.read(w.name)));
            this.learn(want, answers);
        } catch {
            // a missed renewal is only a later one
        } finally {
            this.busy = false;
        }
    }

    /** Lists the stack's folder and reads every batch not yet read, waiting for it; throws when the bucket refuses. */
    private refreshNow(): void {
        const { items, date } = this.bucket.listAll(`${this.folder}/`);
        const want = this.merge(items, date);
        const answers = this.bucket.now(want.map((w) => this.bucket.read(w.name)));
        this.learn(want, answers);
    }

    /** Takes a listing in; returns the batches (and claims) to read, in order. */
    private merge(items: Listed[], date: number | undefined): { peer: RemotePeer<L>; name: string; seq?: number; claim?: number }[] {
        if (date !== undefined) this.skew = date - Date.now();
        const me = thisProcess().id;
        const seen = new Map<string, Listed[]>();
        for (const o of items) {
            const rest = o.name.slice(this.folder.length + 1).split("/");
            if (rest.length !== 2 || rest[0] === me || this.taken.has(rest[0]) || !/^[\w-]+$/.test(rest[0])) continue;
            seen.set(rest[0], [...(seen.get(rest[0]) ?? []), o]);
        }
        for (const id of [...this.remote.keys()]) if (!seen.has(id)) this.remote.delete(id); // removed by its writer or its taker
        const want: { peer: RemotePeer<L>; name: string; seq?: number; claim?: number }[] = [];
        for (const [id, objects] of seen) {
            let r = this.remote.get(id);
            if (!r) {
                r = { id, peer: { file: `gs://${this.bucket.bucket}/${this.folder}/${id}`, lines: [], touched: 0 }, next: 0, objects: new Map(), claims: 0, closed: false };
                this.remote.set(id, r);
            }
            r.objects = new Map(objects.map((o) => [o.name.slice(o.name.lastIndexOf("/") + 1), o]));
            r.closed = r.objects.has("closed");
            r.peer.touched = Math.max(...objects.map((o) => o.updated)) - this.skew;
            for (let n = r.next; r.objects.has(seqName(n)); n++) want.push({ peer: r, name: `${this.folder}/${id}/${seqName(n)}`, seq: n });
            const claims = Math.max(0, ...[...r.objects.keys()].map((k) => Number(CLAIM.exec(k)?.[1] ?? 0)));
            if (claims > r.claims) want.push({ peer: r, name: `${this.folder}/${id}/claim-${claims}`, claim: claims });
        }
        return want;
    }

    private learn(want: { peer: RemotePeer<L>; name: string; seq?: number; claim?: number }[], answers: Answer[]): void {
        want.forEach((w, i) => {
            const a = answers[i];
            if (a?.status !== 200) return; // read at the next listing
            if (w.claim !== undefined) {
                w.peer.claims = w.claim;
                const by = (JSON.parse(a.body || "{}") as { by?: unknown }).by;
                if (typeof by === "string") w.peer.peer.takenBy = by;
                return;
            }
            if (w.seq !== w.peer.next) return; // an earlier batch was not read: this one waits for it
            w.peer.next++;
            for (const raw of a.body.split("\n")) {
                if (!raw) continue;
                try {
                    const line = JSON.parse(raw) as L;
                    if (w.peer.peer.lines.length === 0 && w.peer.peer.writer === undefined) {
                        const writer = (line as { writer?: Peer<L>["writer"] } | null)?.writer;
                        if (writer && typeof writer.id === "string" && typeof writer.pid === "number") w.peer.peer.writer = writer;
                    }
                    w.peer.peer.lines.push(line);
                } catch {
                    // a batch is written whole or not at all: nothing to skip but what is not JSON
                }
            }
        });
    }

    /** This machine's files, and the bucket's of processes that have none here (another machine's, or gone from here). */
    peers(): Peer<L>[] {
        const local = this.local.peers();
        const here = new Set(local.flatMap((p) => (p.writer ? [p.writer.id] : [])));
        return [...local, ...[...this.remote.values()].filter((r) => !here.has(r.id) && r.peer.writer).map((r) => r.peer)];
    }

    private remoteOf(peer: Peer<L>): RemotePeer<L> | undefined {
        return [...this.remote.values()].find((r) => r.peer === peer);
    }

    runs(peer: Peer<L>): boolean {
        const r = this.remoteOf(peer);
        if (!r) return this.local.runs(peer);
        if (!peer.writer) return false;
        const renewed = r.objects.size ? Math.max(...[...r.objects.values()].map((o) => o.updated)) : undefined;
        return leaseRuns({ pid: pidSays(peer.writer), closed: r.closed, renewed }, Date.now() + this.skew);
    }

    /**
     * Takes a dead process's lines: first its next claim in the bucket (only one process creates it), then its file
     * here if it has one; `keep` carries what must outlive them into this process's file and batch, which are kept
     * (here and in the bucket) before the taken ones are removed.
     */
    take(peer: Peer<L>, keep: () => void): boolean {
        const id = peer.writer?.id;
        const remote = this.remoteOf(peer);
        if (!id || this.failed) return remote ? false : this.local.take(peer, keep);
        let names: string[];
        try {
            names = this.bucket.listAll(`${this.folder}/${id}/`, "log").items.map((o) => o.name);
        } catch (e) {
            this.fail(e instanceof Error ? e.message : String(e));
            return false;
        }
        const claims = Math.max(0, ...names.map((n) => Number(CLAIM.exec(n.slice(n.lastIndexOf("/") + 1))?.[1] ?? 0)));
        const claim = `${this.folder}/${id}/claim-${claims + 1}`;
        const [claimed] = this.bucket.now([this.bucket.write(claim, JSON.stringify({ by: thisProcess().id }), { onlyNew: true })]);
        if (claimed.status === 412) return false; // another process took it first
        if (!this.checked(claimed)) return false;
        const carry = () => {
            keep();
            this.flushNow();
        };
        if (!remote) {
            if (!this.local.take(peer, carry)) return false;
        } else {
            carry();
            if (this.closed) return false; // this file failed while carrying: the taken one stays, for another to take
        }
        // The taken objects go while this process goes on (a burst of deletes it need not wait for): its first batch
        // first, so that whatever a crash leaves of the rest, no reader reads it (a reader stops at the first batch it
        // lacks); what is not gone by this process's close is removed then, in the same order.
        this.taken.add(id);
        if (!this.failed) {
            const first = names.find((n) => n === `${this.folder}/${id}/${seqName(0)}`);
            const rest = [...names.filter((n) => n !== first), claim];
            for (const n of first ? [first, ...rest] : rest) this.removing.add(n);
            // Beside the log lane, not in it: the journal's own records do not wait behind them.
            const ask = (ns: string[]) => this.bucket.later(ns.map((n) => this.bucket.remove(n, "free"))).then((answers) => ns.forEach((n, i) => {
                if ([200, 204, 404].includes(answers[i]?.status ?? 0)) this.removing.delete(n);
            }));
            // The rest only once the first is gone; else all of it is left for the close.
            void (first ? ask([first]) : Promise.resolve()).then(() => (first && this.removing.has(first) ? undefined : ask(rest)));
        }
        this.remote.delete(id);
        return true;
    }

    laterRunOfCli(run: string): boolean {
        return this.local.laterRunOfCli(run);
    }

    /** Stops renewing; removes this process's objects (then its file here) when `remove`, else says it ended. */
    close(remove: boolean): void {
        if (this.closed) return;
        this.closed = true;
        if (this.renewing) clearInterval(this.renewing);
        if (!this.failed) {
            const budget = Math.min(this.bucket.budgetMs, 5000);
            // What of the taken processes is not gone yet: each one's first batch, then the rest (see take).
            const firsts = [...this.removing].filter((n) => n.endsWith(`/${seqName(0)}`));
            for (const ns of [firsts, [...this.removing].filter((n) => !firsts.includes(n))]) {
                if (ns.length) this.bucket.now(ns.map((n) => this.bucket.remove(n, "free")), budget);
            }
            if (remove) {
                let names: string[] = [];
                try {
                    names = this.bucket.listAll(`${this.folder}/${thisProcess().id}/`, "log", budget).items.map((o) => o.name);
                } catch {
                    // left: a later process finds them closed or their lease run out, and takes them
                }
                this.bucket.now(names.map((n) => this.bucket.remove(n)), budget);
            } else {
                this.bucket.now([...(this.pending.length ? [this.batchRequest()] : []), this.bucket.write(this.mine("closed"), "{}")], budget);
            }
        }
        this.local.close(remove);
    }
}
