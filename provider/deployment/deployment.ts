// The deployment: what the plugin processes of one engine run declare, write and change, and what earlier runs
// left behind — one object, around every resource operation (the server calls it before and after each, as
// middleware wraps a handler; the resources see only a ResourceContext).
//
// Why it exists: a Create or Update is answered once Google has accepted its write; if the plugin dies before
// the engine records the answer (killed, out of memory, the engine itself killed), the grant is in the policy and
// in no state. So each write that adds grants is noted first, on disk, in the stack's folder (files.ts), and it
// stays noted until the engine shows it has the resource: a later operation carrying its state (Diff, Update,
// Read, Delete). A later process takes over what dead processes left and settles each such write once:
//   - the engine shows it has the resource, or the deployment writes it again and answers: nothing to do;
//   - the deployment still declares the resource (Check) but did not touch it: left for a later run;
//   - a deployment that changes something, in which nothing declares or mentions the resource: a write that was
//     never answered is removed (the engine never heard of it); one that was answered (the engine may hold it,
//     e.g. an update with --target left it alone) is reported with what to do, never removed.
// The same files carry every process's claims (Check), so a Delete keeps what any resource of the deployment
// declares, and resources that fight over a grant are told so, whichever process serves them.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { IamFetcher } from "../iam/fetcher";
import type { Recorded } from "../iam/parentPolicy";
import { changesBetween, describeGrant, Grant, grantKey, grantsOf } from "../iam/grants";
import { Parent, parentName } from "../iam/names";
import { Policy } from "../iam/policy";
import { Logger } from "../log";
import type { ResourceContext } from "../resources/resource";
import { PACKAGE_NAME } from "../version";
import { Claim, conflictOf, Kept, Notice, shortUrn } from "./claims";
import { crypto, Peer, privateFolder, ProcessFile, stillRuns, thisProcess, Writer } from "./files";

/** A write that added grants, not yet known to be in the engine's state. */
interface Entry {
    urn: string;
    parent: Parent;
    grants: Grant[];
    /** Its operation was answered to the engine (which may or may not have recorded it). */
    answered: boolean;
}

type Line =
    | { op: "hello"; writer: Writer; run: string }
    | { op: "declare"; urn: string; claim: Claim }
    | ({ op: "wrote"; n: number } & Entry)
    | { op: "undone"; n: number }
    /** A Create or Update of the URN was answered (not a preview). */
    | { op: "answered"; urn: string }
    /** The engine sent the URN's state: it holds the resource. */
    | { op: "recorded"; urn: string }
    /** What earlier runs wrote for the URN is settled (removed, reported, or found recorded). */
    | { op: "settled"; urn: string }
    | { op: "closed" };

/** `$PULUMI_HOME/plugins-state/pulumi-resource-cloud`: this plugin's own state beside the user's Pulumi data. */
function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
    const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return path.join(home, "plugins-state", `pulumi-resource-${PACKAGE_NAME}`);
}

/**
 * The backend the CLI uses, as far as a plugin can tell: PULUMI_BACKEND_URL, else the one `pulumi login` made
 * current (credentials.json). A project's `backend.url` in Pulumi.yaml is not seen.
 */
function backendOf(env: NodeJS.ProcessEnv): string {
    if (env.PULUMI_BACKEND_URL) return env.PULUMI_BACKEND_URL;
    try {
        const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
        const current = (JSON.parse(fs.readFileSync(path.join(home, "credentials.json"), "utf8")) as { current?: unknown }).current;
        return typeof current === "string" ? current : "";
    } catch {
        return "";
    }
}

/**
 * The stack's folder name: `<project>--<stack>-<hash>`, the hash over project, stack and backend, so stacks of the
 * same names in two backends keep apart. Undefined if `urn` is not a URN.
 */
function stackKey(urn: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
    if (!m) return undefined;
    const [, stack, project] = m;
    const hash = crypto().createHash("sha256").update(JSON.stringify([project, stack, backendOf(env)])).digest("hex").slice(0, 12);
    return `${project}--${stack}`.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80) + `-${hash}`;
}

/** What a file's lines say is still unsettled: the writes not undone, recorded or settled since. */
function unsettledIn(lines: readonly Line[]): Entry[] {
    const open = new Map<number, Entry>();
    for (const line of lines) {
        switch (line.op) {
            case "wrote":
                if (Array.isArray(line.grants)) open.set(line.n, { urn: line.urn, parent: line.parent, grants: line.grants, answered: line.answered === true });
                break;
            case "undone":
                open.delete(line.n);
                break;
            case "answered":
                for (const e of open.values()) if (e.urn === line.urn) e.answered = true;
                break;
            case "recorded":
            case "settled":
                for (const [n, e] of open) if (e.urn === line.urn) open.delete(n);
                break;
        }
    }
    return [...open.values()];
}

