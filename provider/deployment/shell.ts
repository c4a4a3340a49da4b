// The crash journal's shell: it carries out what the decision core (provider/journal/journal.ts) decides. Before each
// step it tells the core what the storage shows and the time; after it, it carries the step's actions out in order
// (append a line, take a dead process's file, close, say) and feeds back what they came to (a file taken or not, the
// storage refusing, a policy read, whether the engine is still there). Everything that waits is here: the write that
// waits until its line is kept, the reads of a report, the end of the run. The same shell runs on a real machine
// (deployment.ts gives it disks, PIDs and a bucket) and in the simulator (sim/ gives it memory and a seeded world).

import { Code, IamError } from "../iam/errors";
import type { IamFetcher } from "../iam/fetcher";
import type { Recorded } from "../iam/parentPolicy";
import type { Parent } from "../iam/names";
import type { Policy } from "../iam/policy";
import { Claim, Kept, ResourceContext } from "../resources/resource";
import type { Notice } from "../journal/claims";
import { Journal, Operation, ReadResult, ReportPlan, RunCommand } from "../journal/journal";
import { EARLY_REPORT_MS, Line } from "../journal/knowledge";
import { Rules } from "../journal/rules";
import type { JournalHost, Peer, Store } from "./host";

export type { OperationKind, RunCommand } from "../journal/journal";

/** Where the deployment says what it finds (the server gives it the engine's log: protocol/log.ts). */
export interface Diagnostics {
    warn(message: string): void;
    debug(message: string): void;
}

/** What every operation gets from the server; the deployment makes the rest of its ResourceContext. */
export type BaseContext = Pick<ResourceContext, "iam" | "warn">;

/** What the journal asks of Google: a fresh read of a policy, with the credentials of the provider that wrote to it. */
export type PolicyReader = Pick<IamFetcher, "getIamPolicy">;

/** Whether the engine still runs (it then holds the outcome of every operation answered to it). */
export type EngineAlive = () => Promise<boolean>;

/** Why the storage refused, for a person: its error code where it has one. */
function reason(e: unknown): string {
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === "string" ? code : String(e);
}

export class JournalShell {
    private readonly core: Journal;
    private store?: Store<Line>;
    private engineAddress?: string;
    private run = "";
    /** The peers as last shown to the core, by file: what a `take` action names. */
    private peers = new Map<string, Peer<Line>>();
    private readonly running = new Set<Promise<unknown>>();

    /**
     * `iam`: the reader of the provider this process serves, when it is configured (what checks a journaled grant
     * against Google before it is said). `runCommand`: what the CLI's command line says, read only where a decision
     * may need it (reading it may start a process: macOS `ps`, kept off a run of lookups alone).
     */
    constructor(private readonly host: JournalHost<Line>, private readonly log: Diagnostics,
        private readonly iam: (provider: string) => PolicyReader | undefined,
        private readonly runCommand: () => RunCommand = () => ({}), rules: Rules = new Rules()) {
        this.core = new Journal(host.self(), (t) => host.digest(t), rules);
    }

    /** Tells the core the time and, unless the step reads no other file (`files` false), what the storage shows now. */
    private observe(files: boolean): void {
        if (!files) return this.core.observe({ now: this.host.now() });
        const store = this.store;
        const peers = store ? store.peers() : [];
        this.peers = new Map(peers.map((p) => [p.file, p]));
        this.core.observe({ now: this.host.now(), peers: peers.map((p) => ({ ...p, alive: store?.runs(p) ?? false })) });
    }

