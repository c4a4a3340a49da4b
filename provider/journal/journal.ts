// The crash journal's decision core: what the plugin processes of one engine run declare, write and change, and what
// earlier runs left behind — one object around every resource operation. It is a state machine: each step (a
// request of the engine, the answer to a write, the end of the run) is a synchronous call that decides, and queues
// what is to be done as actions (events.ts: journal this line, take that file, say this). Its shell
// (provider/deployment/shell.ts) tells it what the storage shows and what time it is before each step, carries the
// actions out (the disk or bucket, Google, the engine's log) and feeds the results back. No step awaits anything.
//
// Why: a write is accepted by Google before the engine records the operation that made it. If the plugin or the
// engine dies in between, a grant is in IAM and in no state (a write that added it), or gone from IAM while the
// engine's state still holds it (a write that removed it). So every write is journaled first, grant by grant, each
// grant an *item* (`+` added, `-` removed), kept before the write is sent.
//
// The principle: the journal acts only on what it knows, and never removes a grant. An item is settled by the
// engine's word (a request carrying the state it keeps, or an operation answered to an engine that records it) or
// by Google's (a read, or the answer to a write, of the policy); what is still open is said, once per run, with the
// command that resolves it; where the program sets a grant the state and IAM disagree on, Diff asks for an update.
// Where the plugin cannot know (the CLI's command line unknown, a preview, a `--target` run), it takes the side that
// loses no grant, and a note that may be untrue says so. Each rule is named once in rules.ts; `this.rules.fires(…)`
// marks where it decides.

import { describeGrant, Grant, grantChanges, grantKey, grantKeysOf } from "../iam/grants";
import { grantId, Parent, parentName, PREFIX } from "../iam/names";
import { Policy } from "../iam/policy";
import { token } from "../package/tokens";
import { Claim, Kept, shortUrn } from "../resources/resource";
import { ClaimIndex, conflictOf, covers, Notice } from "./claims";
import type { Action, Attached, Operation, PeerView, ReadResult, ReportRead, RunCommand, World, Writer } from "./events";
import { closedIn, endpointOf, Entry, entryOf, identityOf, IN_FLIGHT_SLACK_MS, Item, Knowledge, Line, providerKey, runOf, setOf, writerOf } from "./knowledge";
import { Rules } from "./rules";

export type { Action, Attached, Operation, OperationKind, PeerView, ReadResult, ReportRead, RunCommand, World, Writer } from "./events";

/**
 * Whether the run leaves `urn` as the stack holds it: a `--target` run every resource it does not target (its
 * dependents, with `--target-dependents`, are not told apart: left alone), an `--exclude` run those it excludes.
 */