const runOf = (peer: Peer<Line>): string | undefined => {
    const hello = peer.lines[0];
    return hello?.op === "hello" ? hello.run : undefined;
};

const closedIn = (peer: Peer<Line>): boolean => peer.lines.some((l) => l.op === "closed");

/** A resource operation, as what its request tells of the engine's state: a Read is a refresh (with state) or an import. */
export type OperationKind = "create" | "import" | "refresh" | "update" | "delete";

export class Deployment {
    /** The engine run (see attach): every plugin process the engine starts for one operation shares it. */
    private run = "";
    private engineAddress?: string;
    private file?: ProcessFile<Line>;
    private attached = false;
    /** Every claim of the run, by URN: this process's (`own`) and its other processes', as their files grow. */
    private readonly claims = new Map<string, Claim>();
    private readonly own = new Set<string>();
    /** How many lines of each of the run's other files are in `claims` and `mentioned` already. */
    private readonly gathered = new Map<string, number>();
    private readonly warnedPairs = new Set<string>();
    /** This process's writes not yet shown recorded, by line number. */
    private readonly mine = new Map<number, Entry>();
    /** Taken over from dead processes, by URN. */
    private readonly orphans = new Map<string, Entry[]>();
    /** URNs whose state the engine sent, or whose write was answered, in this run (any of its processes). */
    private readonly mentioned = new Set<string>();
    private lines = 0;
    /** Whether this deployment changed anything (a Create, Update or Delete that was not a preview). */
    changed = false;

    constructor(private readonly log: Logger, private readonly env: NodeJS.ProcessEnv = process.env) {}

    /** The engine's address: the processes it starts for one run are its children, and share the address. */
    engine(address: string | undefined): void {
        if (address && !this.attached) this.engineAddress = address;
    }