    /** Carries out the core's actions, in order, feeding back what they came to. */
    private drain(): void {
        for (let a = this.core.next(); a; a = this.core.next()) {
            const store = this.store;
            switch (a.kind) {
                case "append":
                    if (!store) break;
                    try {
                        store.append(a.line, a.durable);
                    } catch (e) {
                        this.core.storageFailed(`writing failed (${reason(e)})`);
                    }
                    break;
                case "take": {
                    const peer = this.peers.get(a.file);
                    if (!store || !peer) {
                        this.core.took(a.file, false);
                        break;
                    }
                    let taken = false;
                    try {
                        // A line the store refuses closes it at once (a store whose file failed while carrying
                        // keeps the taken one, for a later process to take again).
                        taken = store.take(peer, () => {
                            for (const line of a.carry) {
                                try {
                                    store.append(line);
                                } catch (e) {
                                    this.core.storageFailed(`writing failed (${reason(e)})`);
                                    this.drain();
                                    return;
                                }
                            }
                        });
                    } catch (e) {
                        this.core.storageFailed(`taking over what a dead process left failed (${reason(e)})`);
                    }
                    this.core.took(a.file, taken);
                    break;
                }
                case "close":
                    this.store = undefined;
                    store?.close(a.remove);
                    break;
                case "warn":
                    this.log.warn(a.message);
                    break;
                case "debug":
                    this.log.debug(a.message);
                    break;
            }
        }
    }

    /**
     * One step of the core: told the world first, its actions carried out after. `files` false: a step that reads no
     * other process's file (a write's record, its undo, the provider, the engine's presence, a report's reads) is told
     * the time alone, so the write path reads no folder.
     */
    private step<T>(f: () => T, files = true): T {
        this.observe(files);
        const out = f();
        this.drain();
        return out;
    }

    private command?: RunCommand;

    /** Reads the CLI's command line once, where a decision may need it, and tells the core (see Journal.told). */
    private tellCommand(): RunCommand {
        if (!this.command) {
            this.command = this.runCommand();
            this.core.told(this.command);
        }
        return this.command;
    }

    /** A resource request: the command line is read, and the run marked (which run of its CLI this is). */
    private resourceRequest(): void {
        const command = this.tellCommand();
        if (!this.core.wantsRunMark) return;
        const store = this.store;
        this.core.runMarkedAs(store !== undefined && command.previewsFirst === true && store.laterRunOfCli(this.run));
    }

    /** The engine's address: the processes it starts for one run are its children, and share the address. */
    engine(address: string | undefined): void {
        if (address && !this.core.attached) this.engineAddress = address;
    }

    /** The provider this process serves (Configure): its URN and where it sends requests. */
    provider(urn: string, endpoint: string): void {
        this.step(() => this.core.provider(urn, endpoint), false);
        this.reportEarly();
    }

    /**
     * The first resource request names the stack: opens this process's file in the stack's folder, and the core
     * takes over what dead processes left there. Never throws: without the folder the deployment runs on.
     */
    attach(urn: string): void {
        if (this.core.attached) return;
        const run = this.host.runId(this.engineAddress);
        const opened = this.host.open(urn, { op: "hello", writer: this.host.self(), run });
        if (!opened) return;
        this.run = run;
        if ("store" in opened) this.store = opened.store;
        this.step(() => this.core.attach("store" in opened ? { run, where: opened.store.where } : { run, where: opened.where, why: opened.why }));
        this.reportEarly();
    }

    private reportEarly(): void {
        if (!this.core.earlyReportDue()) return;
        const work = this.report(this.host.now() + EARLY_REPORT_MS, true).catch((e: unknown) => {
            this.log.debug(`the crash journal's report failed: ${e instanceof Error ? e.message : String(e)}`);
        });
        this.running.add(work);
        void work.finally(() => this.running.delete(work));
    }

    /** Check: records what `urn` declares; returns, once per pair, a warning for each of two resources that fight. */
    declare(urn: string, claim: Claim): Notice[] {
        this.resourceRequest();
        return this.step(() => this.core.declare(urn, claim));
    }

    /** The engine sent `urn`'s state (see Journal.state). */
    state(urn: string, held: Claim | undefined, declared?: Claim, replaced = false): { force: boolean; tell: string[] } {
        this.attach(urn);
        this.resourceRequest();
        return this.step(() => this.core.state(urn, held, declared, replaced));
    }