function leftAlone(command: RunCommand, urn: string): boolean {
    const matches = (patterns: string[]) => patterns.some((p) => p === urn ||
        (p.includes("*") && new RegExp(`^${p.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(urn)));
    if (command.targets?.length) return !matches(command.targets);
    if (command.excludes?.length) return matches(command.excludes);
    return false;
}

/** What an operation's start decided, for its end. */
export interface Begun {
    /** The Delete of a replaced resource (its URN Checked in this run): it carries the old state. */
    replaced: boolean;
}

/** A report in the making: the items to say, grouped by the policy each is checked against. */
export interface ReportPlan {
    early: boolean;
    groups: { read: ReportRead; items: Item[] }[];
    live: Set<string>;
}

export class Journal {
    /** The engine run (see attach): every plugin process the engine starts for one operation shares it. */
    private run = "";
    /** Where this process's file is, while the journal may use it. */
    private where?: string;
    private attachedYet = false;
    /** What the shell saw last: the time and the other files. */
    private view: { now: number; peers: PeerView[] } = { now: 0, peers: [] };
    private readonly outbox: Action[] = [];
    /** Operations and reports begun and not yet ended: the run's end records answers only when there are none. */
    private underWay = 0;
    private commandGiven?: RunCommand;
    /** This process's provider: its URN and endpoint (Configure), so a journaled write is checked where it was made. */
    private providerId = "";
    /** Every claim of the run, by URN: this process's (`own`) and its other processes', as their files grow. */
    private readonly claims = new ClaimIndex();
    private readonly own = new Set<string>();
    /** How many lines of each other file are learnt already. */
    private readonly gathered = new Map<string, number>();
    private readonly warnedPairs = new Set<string>();
    private readonly known = new Knowledge();
    /** This process's answered operations' items, delivered once the engine is known to have them. */
    private readonly answeredItems = new Set<string>();
    /** Other resources' removals of grants an answered operation of this process set again (see removal-held-elsewhere). */
    private readonly restored = new Set<string>();
    /** Entries whose write is under way (see `landed`). */
    private readonly writing = new Set<string>();
    private readonly forcedSaid = new Set<string>();
    private stopping = false;
    /** Items of this process's answered Reads (refresh, import): recorded only if the run is no preview. */
    private readonly answeredReads = new Set<string>();
    /** Resources this process has Read: a Diff's olds for them are the Read's answer, not the state the engine keeps. */
    private readonly readHere = new Set<string>();
    /**
     * How many Cancels the engine sent. It sends one as it closes each plugin, and one more to every plugin when the
     * user presses Ctrl-C: then a second Ctrl-C may end it without recording what it was answered.
     */
    private cancels = 0;
    /** A preview-flagged operation came: this process serves a preview, whatever the command line says. */
    private sawPreview = false;
    /** An operation no preview sends came (a Delete, an unflagged Create or Update): this process serves no preview. */
    private sawUpdate = false;
    /** When the first resource request came (the engine had read its state before). */
    private attachedAt?: number;
    /** This run came after another of the same CLI process (the update after its preview): see laterRunOfCli. */
    private laterRun = false;
    private runMarked = false;
    /** This process's file holds what the stack holds (`holds` lines): it stays for the next run to carry. */
    private heldHere = false;
    private lines = 0;

    /**
     * `self`: this process, as its file's lines name it. `digest`: a short hex digest of a text (names that must be the
     * same wherever they are made).
     */
    constructor(private readonly self: Writer, private readonly digest: (text: string) => string, readonly rules: Rules = new Rules()) {}

    /** What the command line says (see `told`); before that, nothing: unknown. */
    private get command(): RunCommand {
        return this.commandGiven ?? {};
    }

    /** Whether what this process's Reads answer is never saved (a preview), as far as it can tell. */
    private get previewRun(): boolean {
        return this.command.preview === true || this.sawPreview;
    }

    /**
     * The CLI's command line could not be read (Windows, a plugin attached with PULUMI_DEBUG_PROVIDERS): any run may be
     * a preview, or leave resources out, as far as this process can tell.
     */
    private get unknownCommand(): boolean {
        return this.command.preview === undefined;
    }

    /**
     * Whether this run may be a preview: one it knows of (previewRun), or the first run of a command that previews
     * first, which nothing has shown to be its update. A preview does not send the resources it would delete.
     */
    private get mayBePreview(): boolean {
        return this.previewRun || (this.command.previewsFirst === true && !this.laterRun && !this.sawUpdate);
    }

    // ---- Events: what the shell tells before a step, and what its actions came to.

    /** What the storage shows now, and the time: told before every step. */
    observe(world: World): void {
        this.view = { now: world.now, peers: world.peers ?? this.view.peers };
    }

    /**
     * What the CLI's command line says (or that it is unknown). The shell reads it where a decision may need it: at the
     * first resource request, and before a report while anything is open (reading it may start a process: macOS `ps`).
     */
    told(command: RunCommand): void {
        this.commandGiven = command;
    }

    /** Whether a report may have anything to say (then the command line decides some of it: see `told`). */
    get anythingOpen(): boolean {
        return this.known.open().length > 0;
    }

    /** The next action to carry out, in order (undefined: none). */
    next(): Action | undefined {
        return this.outbox.shift();
    }

    /** Whether the journal has a store to keep its lines in. */
    get keeping(): boolean {
        return this.where !== undefined;
    }

    /**
     * Whether the run's mark is wanted (see `runMarked`): at the first resource request (a Check, Diff or operation;
     * not Configure, which a run of lookups alone sends too), where the command previews first.
     */
    get wantsRunMark(): boolean {
        return !this.runMarked && this.where !== undefined;
    }

    /** Which run of its CLI this is (`laterRun`: it came after another, the update after its preview). */
    runMarkedAs(laterRun: boolean): void {
        this.runMarked = true;
        if (this.command.previewsFirst) this.laterRun = laterRun;
    }

    /** The provider this process serves (Configure): its URN and where it sends requests. */
    provider(urn: string, endpoint: string): void {
        this.providerId = providerKey(`${urn}|${endpoint}`);
        this.append({ op: "serves", provider: this.providerId });
    }

    private reportedEarly = false;

    /**
     * Whether the report of what earlier runs left open is due now: as soon as this process knows its stack and its
     * provider, while the engine is surely there to show it (a warning sent as the engine closes its plugins may come
     * too late to be printed); the end of the run says only what is still unsaid then.
     */
    earlyReportDue(): boolean {
        if (this.reportedEarly || !this.where || !this.providerId) return false;
        this.reportedEarly = true;
        return true;
    }

    /** Whether the stack's journal was opened (or found unusable) already. */
    get attached(): boolean {
        return this.attachedYet;
    }

    /**
     * The first resource request named the stack and the shell opened this process's file in its journal (or says
     * why it could not): takes over what dead processes left there. Without the journal the deployment runs on, and
     * the user is told why once.
     */
    attach(a: Attached): void {
        if (this.attachedYet) return;
        this.attachedYet = true;
        this.attachedAt = this.view.now;
        this.run = a.run;
        if ("why" in a) return this.unprotected(a.where, a.why);
        this.where = a.where;
        if (this.providerId) this.append({ op: "serves", provider: this.providerId });
        this.takeOver();
    }

    /** The storage refused (full, read-only, gone): the journal goes on without it, and says so once. */
    storageFailed(why: string): void {
        if (this.where !== undefined) this.unprotected(this.where, why);
    }

    /** The folder cannot be used: said once, on the stack; nothing more is asked of the store. */
    private unprotected(where: string, why: string): void {
        const wasKeeping = this.where !== undefined;
        this.where = undefined;
        for (let i = this.outbox.length - 1; i >= 0; i--) if (this.outbox[i].kind === "append" || this.outbox[i].kind === "take") this.outbox.splice(i, 1);
        if (wasKeeping) this.outbox.push({ kind: "close", remove: false });
        this.outbox.push({ kind: "warn", message: `the plugin cannot keep its crash journal in ${where}: ${why}. This deployment goes on, but a grant ` +
            "written just before a crash would not be found by the next run, and a Delete does not see what other plugin " +
            "processes of this deployment declare. Fix the folder (it must be yours, mode 0700, not a link, writable) or set " +
            "PULUMI_HOME to one that is." });
    }

    private append(line: Line, durable = false): void {
        if (line.op === "holds") this.heldHere = true;
        if (this.where !== undefined) this.outbox.push({ kind: "append", line, durable });
        this.known.learn(line, this.self.id, this.run);
    }

    /** The other processes whose files are here and that still run: what they hold is in flight, not orphaned. */
    private livePeers(): Set<string> {
        return new Set(this.view.peers.flatMap((p) => (p.writer && p.alive ? [p.writer.id] : [])));
    }

    /** Lines to carry for each file being taken (see `took`). */
    private readonly taking = new Map<string, Line[]>();

    /**
     * Takes the files of processes that no longer run: what they hold that is still open, and what they settled of
     * other files' entries, is carried in this process's file (kept before theirs is removed: the shell's `take`).
     */
    private takeOver(): void {
        if (!this.where) return;
        this.gather();
        const open = new Set(this.known.open().map((i) => i.entry.id));
        const live = this.livePeers();
        for (const peer of this.view.peers) {
            if (peer.writer ? peer.alive : this.view.now - peer.touched < 60_000) continue;
            if (peer.takenBy !== undefined && live.has(peer.takenBy)) continue; // being carried over right now
            const writer = peer.writer?.id ?? peer.file;
            const sameRun = runOf(peer) === this.run;
            // A dead process of a run that goes on (a plugin killed in an `up` a preview runs beside) is that run's:
            // its answers are in that run's hands, which lines carried into another run's file no longer show.
            if (!sameRun && this.view.peers.some((q) => q !== peer && runOf(q) === runOf(peer) && q.alive && !closedIn(q)) &&
                this.rules.fires("dead-peer-left-to-its-run")) continue;
            const carry: Line[] = [];
            for (const l of peer.lines) {
                if (l.op === "wrote") {
                    const id = l.id ?? `${writer}:${l.n}`;
                    const entry = this.known.entries.get(id);
                    if (entry && open.has(id)) carry.push({ op: "wrote", n: ++this.lines, ...entry });
                } else if (l.op === "landed") {
                    if (open.has(l.id)) carry.push(l);
                } else if (l.op === "settled") {
                    const items = l.items.filter((i) => this.known.entries.has(entryOf(i)));
                    if (items.length) carry.push({ op: "settled", items });
                } else if (l.op === "answered") {
                    // That the operation was answered outlives its process: later runs leave it to their word.
                    const items = l.items.filter((i) => open.has(entryOf(i)));
                    if (items.length) carry.push({ op: "answered", urn: l.urn, items, ...(l.carried || !sameRun ? { carried: true as const } : {}) });
                } else if (l.op === "holds") {
                    // What the stack holds outlives every run: the latest of each resource is carried.
                    const identity = l.claim ? identityOf(l.claim) : l.of;
                    const seenIn = l.run ?? runOf(peer);
                    if (identity === undefined || this.known.heldAs(l.urn, identity)?.at === l.at) carry.push(seenIn !== undefined ? { ...l, run: seenIn } : l);
                } else if (sameRun && (l.op === "declare" || l.op === "said")) {
                    carry.push(l);
                }
            }
            this.taking.set(peer.file, carry);
            this.outbox.push({ kind: "take", file: peer.file, carry });
        }
    }

    /**
     * What the shell's take of `file` came to: taken (its lines carried into this process's file) or not (another
     * process took it first). What was carried is this process's from now on.
     */
    took(file: string, taken: boolean): void {
        const carry = this.taking.get(file);
        this.taking.delete(file);
        if (!taken || !carry) return;
        for (const l of carry) {
            if (l.op === "holds") this.heldHere = true;
            this.known.learn(l, this.self.id, this.run);
            if (l.op === "wrote" && l.id !== undefined) this.known.holder.set(l.id, this.self.id);
        }
    }

    /** The lines of this run's other processes (alive or not). */
    private runPeers(): PeerView[] {
        return this.view.peers.filter((p) => runOf(p) === this.run);
    }

    /** Reads what the folder's other files appended since the last step (their files only grow). */
    private gather(): void {
        for (const peer of this.where !== undefined ? this.view.peers : []) {
            const run = runOf(peer);
            const writer = peer.writer?.id ?? peer.file;
            for (const line of peer.lines.slice(this.gathered.get(peer.file) ?? 0)) {
                this.known.learn(line, writer, run);
                if (run !== this.run) continue;
                if (line.op === "declare" && !this.own.has(line.urn)) this.claims.set(line.urn, line.claim);
            }
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
        for (const [other, theirs] of this.claims.rivals(claim)) {
            if (other === urn) continue;
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
    kept(parent: string, urn: string): Kept {
        this.gather();
        const run = this.claims.kept(parent);
        // A resource the run has not Checked may stay in the stack, holding what its state held when last seen: a
        // Delete then leaves that grant to it. It stays where the run leaves it alone (`--target` of others,
        // `--exclude` of it), or may where this Delete comes before the run's Checks are done (a replacement deleted
        // first, deleteBeforeReplace: the resources after it are Checked later, if the run goes on). A run that
        // Checks every resource deletes the rest only after every Check, and a full `destroy` deletes them all:
        // there a resource not Checked keeps nothing.
        const midway = this.claims.has(urn);
        return {
            policy: run.policy,
            declaredBy: (key) => run.declaredBy(key) ?? this.heldElsewhere(parent, key, urn, midway),
            maybe: (key) => {
                if (run.declaredBy(key) !== undefined) return false;
                const other = this.heldElsewhere(parent, key, urn, midway);
                return other !== undefined && this.known.mayHold(parent, key, other);
            },
        };
    }

    /** A resource other than `urn`, not Checked in this run, that stays in the stack holding grant `key` on `parent`. */
    private heldElsewhere(parent: string, key: string, urn: string, midway: boolean): string | undefined {
        for (const other of this.known.heldBy(parent, key)) {
            // Where the command line is unknown (Windows, PULUMI_DEBUG_PROVIDERS), any run may be a `--target` run.
            // A resource this run is deleting too (a `destroy` of both twins, in parallel) stays nowhere.
            // One whose Delete failed in this run stays (a full `destroy` whose other Delete Google refused).
            const mayStay = ((midway || leftAlone(this.command, other) || this.unknownCommand) && !this.known.deleting.get(this.run)?.has(other)) ||
                this.known.failedDeletes.get(this.run)?.has(other) === true;
            if (other !== urn && !this.claims.has(other) && mayStay && this.rules.fires("delete-leaves-to-holder")) return other;
        }
        return undefined;
    }

    /**
     * What the engine's state of the resource `urn` whose claim was `of` holds now (`claim`; null: the engine dropped
     * it), as this process learnt it: noted where it differs from what is known.
     */
    private hold(urn: string, of: Claim, claim: Claim | null, replaced = false, may = false): void {
        const identity = identityOf(of);
        const was = this.known.heldAs(urn, identity);
        const text = (c: Claim | null) => (c ? `${c.parent}\n${c.grants.map(grantKey).sort().join("\n")}` : "");
        if (was && text(was.claim) === text(claim) && (was.replaced === true) === replaced && (was.may === true) === may) return;
        this.append({ op: "holds", urn, claim, at: this.view.now, ...(claim ? {} : { of: identity }), ...(replaced && !claim ? { replaced: true as const } : {}),
            ...(may ? { may: true as const } : {}) });
    }

    /**
     * What the stack holds of `urn` gains `claim`'s grants and loses none of what it held (the engine may or may not
     * have the state that claim comes from). `may`: only that may be held (Held.may); it notes nothing it adds nothing.
     */
    private gain(urn: string, claim: Claim, may = false): void {
        const had = this.known.heldAs(urn, identityOf(claim))?.claim?.grants ?? [];
        const kept = new Set(had.map(grantKey));
        const more = claim.grants.filter((g) => !kept.has(grantKey(g)));
        if (may && more.length === 0) return;
        this.hold(urn, claim, { ...claim, grants: [...had, ...more] }, false, may);
    }

    /**
     * The engine sent `urn`'s state, whose claim is `held`: the items it agrees with are settled. Returns, for a
     * Diff, what `declared` (the program's claim) must write so that IAM is as the program says: the grants the
     * engine's state and IAM disagree on that the resource's Update sets, and the grants its state holds that another
     * resource's write removed (a Delete that ran before this resource's Check, or was cut off).
     */
    state(urn: string, held: Claim | undefined, declared?: Claim, replaced = false): { force: boolean; tell: string[] } {
        this.gather();
        // A resource deleted first for its replacement (deleteBeforeReplace) stays in the engine's state, marked
        // pending replacement, until the replacement's Create is recorded, and its Diff's olds name what was deleted.
        // Where its Delete was answered as a replaced resource's (what it held dropped), no write of the URN adding those
        // grants (to that parent) is open since (a Create answered once the run was stopped is not noted as held), and the
        // program declares another resource under the URN, those olds hold nothing. A Delete of a resource no program
        // replaced (a `destroy` cut off before the engine recorded it) leaves it in the state as it was: its olds hold.
        const oldsGrants = held ? new Set(held.grants.map(grantKey)) : new Set<string>();
        const droppedAs = held ? this.known.heldAs(urn, identityOf(held)) : undefined;
        let pendingOld = false;
        if (held && declared && identityOf(held) !== identityOf(declared) && droppedAs?.claim === null && droppedAs.replaced === true &&
            !this.known.open(urn).some((i) => i.sign === "+" && parentName(i.entry.parent) === held?.parent && oldsGrants.has(i.grantKey)) &&
            this.rules.fires("pending-replacement-holds-nothing")) {
            held = { ...held, grants: [] };
            // The drop stays what is known of that resource: a later Diff of it in the run judges by it too.
            pendingOld = true;
        }
        const settle: string[] = [];
        const reasons: string[] = [];
        const inHand = this.known.inHand.get(this.run);
        // A Diff after a Read of the resource (`--refresh`) carries the Read's answer, which a preview never saves:
        // the Read's request carried the engine's word already. The Read may have been served by another process of
        // the run (an explicit provider's refresh and its Diff need not share one).
        let live: Set<string> | undefined;
        const engineWord = !(declared && (this.readHere.has(urn) || (this.previewRun && this.command.refresh === true)) &&
            this.rules.fires("read-answer-is-no-word"));
        // A preview's state was read as it began: an `up` beside it may have changed the stack since, so it is no
        // word on what the stack holds now. Where the command line is unknown a Diff may be a preview's until its run
        // writes (no Diff says), and what another run noted of the resource may be newer (an update beside it, live or
        // ended since: a preview's Diffs may come long after its read) or older (a drop whose save a second Ctrl-C
        // lost). Noted since this process began, it is the newer (the engine read its state before); else which is
        // cannot be told: what the stack holds gains the Diff's grants and loses none.
        const noted = held ? this.known.heldAs(urn, identityOf(held)) : undefined;
        const mayBeOlder = this.unknownCommand && !this.sawUpdate && noted !== undefined && noted.run !== this.run;
        const notedSince = noted !== undefined && this.attachedAt !== undefined && noted.at > this.attachedAt;
        if (held && engineWord && !replaced && !pendingOld) {
            if (!((this.previewRun || mayBeOlder) && this.rules.fires("preview-holds-nothing"))) this.hold(urn, held, held);
            else if (!this.previewRun && noted && !notedSince) this.gain(urn, held, true);
        }
        for (const item of engineWord ? this.known.open(urn) : []) {
            if (!held || held.parent !== parentName(item.entry.parent)) continue;
            // A preview's olds were read as it began, maybe before this item's answer (an `up` beside it): no word on it.
            const answered = this.known.answered.has(item.key);
            if (answered && this.previewRun && this.rules.fires("preview-olds-predate-answers")) continue;
            // Olds emptied because a Delete was answered are the journal's inference that the engine recorded that
            // Delete, not the engine's word on it: its own answered items are not judged by them (seed 37, case 4011).
            if (answered && pendingOld) continue;
            const inState = held.grants.some((g) => grantKey(g) === grantKey(item.grant));
            // A removal of a grant another resource's state holds waits for that resource to put it back (see below).
            if (!inState && item.sign === "-" && this.heldByAnother(item) && this.rules.fires("removal-held-elsewhere")) continue;
            if (inState === (item.sign === "+") && this.rules.fires("engine-word")) {
                settle.push(item.key);
                continue;
            }
            // The update writes the declared parent only: where that is another (a replacement), the old's Delete has its say.
            if (!declared || declared.parent !== held.parent || !covers(declared, item.grant) || !this.rules.fires("diff-forces-program")) continue;
            // A write whose process still runs is under way (a live `pulumi up` beside this preview), not cut off:
            // its own run records it.
            if (writerOf(item.entry) !== this.self.id && (live ??= this.livePeers()).has(writerOf(item.entry)) &&
                this.rules.fires("live-writer-in-flight")) continue;
            const wanted = declared.grants.some((g) => grantKey(g) === grantKey(item.grant));
            // A removal the program agrees with: the state still lists it, so the Diff shows the change anyway.
            if (item.sign === "-" && !wanted) continue;
            // Where the command line is unknown, a Diff not yet shown to be an update's may be a preview's, whose olds
            // may predate the answer: that the operation stopped before Pulumi recorded it is then only what may be.
            const stopped = answered && this.unknownCommand && !this.sawUpdate && this.rules.fires("preview-olds-predate-answers")
                ? "that may have stopped before Pulumi recorded it" : "that stopped before Pulumi recorded it";
            reasons.push(item.sign === "+"
                ? `${describeGrant(item.grant)} was written to ${held.parent} by an operation ${stopped}; ` +
                  (wanted ? "this update records it" : "the program does not declare it, so this update removes it")
                : `${describeGrant(item.grant)} was removed from ${held.parent} by an operation ${stopped}; this update puts it back`);
        }
        // A grant this resource's state holds is held by the stack, whichever resource a journaled write added it
        // for (one grant declared twice, an orphan another resource took up): no longer in no state.
        if (held && engineWord) {
            for (const g of held.grants) {
                for (const i of this.known.openOf(held.parent, grantKey(g))) {
                    if (i.sign === "+" && i.entry.urn !== urn && !inHand?.has(i.key) && this.rules.fires("held-by-stack")) settle.push(i.key);
                }
            }
        }
        // A grant another resource's Delete removed while this resource's state held it (that Delete's twin failed, or
        // was cut off, in a `destroy` of both): this resource's update puts it back.
        if (held && declared && engineWord) {
            for (const g of held.grants) {
                if (!declared.grants.some((d) => grantKey(d) === grantKey(g))) continue;
                for (const i of this.known.openOf(held.parent, grantKey(g))) {
                    // Answered in this run by its own resource's operation, unless that was its Delete (a deleteBeforeReplace
                    // replacement run before this resource's Check): a Delete's answer puts no grant back.
                    const answeredBack = inHand?.has(i.key) && !this.known.deleting.get(this.run)?.has(i.entry.urn);
                    if (i.sign !== "-" || i.entry.urn === urn || answeredBack || !this.rules.fires("removal-held-elsewhere")) continue;
                    // Diff reads nothing: the grant may be back since, and then the update writes nothing.
                    reasons.push(`${describeGrant(g)} was removed from ${held.parent} by an operation on ${shortUrn(i.entry.urn)} while this ` +
                        "resource's state held it; this update puts it back if it is still gone");
                }
            }
        }
        if (settle.length) this.append({ op: "settled", items: settle });
        // Said once per process (a Diff is asked again for the update after the preview's).
        const tell = reasons.filter((r) => !this.forcedSaid.has(`${urn}\n${r}`));
        for (const r of tell) this.forcedSaid.add(`${urn}\n${r}`);
        return { force: reasons.length > 0, tell };
    }

    /**
     * Journals what a write of `urn` adds to and removes from `parent`'s policy. Returns the entry's id, or undefined
     * when the write changes nothing: where there is one, the write waits until the line is kept (the shell syncs).
     */
    wrote(urn: string, resourceId: string | undefined, parent: Parent, before: Policy, after: Policy, until: number): string | undefined {
        const { added, removed } = grantChanges(before.bindings, after.bindings);
        if (added.length === 0 && removed.length === 0) return undefined;
        const n = ++this.lines;
        const id = `${this.self.id}:${n}`;
        this.append({ op: "wrote", n, id, urn, parent, provider: this.providerId, added, removed, until, ...(resourceId ? { resourceId } : {}),
            ...(before.etag ? { etag: before.etag } : {}) });
        this.writing.add(id);
        return id;
    }

    /**
     * Whether an operation that would leave `current` unchanged writes it all the same: where a write another process
     * sent as it died may still land on it (it was sent with this etag, and its slack has not passed), an unchanged
     * write moves the etag, so Google refuses that write for good, and Google's answer settles its items.
     */
    fence(parent: Parent, current: Policy): boolean {
        if (!current.etag) return false;
        const live = this.livePeers();
        return this.known.open(parentName(parent), "parent").some((i) => i.entry.etag === current.etag && writerOf(i.entry) !== this.self.id &&
            !live.has(writerOf(i.entry)) && !this.judgeable(i.entry, () => live) && this.rules.fires("fence-in-flight"));
    }

    /** A write no attempt of which can have applied: its entry is undone. */
    undone(id: string): void {
        this.writing.delete(id);
        this.append({ op: "undone", id });
    }

    /**
     * Whether Google's word on the policy tells of `entry`'s write: it can no longer be applied after what Google
     * shows. This process knows its own writes' ends. A dead process's write sent with another etag than the policy
     * Google shows (`shown`, read or written after the entry was journaled) landed before it or never will: Google
     * refuses a write whose etag is not current, and etags do not come back. Otherwise another process's write
     * (alive, or killed with a request in flight) may still land until its last attempt's deadline is well past.
     */
    private judgeable(entry: Entry, live: () => Set<string>, shown?: string): boolean {
        if (writerOf(entry) === this.self.id) return !(this.writing.has(entry.id) && this.rules.fires("in-flight-slack"));
        if (this.known.landed.has(entry.id) && this.rules.fires("landed-once")) return true;
        // A dead process's write (a live one's is its own to finish, and its run records it).
        if (shown !== undefined && entry.etag !== undefined && shown !== entry.etag && !live().has(writerOf(entry)) && this.rules.fires("etag-moved")) return true;
        // A writer that still runs may still send it, whatever the clock says (a clock set forward would otherwise
        // make its write look long over). An entry without `until` is the previous release's: its write ended long
        // before this process started.
        const over = (entry.until === undefined || this.view.now > entry.until + IN_FLIGHT_SLACK_MS) && !live().has(writerOf(entry));
        return over || !this.rules.fires("in-flight-slack");
    }

    /**
     * Google's answer to a write is its word on the whole policy: the open items of `parent` it agrees with are
     * settled (a `+` grant gone, a `-` grant back), except those of writes whose own answer the engine has yet to
     * record (this one, and any other under way).
     */
    landed(parent: Parent, id: string | undefined, written: Policy): void {
        if (id !== undefined) {
            this.writing.delete(id);
            // For the other processes, which otherwise give the write its slack (in-flight-slack): kept with the answer.
            this.append({ op: "landed", id });
        }
        const name = parentName(parent);
        const present = grantKeysOf(written.bindings);
        let live: Set<string> | undefined;
        const settle = this.known.open(name, "parent").filter((i) => i.entry.id !== id && present.has(i.grantKey) !== (i.sign === "+") &&
            this.judgeable(i.entry, () => (live ??= this.livePeers()), written.etag) && this.rules.fires("google-answer")).map((i) => i.key);
        if (settle.length) this.append({ op: "settled", items: settle });
    }

    /**
     * A resource operation begins (the shell runs it between `begin` and `answered` or `failed`): the state its request
     * carries is taken as the engine's word, and a Delete is noted so a later Delete of the run knows it goes.
     */
    begin(op: Operation): Begun {
        const urn = op.urn;
        this.underWay++;
        // A preview's Update carries the Diff's olds (what a `--refresh` read, in a preview): the Diff had its say.
        // The Delete of a replaced resource (its URN Checked in this run) carries the old state, not what the stack holds.
        let replaced = false;
        if (op.kind === "delete") {
            this.gather();
            replaced = this.claims.has(urn);
        }
        if (op.held && !op.preview) this.state(urn, op.held, undefined, replaced);
        if (op.preview) this.sawPreview = true;
        else if (op.kind === "create" || op.kind === "update" || op.kind === "delete") this.sawUpdate = true;
        if (op.kind === "refresh" || op.kind === "import") this.readHere.add(urn);
        if (op.kind === "delete") this.append({ op: "deleting", urn });
        return { replaced };
    }

    /**
     * The operation was answered: `gone`, a refresh found the resource gone; `claim`, the claim of the state it
     * leaves. An answer (not a preview's) names the items the engine's record of it settles.
     */
    answered(op: Operation, begun: Begun, result: { gone: boolean; claim?: Claim }): { keepFirst: boolean } {
        this.underWay--;
        const queued = this.outbox.length;
        const urn = op.urn;
        const { replaced } = begun;
        const read = op.kind === "refresh" || op.kind === "import";
        // A refresh that finds the resource gone drops it from the engine's state, as a Delete does.
        const drops = op.kind === "delete" || (op.kind === "refresh" && result.gone);
        const claim = drops ? op.held : result.claim;
        // An answer given once the run is being stopped (a signal, the engine's Cancel) may find an engine that
        // no longer records it (Ctrl-C twice): left to the next run's word.
        // A Read of a run its command line shows to be a preview (`preview --refresh`, `--preview-only`) is
        // saved nowhere: it answers nothing the engine keeps.
        const previewRead = read && this.command.preview === true && this.rules.fires("preview-read-no-record");
        // Where the command line is unknown, a Read of a process sent nothing a preview does not send may be a preview's:
        // it is no word on what the stack holds (a `refresh --preview-only` of a Binding would otherwise note Google's
        // members as what it holds, and a removal another resource's state still holds would go unsaid and unfixed).
        const mayBePreviewRead = previewRead || (read && this.unknownCommand && !this.sawUpdate && this.rules.fires("preview-read-no-record"));
        // A Delete's grant is gone from IAM whether or not the engine records it: what the stack holds loses it even
        // once the run is being stopped by one Ctrl-C (the engine still records the steps under way). After a second
        // the engine records nothing more: the resource stays in its state, holding what it held (seed 1, case 1554).
        // Another answer then may never be recorded (a create cleared as pending).
        // A replaced resource's Delete drops what it held, not what its replacement (of another identity) holds
        // under the same URN; with `--replace` the two are one identity, and the replacement's hold stays.
        const of = claim ?? op.held;
        const replacement = this.claims.get(urn);
        const ownHold = !replaced || (of !== undefined && replacement !== undefined && identityOf(replacement) !== identityOf(of));
        // The stack may or may not hold an answer given once the run is being stopped by one Ctrl-C: what it holds
        // gains the answer's grants (a later Delete leaves them to it) and keeps what it held (a removal stays held,
        // and said). After a second one the engine records nothing more: the answer holds nothing.
        if (of && !op.preview && !mayBePreviewRead && ownHold) {
            if (!(this.stopping && (!drops || this.cancels > 1) && this.rules.fires("answer-after-stop"))) this.hold(urn, of, drops ? null : claim ?? null, drops && replaced);
            else if (claim && this.cancels <= 1) this.gain(urn, claim);
        }
        if (!op.preview && claim && !previewRead) {
            this.gather();
            // A write another process sent as it died may still land after this answer (in-flight-slack): an item
            // whose grant the stack holds after it against a removal, or lacks against an addition, is what that
            // write would undo, so it stays open until Google's word can tell (the report's read, once it is over).
            let live: Set<string> | undefined;
            const heldAfter = (i: Item) => !drops && claim.grants.some((g) => grantKey(g) === i.grantKey);
            const mayBeUndone = (i: Item) => (i.sign === "-") === heldAfter(i) && !this.judgeable(i.entry, () => (live ??= this.livePeers()));
            const items = this.known.open(urn).filter((i) => claim.parent === parentName(i.entry.parent) && covers(claim, i.grant) && !mayBeUndone(i)).map((i) => i.key);
            // A grant written for another resource that this one's new state holds (an import of an orphan,
            // the same grant declared twice) is held by the stack from now on.
            if (!drops) {
                for (const g of claim.grants) {
                    for (const i of this.known.openOf(claim.parent, grantKey(g))) {
                        if (i.entry.urn === urn) continue;
                        if (i.sign === "+") items.push(i.key);
                        // Another resource's removal of a grant this one's operation set: put back once recorded.
                        else if (!this.stopping && !mayBeUndone(i) && this.rules.fires("removal-held-elsewhere")) this.restored.add(i.key);
                    }
                }
            }
            // Neither settled nor said by this process: whether the engine records it is the next run's to see.
            // An answer after the stop began is in this run's hands (the line below) and settled by no one here.
            if (!(this.stopping && this.rules.fires("answer-after-stop"))) for (const i of items) (read ? this.answeredReads : this.answeredItems).add(i);
            // Read by this run's other processes, which then leave these items to this one; by later runs, which
            // leave them to their own word on the resource (an answer is not yet a record).
            if (items.length) this.append({ op: "answered", urn, items });
        }
        // What the answer tells (what the stack holds now, which items the engine's record settles) is kept before the
        // engine hears it: a machine that dies after the engine saved the answer must not lose the lines.
        return { keepFirst: this.where !== undefined && this.outbox.length > queued };
    }

    /** The operation failed: a Delete that failed leaves its resource in the stack (a later Delete leaves its grant to it). */
    failed(op: Operation): void {
        this.underWay--;
        if (op.kind === "delete") this.append({ op: "deleting", urn: op.urn, failed: true });
    }

    /**
     * The run is being stopped (a signal reached the plugin, or the engine's Cancel came): from now on an answer is
     * no proof that the engine will record it. A run that ends cleanly stops its plugins only once every operation
     * is answered and recorded.
     */
    stop(): void {
        this.stopping = true;
    }

    /**
     * The engine's Cancel: as it closes this plugin, or, before that, because the user pressed Ctrl-C. After a Ctrl-C
     * a second one makes the engine close its plugins, still running, without recording the steps under way, so no
     * answer of this process counts as recorded then, even one given before the Ctrl-C.
     */
    cancel(): void {
        this.cancels++;
        this.stop();
    }

    /** The answers the run's end would take as recorded (see `endOfRun`). */
    private toRecord: string[] = [];

    /**
     * The end of this process, once the operations under way ended or the shell stopped waiting for them. Returns
     * whether the engine's presence decides (the shell asks, and tells `engineThere`): if it is still there, it holds
     * every answer given before the stop.
     */
    endOfRun(): boolean {
        // A Read carries no preview flag: where the command line is unknown, its answer may be a preview's, unless the
        // process was sent what no preview sends (a Delete, an unflagged Create or Update).
        const mayBePreviewRead = this.previewRun || (this.unknownCommand && !this.sawUpdate);
        // What the run's other processes did (a Delete of the other resource that held a removed grant) decides too.
        this.gather();
        const recorded = [...this.answeredItems, ...(mayBePreviewRead && this.rules.fires("preview-read-no-record") ? [] : this.answeredReads)]
            // A removal another resource's state still holds stays open: that resource's Diff puts the grant back.
            .filter((k) => !(this.removalHeldElsewhere(k) && this.rules.fires("removal-held-elsewhere")))
            .concat([...this.restored]);
        this.toRecord = this.underWay === 0 && !(this.cancels > 1 && this.rules.fires("ctrl-c-twice")) ? recorded : [];
        this.answeredItems.clear();
        this.answeredReads.clear();
        this.restored.clear();
        return this.toRecord.length > 0;
    }

    /** Whether the engine was still there at the end (see `endOfRun`): its answers' items are settled if so. */
    engineThere(alive: boolean): void {
        if (alive && this.toRecord.length > 0 && this.rules.fires("recorded-at-end")) this.append({ op: "settled", items: this.toRecord }, true);
        this.toRecord = [];
    }

    /**
     * What to say, once per run: every item still open that no live process holds and no operation of this run will
     * settle, each after a read of its parent (with the credentials of the provider that wrote it) shows it still
     * stands (`reported`). Undefined: nothing to say. Nothing is marked settled by saying it: the next run says it again.
     */
    reportPlan(early = false): ReportPlan | undefined {
        if (!this.where) return undefined;
        this.gather();
        const said = this.known.said.get(this.run) ?? new Set<string>();
        const inHand = this.known.inHand.get(this.run) ?? new Set<string>();
        const live = this.livePeers();
        // What was written through a provider another process of this run serves is that process's to check and say,
        // at its end (it reads every file of the folder, so it sees all this one does); one that ended already had
        // its say. Only where no process of the run serves that provider is it said here — never as the run starts,
        // when the process that would check it may not have started yet, nor by a `--target`/`--exclude` run, which
        // starts no provider for what it leaves out.
        const servedElsewhere = new Set(this.runPeers().flatMap((p) => p.lines.flatMap((l) => (l.op === "serves" ? [providerKey(l.provider)] : []))));
        const mine = (i: Item) => providerKey(i.entry.provider) === this.providerId;
        // A `--target` run starts no provider for what it leaves out: what another provider wrote is said here only where
        // this process can check it (the same endpoint), never unchecked (it may be long gone).
        const sameEndpoint = (i: Item) => endpointOf(i.entry.provider) === endpointOf(this.providerId);
        const theirs = (i: Item) => !mine(i) && (early || (this.command.partial === true && !sameEndpoint(i)) || servedElsewhere.has(providerKey(i.entry.provider)));
        // As the run starts, only what the engine certainly never recorded (its operation was never answered): an
        // answered one is left to this run's own word on it (a Diff, a Delete, a refresh) and said at its end, unless
        // this run could not have given that word (see `unsaidAnswered`). So is an addition another resource's state
        // held when last seen (one grant declared twice): that resource's request settles it (see `state`); the
        // record may be an answer the engine never saved, so the note is put off, never dropped.
        const leftToRequest = (i: Item) => this.leftToRequest(i);
        const open = this.known.open().filter((i) => !(said.has(i.key) && this.rules.fires("said-once-per-run")) && !inHand.has(i.key) &&
            !live.has(writerOf(i.entry)) &&
            !(theirs(i) && this.rules.fires("own-provider-says")) &&
            !(leftToRequest(i) && early && this.rules.fires("early-report-unanswered-only")) &&
            !(leftToRequest(i) && !early && this.unsaidAnswered(i) && this.rules.fires("partial-run-silent")) &&
            // "Pulumi's state still holds it" is said only of a grant some state is known to hold: a Binding's Create
            // that removed a member another resource held, once that resource's state is known to lack it, removed
            // nothing the stack holds (the Binding sets its role as the program lists it).
            !(i.sign === "-" && !this.heldByAny(i) && this.rules.fires("removal-held-by-none")));
        if (open.length === 0) return undefined;
        const byParent = new Map<string, Item[]>();
        for (const i of open) {
            const k = `${providerKey(i.entry.provider)}\n${parentName(i.entry.parent)}`;
            byParent.set(k, [...(byParent.get(k) ?? []), i]);
        }
        this.underWay++;
        return {
            early,
            live,
            groups: [...byParent.values()].map((items) => {
                const { entry } = items[0];
                const own = providerKey(entry.provider) === this.providerId;
                // Another provider with the same endpoint reads the same policy: this process's credentials ask Google,
                // and where they may not, the grant is said unchecked.
                return { read: { parent: entry.parent, provider: this.providerId, own, ask: own || endpointOf(entry.provider) === endpointOf(this.providerId) }, items };
            }),
        };
    }

    /** What the report's reads (one per group of `plan`, in order) came back with: says what still stands. */
    reported(plan: ReportPlan, results: ReadResult[]): void {
        this.underWay--;
        const other = "it was written through another provider than the one this process serves, so it was not checked";
        const notes: { key: string; text: string }[] = [];
        const settled: string[] = [];
        plan.groups.forEach(({ read, items }, n) => {
            const result: ReadResult = read.ask ? results[n] ?? { unavailable: true } : { unavailable: true };
            if ("cancelled" in result) return;
            const unchecked = "policy" in result ? "" : "error" in result && read.own ? `reading the policy failed: ${result.error}` : other;
            const present = "policy" in result ? grantKeysOf(result.policy.bindings) : undefined;
            for (const i of items) {
                if (present && present.has(grantKey(i.grant)) !== (i.sign === "+") && this.rules.fires("google-word-at-report")) {
                    // Google's word: gone, or back; for a write that may still land, nothing to say yet.
                    if (this.judgeable(i.entry, () => plan.live, "policy" in result ? result.policy.etag : undefined)) settled.push(i.key);
                    continue;
                }
                // Where the command line is unknown, a run shown to be an update may still have left that resource out.
                notes.push({ key: i.key, text: describe(i, unchecked, this.digest, this.unknownCommand && this.leftToRequest(i)) });
            }
        });
        if (settled.length) this.append({ op: "settled", items: settled });
        // What an operation of this run settled while the policy was being read (an update putting a grant back) is
        // no longer so: the read is older than that.
        const still = notes.filter((n) => !(this.known.settled.has(n.key) && this.rules.fires("settled-while-reading")));
        if (still.length === 0) return;
        this.outbox.push({ kind: "warn", message: `what earlier runs of this stack left unrecorded, still so in IAM (the provider's crash journal):\n` +
            still.map((n) => `  - ${n.text}`).join("\n") });
        this.append({ op: "said", run: this.run, items: still.map((n) => n.key) });
    }

    /** An item left to a resource's request: an answered one, or an addition another resource's state held when last seen. */
    private leftToRequest(i: Item): boolean {
        return this.known.answered.has(i.key) || (i.sign === "+" && this.heldByAnother(i));
    }

    /** Whether item `key` is a removal of a grant that another resource's state, as last seen, holds. */
    private removalHeldElsewhere(key: string): boolean {
        const i = this.known.item(key);
        return i !== undefined && i.sign === "-" && this.heldByAnother(i);
    }

    /** Whether any resource's state held `i`'s grant when last seen. */
    private heldByAny(i: Item): boolean {
        for (const _ of this.known.heldBy(parentName(i.entry.parent), i.grantKey)) return true;
        return false;
    }

    /** Whether a resource other than the one `i` was written for held `i`'s grant in its state when last seen. */
    private heldByAnother(i: Item): boolean {
        for (const urn of this.known.heldBy(parentName(i.entry.parent), i.grantKey)) if (urn !== i.entry.urn) return true;
        return false;
    }

    /**
     * Whether an item left to a resource's request (answered, or an addition another resource's state held) and
     * still open at this run's end is not said. A removal (`-`) whose answer the engine may
     * not have recorded leaves the resource in its state or not: if it does, that resource's next request carries the
     * state and decides (a Diff puts the grant back, a refresh drops the resource); if not, there is nothing to say.
     * An addition (`+`) is said only by a run that sends every resource it holds: not a `--target` or `--exclude`
     * run, nor `pulumi import`, nor a preview (it sends no resource it would delete: after a revert, one the engine
     * recorded before a Ctrl-C twice), and the silence of such a run on a resource says nothing of whether the
     * engine holds it; the update after the preview says it.
     */
    private unsaidAnswered(i: Item): boolean {
        // Where the command line is unknown, no run can be told from a preview or a `--target` run: an addition is
        // said by every run, as one Pulumi may have recorded (see describe).
        return i.sign === "-" || this.command.partial === true || (!this.unknownCommand && this.mayBePreview);
    }

    /** At exit: the file stays while it holds what another process needs (open entries, claims peers may read). */
    close(): void {
        if (!this.where) return;
        this.append({ op: "closed" });
        this.gather();
        const mine = this.self.id;
        // What the stack holds (`holds` lines, this process's and those it carried) stays for the next run to carry.
        const holds = this.known.open().some((i) => this.known.holder.get(i.entry.id) === mine) ||
            [...this.known.settled].some((i) => this.known.holder.get(entryOf(i)) !== mine && this.known.entries.has(entryOf(i))) ||
            this.heldHere;
        const peersRun = this.runPeers().some((p) => !closedIn(p) && p.alive);
        this.outbox.push({ kind: "close", remove: !holds && !peersRun });
        this.where = undefined;
    }
}

/** One open item, for a person: what it is, why it is open, and the command that resolves it. */
function describe(i: Item, unchecked: string, digest: (text: string) => string, mayBeRecorded = false): string {
    const where = parentName(i.entry.parent);
    const who = `${shortUrn(i.entry.urn)} (${i.entry.urn})`;
    const checked = unchecked ? ` (${unchecked})` : "";
    if (i.sign === "-") {
        return `${describeGrant(i.grant)} was removed from ${where} by an operation on ${who} that stopped before Pulumi ` +
            `recorded it; Pulumi's state still holds it${checked}. \`pulumi up\` puts it back where the program declares that ` +
            `resource, or deletes the resource where it does not (\`pulumi up --target '${i.entry.urn}'\` for that resource alone).`;
    }
    const member = token("endpoints", `${PREFIX[i.entry.parent.kind]}IamMember`);
    const name = `orphan-${digest(i.key).slice(0, 8)}`;
    const pending = i.entry.resourceId
        ? ` If \`pulumi up\` warns of a pending create of that resource, \`pulumi refresh --import-pending-creates '${i.entry.urn}' '${i.entry.resourceId}'\` records it.`
        : "";
    // A Binding or Policy owns its role or policy: its next update sets the grant as the program lists it.
    const owner = /Iam(Binding|Policy):/.exec(i.entry.urn)?.[1];
    const declared = owner
        ? `sets its ${owner === "Binding" ? "role" : "policy"} as the program lists it: it records the grant if listed, removes it if not`
        : "records it";
    const recorded = mayBeRecorded
        ? "by a run that stopped before Pulumi recorded it, as far as the plugin can tell: it cannot read the CLI's command " +
          "line here, so this run may have left that resource out, and Pulumi may have recorded it since (if `pulumi stack " +
          "export` lists that resource, nothing needs doing)"
        : "by a run that stopped before Pulumi recorded it, and no run has recorded it since";
    return `${describeGrant(i.grant)} on ${where} was written for ${who} ${recorded}${checked}. Where the program declares that resource, the next \`pulumi up\` ` +
        `${declared}.${pending} Otherwise \`pulumi import --protect=false ${member} ${name} '${grantId(i.entry.parent, [i.grant.role, i.grant.member, i.grant.condition?.title])}'\` ` +
        "puts it in the stack, and the next `pulumi up` removes it (the program does not declare it) unless you add it to the program.";
}