    /**
     * The first resource request names the stack: opens this process's file in the stack's folder, takes over
     * what dead processes left there, and tells the user of the writes no run answered. Never throws: without the
     * folder the deployment runs on, and the user is told why once.
     */
    attach(urn: string): void {
        if (this.attached) return;
        const key = stackKey(urn, this.env);
        if (!key) return;
        this.attached = true;
        // The engine's PID and address when known, else this process alone (hashed here, not at start: see crypto()).
        this.run = this.engineAddress ? crypto().createHash("sha256").update(`${process.ppid}|${this.engineAddress}`).digest("hex").slice(0, 16) : thisProcess().id;
        const root = stateRoot(this.env);
        const folder = path.join(root, "stacks", key);
        for (const dir of [root, path.join(root, "stacks"), folder]) {
            const problem = privateFolder(dir);
            if (problem) return this.unprotected(dir, problem);
        }
        try {
            this.file = new ProcessFile<Line>(folder, { op: "hello", writer: thisProcess(), run: this.run });
        } catch (e) {
            return this.unprotected(folder, `a file cannot be written there (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
        }
        this.takeOver();
        this.report();
    }

    /** The folder cannot be used: said once, on the stack. */
    private unprotected(where: string, why: string): void {
        this.file?.close(false);
        this.file = undefined;
        this.log.warn(`the plugin cannot keep its crash journal in ${where}: ${why}. This deployment goes on, but a grant ` +
            "written just before a crash would not be found by the next run, and a Delete does not see what other plugin " +
            "processes of this deployment declare. Fix the folder (it must be yours, mode 0700, not a link, writable) or set " +
            "PULUMI_HOME to one that is.");
    }

    private append(line: Line, durable = false): void {
        if (!this.file) return;
        try {
            this.file.append(line, durable);
        } catch (e) {
            this.unprotected(this.file.folder, `writing failed (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
        }
    }

    /** Takes the files of processes that no longer run: their unsettled writes become this process's orphans. */
    private takeOver(): void {
        if (!this.file) return;
        for (const peer of this.file.peers()) {
            if (peer.writer ? stillRuns(peer.writer, peer.touched) : Date.now() - peer.touched < 60_000) continue;
            const left = unsettledIn(peer.lines);
            const sameRun = runOf(peer) === this.run;
            // A dead peer of this run with nothing left keeps its file: its claims are this run's.
            if (sameRun && left.length === 0) continue;
            // Carried in this process's own file from now on, so that they outlive it if it dies too.
            this.file.take(peer, () => {
                if (sameRun) {
                    for (const l of peer.lines) {
                        if (l.op === "declare" || l.op === "answered" || l.op === "recorded") {
                            this.learn(l);
                            this.append(l);
                        }
                    }
                }
                for (const e of left) {
                    this.orphans.set(e.urn, [...(this.orphans.get(e.urn) ?? []), e]);
                    this.append({ op: "wrote", n: ++this.lines, ...e }, true);
                }
            });
        }
    }

    /** What dead processes wrote that no run answered, for the user (once per process). */
    private report(): void {
        const lines = [...this.orphans.values()].flat().filter((e) => !e.answered).flatMap((e) =>
            e.grants.map((g) => `  ${describeGrant(g)} on ${parentName(e.parent)} (for ${shortUrn(e.urn)})`));
        if (lines.length === 0) return;
        this.log.warn("an earlier run of this provider stopped after writing these grants, before Pulumi recorded them:\n" +
            `${lines.join("\n")}\n` +
            "`pulumi up` records them where the program still declares those resources and removes the others; " +
            "`pulumi destroy` removes them.");
    }

    /** The lines of this run's other processes (alive or not). */
    private runPeers(): Peer<Line>[] {
        return (this.file?.peers() ?? []).filter((p) => runOf(p) === this.run);
    }

    /** What another process of the run said: a claim (this process's own claim of a URN comes first), or a mention. */
    private learn(line: Line): void {
        if (line.op === "declare" && !this.own.has(line.urn)) this.claims.set(line.urn, line.claim);
        if (line.op === "answered" || line.op === "recorded") this.mentioned.add(line.urn);
    }

    /** Reads what the run's other processes appended since the last call (their files only grow). */
    private gather(): void {
        for (const peer of this.runPeers()) {
            for (const line of peer.lines.slice(this.gathered.get(peer.file) ?? 0)) this.learn(line);
            this.gathered.set(peer.file, peer.lines.length);
        }
    }

    /** Check: records what `urn` declares; returns, once per pair, a warning for each of two resources that fight. */
    declare(urn: string, claim: Claim): Notice[] {
        this.own.add(urn);
        this.claims.set(urn, claim);
        this.append({ op: "declare", urn, claim });
        this.gather();
        const notices: Notice[] = [];
        for (const [other, theirs] of this.claims) {
            if (other === urn || theirs.parent !== claim.parent) continue;
            const conflict = conflictOf(claim, theirs);
            if (!conflict) continue;
            const pair = [urn, other].sort().join("\n") + `\n${conflict.kind}`;
            if (this.warnedPairs.has(pair)) continue;
            this.warnedPairs.add(pair);
            notices.push({ urn, message: conflict.message(other) }, { urn: other, message: conflict.message(urn) });
        }
        return notices;
    }

    /**
     * What the deployment declares on `parent`: each resource's current claim from Check, in every process of the
     * run. A resource being deleted counts only if the program still declares it (then it is its own replacement).
     */
    private kept(parent: string): Kept {
        this.gather();
        const kept: Kept = { grants: new Map() };
        for (const [urn, claim] of this.claims) {
            if (claim.parent !== parent) continue;
            if (claim.scope === "policy") kept.policy = urn;
            for (const g of claim.grants) kept.grants.set(grantKey(g), urn);
        }
        return kept;
    }

    /**
     * Notes the grants a write of `urn` adds; the write waits for `durable` (the note on disk) before it is sent.
     * Returns the undo too, for a write no attempt of which can have applied.
     */
    private wrote(urn: string, parent: Parent, before: Policy, after: Policy): Recorded {
        const grants = changesBetween(grantsOf(before.bindings), grantsOf(after.bindings)).added;
        if (grants.length === 0) return { undo: () => undefined, durable: Promise.resolve() };
        const n = ++this.lines;
        const entry: Entry = { urn, parent, grants, answered: false };
        this.mine.set(n, entry);
        this.append({ op: "wrote", n, ...entry });
        const file = this.file;
        const durable = file ? file.sync().catch((e: unknown) => {
            if (this.file === file) this.unprotected(file.folder, `writing failed (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
        }) : Promise.resolve();
        return {
            undo: () => {
                this.mine.delete(n);
                this.append({ op: "undone", n });
            },
            durable,
        };
    }

    /**
     * Runs a resource operation inside the deployment, as middleware wraps a handler: the stack's folder is open
     * before it, the operation gets what the deployment keeps and notes (its ResourceContext), and what the request
     * and the answer tell of the engine's state is noted: a request carrying the resource's state shows the engine
     * holds it; a Create or Update answered (not a preview) is this run's write; a Delete done changed the stack.
     */
    async operation<T>(op: { urn: string; kind: OperationKind; preview: boolean },
        base: Pick<ResourceContext, "iam" | "warn">, run: (ctx: ResourceContext) => Promise<T>): Promise<T> {
        const urn = op.urn;
        this.attach(urn);
        // A refresh, an Update and a Delete carry the state the engine holds; a Create and an import have none.
        if (op.kind === "refresh" || op.kind === "update" || op.kind === "delete") this.recorded(urn);
        const result = await run({
            ...base,
            urn,
            kept: (parent) => this.kept(parent),
            wrote: (parent, before, after) => this.wrote(urn, parent, before, after),
        });
        if (!op.preview && (op.kind === "create" || op.kind === "update")) this.answered(urn);
        if (op.kind === "delete") this.changed = true;
        return result;
    }

    /** The engine sent `urn`'s state (Diff, Update, Read, Delete): it holds the resource, so nothing of it is at risk. */
    recorded(urn: string): void {
        this.attach(urn);
        this.mentioned.add(urn);
        this.orphans.delete(urn);
        for (const [n, e] of this.mine) if (e.urn === urn) this.mine.delete(n);
        // Written whatever this process holds: another process of the run may hold the URN's orphan.
        this.append({ op: "recorded", urn });
    }

    /**
     * A Create or Update of `urn` is being answered (not a preview): its writes stay noted until a later operation
     * shows the engine recorded them; what earlier runs wrote for it is superseded by this write.
     */
    private answered(urn: string): void {
        this.changed = true;
        this.mentioned.add(urn);
        for (const e of this.mine.values()) if (e.urn === urn) e.answered = true;
        this.append({ op: "answered", urn });
        if (this.orphans.delete(urn)) this.append({ op: "settled", urn });
    }

    /**
     * At the end of the run, settles the orphans (see the top of this file); returns what it did and what the user
     * must do, for the user. Removal goes through `iam`.
     */
    async settle(iam: IamFetcher | undefined): Promise<string[]> {
        if (this.orphans.size === 0) return [];
        this.gather();
        const notes: string[] = [];
        for (const [urn, entries] of [...this.orphans]) {
            if (this.mentioned.has(urn)) {
                this.orphans.delete(urn);
                this.append({ op: "settled", urn });
                continue;
            }
            if (this.claims.has(urn) || !this.changed) continue; // still declared, or a run that may be a preview: later
            try {
                for (const e of entries) {
                    const where = parentName(e.parent);
                    if (e.answered) {
                        notes.push(...e.grants.map((g) => `${describeGrant(g)} on ${where} was written for ${urn}, and Pulumi may not ` +
                            "have recorded that resource (its run ended abruptly) while the program no longer declares it. If " +
                            "`pulumi stack export` does not list it, the grant is not managed by any stack: remove it from the " +
                            "policy by hand if it is not wanted; if it lists it, nothing is to be done."));
                        continue;
                    }
                    if (!iam) throw new Error("no credentials configured in this run");
                    const keys = new Set(e.grants.map(grantKey));
                    const keep = this.kept(where).grants;
                    const drop = (g: Grant) => keys.has(grantKey(g)) && !keep.has(grantKey(g));
                    await iam.removeGrants(e.parent, drop);
                    notes.push(...e.grants.filter(drop).map((g) => `removed ${describeGrant(g)} from ${where}, written for ${urn} ` +
                        "by an earlier run that stopped before Pulumi recorded it; the program no longer declares that resource"));
                }
                this.orphans.delete(urn);
                this.append({ op: "settled", urn });
            } catch (err) {
                notes.push(`could not remove the grants written for ${urn} by an earlier run that stopped before Pulumi ` +
                    `recorded them (${err instanceof Error ? err.message : String(err)}); the next \`pulumi up\` or \`pulumi destroy\` tries again`);
            }
        }
        return notes;
    }

    /** At exit: the file stays while it holds what a later run must settle, or claims this run's peers may still read. */
    close(): void {
        if (!this.file) return;
        this.append({ op: "closed" });
        const holds = this.mine.size > 0 || this.orphans.size > 0;
        const peersRun = this.runPeers().some((p) => !closedIn(p) && p.writer !== undefined && stillRuns(p.writer, p.touched));
        this.file.close(!holds && !peersRun);
        this.file = undefined;
    }
}