    /**
     * Runs a resource operation inside the deployment, as middleware wraps a handler: the stack's folder is open
     * before it, the operation gets what the deployment keeps and notes (its ResourceContext), and the core hears of
     * its start, its writes and its answer (`scope`: the claim of the state it leaves).
     */
    async operation<T>(op: Operation, base: BaseContext, run: (ctx: ResourceContext) => Promise<T>,
        scope: (result: T) => Claim | undefined): Promise<T> {
        this.attach(op.urn);
        this.resourceRequest();
        const begun = this.step(() => this.core.begin(op));
        let resourceId: string | undefined;
        const work = run({
            ...base,
            urn: op.urn,
            named: (id) => (resourceId = id),
            kept: (parent): Kept => this.step(() => this.core.kept(parent, op.urn)),
            wrote: (parent, before, after, deadline) => this.wrote(op.urn, resourceId, parent, before, after, deadline),
            fenced: (parent, current) => this.step(() => this.core.fence(parent, current), false),
        });
        this.running.add(work);
        try {
            const result = await work;
            // A refresh that finds the resource gone answers nothing: the engine drops it, as for a Delete.
            const gone = op.kind === "refresh" && result === undefined;
            const { keepFirst } = this.step(() => this.core.answered(op, begun, { gone, claim: op.kind === "delete" || gone ? undefined : scope(result) }));
            if (keepFirst) await this.synced();
            return result;
        } catch (e) {
            this.step(() => this.core.failed(op));
            throw e;
        } finally {
            this.running.delete(work);
        }
    }

    /** Resolves once every line appended so far is kept (never rejects: a store that refuses is given up, and said). */
    private synced(): Promise<void> {
        const store = this.store;
        if (!store) return Promise.resolve();
        return store.sync().catch((e: unknown) => {
            if (this.store === store) {
                this.core.storageFailed(`writing failed (${reason(e)})`);
                this.drain();
            }
        });
    }

    /** A write is about to be sent: journaled first; the write waits until the line is kept. */
    private wrote(urn: string, resourceId: string | undefined, parent: Parent, before: Policy, after: Policy, until: number): Recorded {
        const id = this.step(() => this.core.wrote(urn, resourceId, parent, before, after, until), false);
        const landed = (written: Policy) => this.step(() => this.core.landed(parent, id, written));
        if (id === undefined) return { undo: () => undefined, landed, durable: Promise.resolve() };
        return { undo: () => this.step(() => this.core.undone(id), false), landed, durable: this.synced() };
    }

    stop(): void {
        this.core.stop();
    }

    cancel(): void {
        this.core.cancel();
    }

    /**
     * At the end of this process: waits for the operations under way; if the engine is still there, it holds every
     * answer given before the stop, so their items are settled; then says what stays open.
     */
    async finish(engineAlive: EngineAlive, budgetMs: number): Promise<void> {
        const deadline = this.host.now() + budgetMs;
        await Promise.race([Promise.allSettled([...this.running]), this.host.sleep(Math.max(0, deadline - this.host.now() - 1000))]);
        const ask = this.step(() => this.core.endOfRun());
        const alive = ask ? await engineAlive() : false;
        this.step(() => this.core.engineThere(alive), false);
        await this.report(deadline);
    }

    /** Reads what the core's report asks for, with this process's provider's credentials, and tells it what came back. */
    private async report(deadline: number, early = false): Promise<void> {
        if (this.core.anythingOpen) this.tellCommand();
        const plan: ReportPlan | undefined = this.step(() => this.core.reportPlan(early));
        if (!plan) return;
        const results = await Promise.all(plan.groups.map(async ({ read }): Promise<ReadResult> => {
            const fetcher = read.ask ? this.iam(read.provider) : undefined;
            if (!fetcher) return { unavailable: true };
            try {
                return { policy: await fetcher.getIamPolicy(read.parent, { fresh: true, deadline }) };
            } catch (e) {
                if (e instanceof IamError && e.code === Code.CANCELLED) return { cancelled: true };
                return { error: e instanceof Error ? e.message : String(e) };
            }
        }));
        this.step(() => this.core.reported(plan, results), false);
    }

    /** At exit: the file stays while it holds what another process needs. */
    close(): void {
        this.step(() => this.core.close());
    }
}
