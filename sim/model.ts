// The simulator's model of the world around the journal: Google's IAM (policies, and its faults), the engine (its
// checkpoint, the runs of each CLI command and the RPCs each sends, as Pulumi 3.248 orders them), and the Member,
// Binding and Policy resources as the plugin implements them (a write journaled before it is sent, a Binding's write
// setting its role to exactly its members and a Policy's its parent's whole policy, a Delete that leaves what the
// rest of the stack declares). The journal under test is the real one (provider/journal/), on the hosts of machine.ts.

import { AsyncLocalStorage } from "node:async_hooks";
import { describeGrant, Grant, grantKey } from "../provider/iam/grants";
import { Parent, parentName, PREFIX } from "../provider/iam/names";
import { toPropertyMap } from "../provider/declare/properties";
import { token } from "../provider/package/tokens";
import { resources } from "../provider/resources/index";
import type { Policy } from "../provider/iam/policy";
import { Diagnostics, JournalShell, PolicyReader, RunCommand } from "../provider/deployment/shell";
import { covers } from "../provider/journal/claims";
import { Rules } from "../provider/journal/rules";
import { IN_FLIGHT_SLACK_MS } from "../provider/journal/knowledge";
import { runCommandOf } from "../provider/process/command";
import type { Claim } from "../provider/resources/resource";
import { SimProcess, World } from "./machine";

export const MEMBER_TYPE = "cloud:endpoints/serviceIamMember:ServiceIamMember";
export const BINDING_TYPE = "cloud:endpoints/serviceIamBinding:ServiceIamBinding";
export const POLICY_TYPE = "cloud:endpoints/consumersIamPolicy:ConsumersIamPolicy";
/** The parent a drawn case's Policies own (no Member, Binding or other writer touches it). */
export const POLICY_PARENT = 2;
/** The endpoint every model provider is configured with. */
export const MODEL_ENDPOINT = "http://127.0.0.1:1";
/** The role a drawn case's Bindings set (no Member and no other writer uses it, so no two resources fight over it). */
export const BINDING_ROLE = "roles/editor";
const STACK = "urn:pulumi:dev::sim";
/** A drawn Binding's name starts with "bind", a Policy's with "pol" (see case.ts); every other name is a Member's. */
export const urnOf = (name: string) => `${STACK}::${name.startsWith("bind") ? BINDING_TYPE : name.startsWith("pol") ? POLICY_TYPE : MEMBER_TYPE}::${name}`;
export const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

/** A deterministic stream of draws (splitmix32), so that one seed is one case. */
export class Draws {
    private s: number;
    constructor(seed: number) {
        this.s = seed >>> 0;
    }
    next(): number {
        this.s = (this.s + 0x9e3779b9) >>> 0;
        let z = this.s;
        z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
        z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
        return (z ^ (z >>> 16)) >>> 0;
    }
    int(n: number): number {
        return n <= 1 ? 0 : this.next() % n;
    }
    chance(p: number): boolean {
        return this.next() / 0x1_0000_0000 < p;
    }
    pick<T>(xs: readonly T[]): T {
        return xs[this.int(xs.length)];
    }
}

// ---- Google ----

export const PARENTS: Parent[] = [
    { kind: "service", serviceName: "a.endpoints.sim.cloud.goog" },
    { kind: "consumer", serviceName: "a.endpoints.sim.cloud.goog", consumerProject: "tenant" },
    // A recorded trace's third parent (the campaign's consumer whose Policy a program owns); drawn cases use two.
    { kind: "consumer", serviceName: "a.endpoints.sim.cloud.goog", consumerProject: "owned" },
];

/** Where a grant lives: its parent's index in PARENTS and the grant. */
export interface Placed {
    parent: number;
    grant: Grant;
}
export const placedKey = (p: Placed) => `${p.parent}|${grantKey(p.grant)}`;
export const describePlaced = (p: Placed) => `${describeGrant(p.grant)} on ${parentName(PARENTS[p.parent])}`;

/** One grant a write adds (present) or removes. */
export interface Change {
    at: Placed;
    present: boolean;
}

/** A write sent to Google whose sender died before Google applied it (Strike.landsAfter). */
interface InFlight {
    changes: Change[];
    /** The etag of the policy it read: Google refuses it once the policy has changed since. */
    etag: string;
    /** It lands after this many more of Google's answers to policy reads. */
    reads: number;
    /** Its deadline: no attempt of it was sent after that. */
    until: number;
    what: string;
    /** A later operation on its grant found it as it would set it, and wrote nothing (the etag unmoved). */
    overtaken?: boolean;
}

export class Iam {
    private readonly policies = PARENTS.map(() => new Map<string, Grant>());
    /** Each policy's etag: it moves with every write of that policy, whoever makes it. */
    private readonly versions = PARENTS.map(() => 0);
    private readonly inFlight: InFlight[] = [];
    /** Grants a write in flight changed since this was last cleared (the command under way): the judge's. */
    readonly landedLate = new Set<string>();
    reads = 0;
    writes = 0;

    /** `log`: the case's transcript, where a write in flight is told to land. */
    constructor(private readonly log: string[] = []) {}

    /** A recorded policy's etag, until the policy's next write here. */
    private readonly recordedEtags: (string | undefined)[] = PARENTS.map(() => undefined);

    /** IAM as a recorded trace found it: every parent's policy replaced, with its recorded etag where there is one. */
    load(grants: Placed[], etags: (string | undefined)[] = []): void {
        for (const [parent, m] of this.policies.entries()) {
            m.clear();
            this.versions[parent]++;
            this.recordedEtags[parent] = etags[parent];
        }
        for (const g of grants) this.policies[g.parent].set(grantKey(g.grant), g.grant);
    }

    has(p: Placed): boolean {
        return this.policies[p.parent].has(grantKey(p.grant));
    }

    all(): Placed[] {
        return this.policies.flatMap((m, parent) => [...m.values()].map((grant) => ({ parent, grant })));
    }

    policy(parent: number): Policy {
        const byRole = new Map<string, string[]>();
        for (const g of this.policies[parent].values()) byRole.set(g.role, [...(byRole.get(g.role) ?? []), g.member]);
        return { version: 1, etag: this.etagOf(parent), bindings: [...byRole].map(([role, members]) => ({ role, members })) };
    }

    etagOf(parent: number): string {
        return this.recordedEtags[parent] ?? `e${parent}.${this.versions[parent]}`;
    }

    set(p: Placed, present: boolean): void {
        this.apply([{ at: p, present }]);
    }

    /** One write of one policy: its grants changed, its etag moved once. */
    apply(changes: Change[]): void {
        if (changes.length === 0) return;
        this.writes++;
        this.versions[changes[0].at.parent]++;
        this.recordedEtags[changes[0].at.parent] = undefined;
        for (const { at, present } of changes) {
            if (present) this.policies[at.parent].set(grantKey(at.grant), at.grant);
            else this.policies[at.parent].delete(grantKey(at.grant));
        }
    }

    /** The grants on `parent` that a resource of claim `c` sets when it writes (see covers). */
    coveredBy(parent: number, c: Claim): Placed[] {
        return this.all().filter((p) => p.parent === parent && covers(c, p.grant));
    }

    /** Another writer changes the policy outside the grants a case follows (another role, an audit config): its etag moves. */
    touch(parent: number): void {
        this.versions[parent]++;
        this.recordedEtags[parent] = undefined;
    }

    /** A Binding's or Policy's Read (its getIamPolicy): the grants it sets that the policy holds. */
    readCovered(parent: number, c: Claim): Placed[] {
        const found = this.coveredBy(parent, c);
        this.answeredRead();
        return found;
    }

    /** A resource's Read of `p` (its getIamPolicy): whether the grant is there. */
    read(p: Placed): boolean {
        const has = this.has(p);
        this.answeredRead();
        return has;
    }

    /** A write whose sender died before Google applied it. */
    send(w: InFlight): void {
        this.inFlight.push(w);
    }

    /** The writes in flight that `due` says land now: each is applied, or refused where the policy changed since its read. */
    land(due: (w: InFlight) => boolean): void {
        if (this.inFlight.length === 0) return;
        for (const w of this.inFlight.filter(due)) {
            this.inFlight.splice(this.inFlight.indexOf(w), 1);
            const applies = this.etagOf(w.changes[0].at.parent) === w.etag;
            this.log.push(`  ! the write of ${w.what}, sent before its sender died, ${applies ? "lands" : "is refused: the policy changed since its read (409)"}` +
                `${applies && w.overtaken ? ", after a later operation found its grant as the program declares it and wrote nothing" : ""}`);
            if (!applies) continue;
            this.apply(w.changes);
            for (const c of w.changes) this.landedLate.add(placedKey(c.at));
        }
    }

    /** An operation finds `p` as it would set it (`present`) and writes nothing: a write in flight that undoes it may still land. */
    nothingToWrite(p: Placed, present: boolean): void {
        for (const w of this.inFlight) if (w.changes.some((c) => placedKey(c.at) === placedKey(p) && c.present !== present)) w.overtaken = true;
    }

    private answeredRead(): void {
        this.land((w) => --w.reads <= 0);
    }

    reader(): PolicyReader {
        return {
            getIamPolicy: (parent: Parent) => {
                this.reads++;
                const answer = this.policy(PARENTS.findIndex((p) => parentName(p) === parentName(parent)));
                this.answeredRead();
                return Promise.resolve(answer);
            },
        };
    }
}

// ---- The stack ----

export type ProviderName = "default" | "explicit";
export const providerUrn = (p: ProviderName, version: string) =>
    p === "default" ? `${STACK}::pulumi:providers:cloud::default_${version.replace(/\./g, "_")}` : `${STACK}::pulumi:providers:cloud::explicit`;

/** A Member as the program declares it, or as the engine's state holds it. */
export interface Member {
    name: string;
    at: Placed;
    provider: ProviderName;
    deleteBeforeReplace?: boolean;
    /**
     * A drawn Binding (its name starts with "bind"): authoritative for the role of `at` on its parent, granting it to
     * exactly these members (`at` is the first of them).
     */
    members?: string[];
    /** A drawn Policy (its name starts with "pol"): authoritative for the whole policy of its parent, these grants (`at` is the first). */
    owns?: Grant[];
    /** The resource type, where it is not a Member (a recorded trace's Binding or Policy, modelled by its first grant). */
    type?: string;
    /**
     * In the checkpoint: deleted first for a deleteBeforeReplace replacement whose Create has not been recorded. The
     * engine keeps it marked (`pendingReplacement`) and no longer reads it (as recorded traces show).
     */
    pendingReplacement?: boolean;
}
/** The grants a resource declares: a Member's one, a Binding's members, a Policy's grants. */
export function grantsOf(m: Member): Placed[] {
    if (m.owns) return m.owns.map((grant) => ({ parent: m.at.parent, grant }));
    return m.members ? m.members.map((member) => ({ parent: m.at.parent, grant: { role: m.at.grant.role, member } })) : [m.at];
}
export const holdsGrant = (m: Member, p: Placed) => grantsOf(m).some((g) => placedKey(g) === placedKey(p));
/** Whether a resource sets more than its own grants when it writes: a Binding (its role), a Policy (its parent's policy). */
export const authoritative = (m: Member) => m.members !== undefined || m.owns !== undefined;
/** Whether a write of `m` sets `p` (its role's or its policy's grants, a Member's own one). */
export const setsGrant = (m: Member, p: Placed) => m.at.parent === p.parent && covers(claimOf(m), p.grant);
const short = (member: string) => member.replace(/^user:|@example\.com$/g, "");
export const describeResource = (m: Member) => m.owns
    ? `the policy of ${parentName(PARENTS[m.at.parent])}: ${m.owns.map((g) => `${g.role} ${short(g.member)}`).join(", ") || "empty"}`
    : m.members
    ? `${m.at.grant.role} to ${m.members.map(short).join(",")} on ${parentName(PARENTS[m.at.parent])}`
    : describePlaced(m.at);
/** What the plugin claims for a model resource: its own resource's claim of the inputs the model's resource stands for. */
const claimsMade = new WeakMap<Member, Claim>();
export function claimOf(m: Member): Claim {
    const made = claimsMade.get(m);
    if (made) return made;
    const parent = PARENTS[m.at.parent];
    const shape = m.owns ? "Policy" : m.members ? "Binding" : "Member";
    const resource = resources.find((r) => r.token === token("endpoints", `${PREFIX[parent.kind]}Iam${shape}`));
    const where = parent.kind === "service" ? { serviceName: parent.serviceName } : { serviceName: parent.serviceName, consumerProject: parent.consumerProject };
    const { role, member } = m.at.grant;
    const inputs = m.owns ? { ...where, policyData: JSON.stringify(policyOf(grantsOf(m))) }
        : m.members ? { ...where, role, members: m.members } : { ...where, role, member };
    const claim = resource?.claimOf(toPropertyMap(inputs));
    if (!claim) throw new Error(`the provider has no ${shape} claim for ${JSON.stringify(inputs)}`);
    claimsMade.set(m, claim);
    return claim;
}
const memberId = (m: Member) => m.owns ? parentName(PARENTS[m.at.parent]) : `${parentName(PARENTS[m.at.parent])} ${m.at.grant.role}${m.members ? "" : ` ${m.at.grant.member}`}`;

export interface Checkpoint {
    resources: Map<string, Member>;
    /** Creates the engine began and never saw end (the CLI died): Pulumi keeps them until cleared or imported. */
    pendingCreates: Map<string, Member>;
    /** The old resources of create-first replacements whose Delete has not been recorded: Pulumi keeps them, to delete. */
    condemned: Member[];
}


// ---- Commands and faults ----

export type CommandKind = "up" | "preview" | "refresh" | "destroy" | "import";

export interface Command {
    kind: CommandKind;
    skipPreview?: boolean;
    refresh?: boolean;
    previewOnly?: boolean;
    targets?: string[];
    excludes?: string[];
    clearPendingCreates?: boolean;
    /** `pulumi import`: the name, and the ID it imports. */
    importName?: string;
    importId?: string;
    importAt?: Placed;
    importProvider?: ProviderName;
    /**
     * `--target-dependents`: the targets' dependents too. A Member depends on its provider (and its parent, the stack):
     * with a provider's URN targeted, every Member of that provider is (pkg/resource/deploy/step_generator.go,
     * isTargetedForUpdate and getTargetDependents); with a Member's, it is `--target` (no Member depends on another).
     */
    targetDependents?: boolean;
}

export type StrikeKind = "kill-plugin" | "kill-cli" | "crash-machine" | "ctrl-c" | "ctrl-c-twice" | "lost-answer" | "unavailable";

/** What goes wrong in a command: at its `at`-th write (of its recording run), after Google applied it or before. */
export interface Strike {
    kind: StrikeKind;
    at: number;
    /** A kill (of the plugin, of the CLI, the machine's crash) as the plugin appends the write's record: the line is torn (readers skip it) and the write never sent. */
    torn?: boolean;
    /**
     * A kill with the write sent and not yet applied: it lands after this many more of Google's answers to policy
     * reads, unless the policy changed since its read (its etag: refused), and at the latest before its deadline and
     * the journal's slack are past (IN_FLIGHT_SLACK_MS) or the user recovers.
     */
    landsAfter?: number;
    /**
     * A Ctrl-C (`kind` "ctrl-c") pressed again once the struck operation was answered: the engine stops at once, before
     * it records that answer.
     */
    again?: boolean;
    /**
     * Aimed at the write of a deleteBeforeReplace replacement's Create, right after its old's Delete, in place of the
     * `at`-th write (the run is then struck there or not at all).
     */
    afterDeleteFirst?: boolean;
    /**
     * A kill of a plugin aimed at its second write of the run, while a plugin of another provider of the run lives on,
     * in place of the `at`-th write: the moment a peer's answered operations are in a live run's hands.
     */
    afterOwnWrite?: boolean;
}

/**
 * What Google does to a command's `at`-th write (of its recording run), as the resource's read-modify-write meets it
 * (iam/parentPolicy.ts `cycle`, iam/fetcher.ts `call`). `conflict`: another writer changed the policy since the read,
 * so the write's etag is stale (409 ABORTED; no attempt applied, its record undone); the resource reads again and
 * writes (`lands`), or every retry meets another change until the deadline. `quota`: 429 (nothing applied); the
 * write waits `waitMs` for its turn and lands, or gets none before the deadline (its record undone). `reset`: the
 * connection reset with the answer lost, Google having `applied` the attempt or not; a retry gets an answer (`lands`:
 * if it applied, the retry's stale etag gets a 409 and the fresh read shows the change, so nothing more is written)
 * or none (the record stays open: the write may have applied).
 */
export interface GoogleFault {
    kind: "conflict" | "quota" | "reset";
    at: number;
    lands: boolean;
    applied?: boolean;
    waitMs?: number;
}

export function describeStrike(s: Strike): string {
    const how = s.torn ? ", its record torn" : s.landsAfter !== undefined ? `, the write in flight (lands after ${s.landsAfter} reads)`
        : s.again ? ", and again once that operation was answered" : "";
    const at = s.afterDeleteFirst ? "the Create after a deleteBeforeReplace Delete" : s.afterOwnWrite ? "its plugin's second write, another plugin of the run alive" : `write ${s.at}`;
    return `strike: ${s.kind} at ${at}${how}`;
}

export function describeFault(f: GoogleFault): string {
    const code = { conflict: "409", quota: "429", reset: "a reset" }[f.kind];
    const end = f.kind === "reset" ? `${f.applied ? "applied" : "not applied"}, ${f.lands ? "answered on retry" : "no answer"}` : f.lands ? "lands on retry" : "fails";
    return `google: ${code} at write ${f.at}, ${end}`;
}

export function argvOf(c: Command): string[] {
    const argv = ["pulumi", c.kind === "up" ? "up" : c.kind];
    if (c.kind === "import") argv.push(MEMBER_TYPE, c.importName ?? "", c.importId ?? "");
    if (c.kind !== "preview") argv.push("--yes");
    if (c.skipPreview) argv.push("--skip-preview");
    if (c.refresh) argv.push("--refresh");
    if (c.previewOnly) argv.push("--preview-only");
    if (c.clearPendingCreates) argv.push("--clear-pending-creates");
    for (const t of c.targets ?? []) argv.push("--target", t);
    if (c.targetDependents) argv.push("--target-dependents");
    for (const t of c.excludes ?? []) argv.push("--exclude", t);
    return argv;
}

/** What a note of the journal says, parsed for the judge. */
export interface Note {
    text: string;
    kind: "unrecorded" | "removed" | "unusable" | "left" | "other";
    at?: Placed;
    /** Not checked against Google (its own words say so). */
    unchecked: boolean;
    /** Resolved by importing: the import ID its command gives. */
    importId?: string;
    importName?: string;
}

export interface Said {
    note: Note;
    /** The invariant's word on it when it was said: undefined when true. */
    untrue?: string;
}

/** Where in an engine run a call falls: each phase's calls start once every call of an earlier one has ended. */
export type Phase = "refresh" | "import" | "register" | "delete";

/** A call the model's engine sends the plugin (Handshake: a plugin process it starts). */
export interface SentCall {
    run: number;
    method: string;
    name: string;
    phase: Phase;
    preview: boolean;
}

/** How a recorded call was answered, as the model's engine meets it. */
export type Answer = "ok" | "failed" | "gone" | "cut";

/**
 * What the engine leaves open, settled by a recorded trace instead of the draws (`npm run sim -- --conform`): the
 * order it starts steps in, the plugin's answers, and whether it stopped starting steps.
 */
export interface Guide {
    /** A run of the model begins. */
    beginRun(): void;
    order<T>(xs: T[], nameOf: (x: T) => string): T[];
    /** Whether this run's Deletes overlapped. */
    parallel(): boolean;
    /** The recorded Diff's answer for `name` in this run. */
    diff(name: string): "none" | "update" | "replace" | undefined;
    /** The recorded answer to the next `method` on `name` in this run; undefined when the run sent no more such calls. */
    answer(name: string, method: string, id?: string): Answer | undefined;
    /**
     * The model sent `method` on `name`: its next one is the run's next such call. `id`: a Read's resource ID, which
     * tells a URN's live resource from its replaced old awaiting its Delete (read at once, in either order).
     */
    sent(name: string, method: string, id?: string): void;
    /** Whether the run stopped starting steps (a step failed, a Ctrl-C, a kill): a step it never sent was not due. */
    stopped(): boolean;
}

/** The model's flows, by name: a set of recorded traces is told which of them none exercised. */
export const TRANSITIONS = [
    "preview first", "refresh finds it gone", "import", "import of what the stack holds", "create", "update",
    "replace, creating first", "replace, deleting first", "replacement created after its old was deleted", "provider changed",
    "delete what the program dropped", "a condemned resource deleted by a later run", "destroy in parallel",
    "destroy one by one", "answer never came",
] as const;
export type Transition = (typeof TRANSITIONS)[number];

/** The world a case runs in. */
export class Stack {
    readonly log: string[] = [];
    readonly iam = new Iam(this.log);
    readonly world: World;
    /** The engine's saved state (the judge's word on what the stack holds). */
    private savedState: Checkpoint = { resources: new Map(), pendingCreates: new Map(), condemned: [] };
    /** The checkpoint each run reads: the saved one, or, for a preview beside a command, the state it read as it began. */
    get checkpoint(): Checkpoint {
        return beside.getStore() ?? this.savedState;
    }
    set checkpoint(c: Checkpoint) {
        this.savedState = c;
    }
    program: Member[] = [];
    foreign: Placed[] = [];
    version = "8.38.0";
    /** Whether a plugin can read its CLI's command line (Linux, macOS) or not (Windows, PULUMI_DEBUG_PROVIDERS). */
    commandKnown = true;
    /** Every grant the plugin wrote, so a note can be matched to it. */
    readonly known = new Map<string, Placed>();
    /** The calls the engine sent, in order (kept only when `trace` is set). */
    readonly sent: SentCall[] = [];
    trace = false;
    /** The model's transitions taken, by name: which of its flows a set of traces exercised. */
    readonly took = new Map<Transition, number>();
    guide?: Guide;
    private cli = 0;
    private run = 0;
    /** The write (of the next command's recording run) at which a `pulumi preview` runs beside it (see previewBeside). */
    besideAt?: number;
    /** Whether that preview, which read the state as the command began, sends its Diffs once the command's operations are over (Step.besideLate). */
    besideLate?: "open" | "ended";
    /** Whether the next write is a deleteBeforeReplace replacement's Create, right after its old's Delete (Strike.afterDeleteFirst). */
    private deletedFirst = false;
    /** The resource at whose write a preview began that sends its Diffs once the command has ended. */
    private besideEnded?: string;
    /** Writes applied whose operation is still under way in a live process (`urn|placedKey`): no operation stopped. */
    private readonly underway = new Set<string>();
    /** The checkpoint a preview beside a command reads: the state as that command began, or as it is now. */
    private besideReads?: Checkpoint;
    /** What the engine's state holds now (the judge's word), whichever checkpoint a run reads. */
    private get saved(): Checkpoint {
        return this.savedState;
    }
    /** A second Ctrl-C lost the save of a Create or a Delete that was answered (see knownIssue in case.ts). */
    lostSave = false;
    /** The grants of operations the journal kept as answered whose answer the engine never heard: their plugin died first. */
    readonly unheard = new Map<string, Placed>();
    /** The grants of the steps whose save a second Ctrl-C may have lost (lost or not), by `placedKey`. */
    readonly lostSaveOf = new Map<string, Placed>();
    /** The checkpoint as it was before the last change recorded, while that change's save may be under way. */
    private unsaved?: Checkpoint;
    /** Where each process's Diff warnings go (the server warns each reason the journal gives on the resource). */
    private readonly diffSinks = new WeakMap<JournalShell, (urn: string, why: string) => void>();

    private send(method: string, name: string, phase: Phase, preview: boolean, id?: string): void {
        // Only a write carries the preview flag; Check, Diff and Read are the same requests in a preview.
        if (this.trace) this.sent.push({ run: this.run, method, name, phase, preview: preview && ["Create", "Update", "Delete"].includes(method) });
        this.guide?.sent(name, method, id);
    }

    private took1(transition: Transition): void {
        this.took.set(transition, (this.took.get(transition) ?? 0) + 1);
    }

    /** `xs` in the order a trace shows, or as they are. */
    private guided<T extends { name: string }>(xs: T[]): T[] {
        return this.guide ? this.guide.order(xs, (x) => x.name) : xs;
    }

    /** The order the engine starts `xs` in: drawn, or as the trace shows. */
    private order<T extends { name: string }>(xs: T[]): T[] {
        const drawn = shuffle(this.draws, xs);
        return this.guide ? this.guide.order(xs, (x) => x.name) : drawn;
    }

    constructor(readonly rules: Rules, readonly draws: Draws, world: World) {
        this.world = world;
    }

    /** Time passes: a write in flight has landed before its deadline and the journal's slack are past. */
    pass(ms: number): void {
        const to = this.world.now + ms;
        this.iam.land((w) => w.until + IN_FLIGHT_SLACK_MS < to);
        this.world.now = to;
    }

    /** The user recovers: every write still in flight has landed or been refused by now (it takes seconds). */
    settleInFlight(): void {
        this.iam.land(() => true);
    }

    /** The grant a note names: its first words are the grant and its parent, as the journal writes them. */
    placedOf(text: string): Placed | undefined {
        for (const p of this.known.values()) {
            const [grant, parent] = [describeGrant(p.grant), parentName(PARENTS[p.parent])];
            if (text.startsWith(`${grant} on ${parent} `) || text.startsWith(`${grant} was removed from ${parent} `)) return p;
        }
        return undefined;
    }

    parse(text: string): Note {
        // A note that says it may not be so (not checked, or Pulumi may have recorded it) is judged by none of its claims.
        const unchecked = /not checked\)|reading the policy failed|Pulumi may have recorded it since/.test(text);
        if (text.includes("cannot keep its crash journal")) return { text, kind: "unusable", unchecked };
        const at = this.placedOf(text);
        const imp = /pulumi import --protect=false \S+ (\S+) '([^']+)'/.exec(text);
        if (/ was removed from .* that stopped before Pulumi recorded it; Pulumi's state still holds it/.test(text)) return { text, kind: "removed", at, unchecked };
        if (/no run has recorded it since|Pulumi may have recorded it since/.test(text)) return { text, kind: "unrecorded", at, unchecked, ...(imp ? { importName: imp[1], importId: imp[2] } : {}) };
        return { text, kind: "other", at, unchecked };
    }

    /** Whether any resource the engine's state holds (or is creating) holds `p`. */
    held(p: Placed, c: Checkpoint = this.checkpoint): boolean {
        for (const m of [...c.resources.values(), ...c.condemned]) if (!m.pendingReplacement && holdsGrant(m, p)) return true;
        return false;
    }

    /** Runs one CLI command; returns what the journal said in it. */
    async command(c: Command, strike?: Strike, fault?: GoogleFault): Promise<CommandOutcome> {
        const cli = `cli${++this.cli}`;
        const argv = argvOf(c);
        this.iam.landedLate.clear();
        this.log.push(`  program: ${this.program.map((m) => `${m.name}=${describeResource(m)}${m.provider === "explicit" ? " (explicit)" : ""}${m.deleteBeforeReplace ? " (deleteBeforeReplace)" : ""}`).join("; ") || "empty"}`);
        this.log.push(`$ ${argv.join(" ")}${strike ? `   [${describeStrike(strike)}]` : ""}${fault ? `   [${describeFault(fault)}]` : ""}${this.commandKnown ? "" : "   [command line unknown]"}`);
        const outcome: CommandOutcome = { said: [], struck: false, clean: true, plugins: 0 };
        const previewsFirst = c.kind !== "preview" && !c.skipPreview && !c.previewOnly;
        const argvKnown = this.commandKnown ? argv : [];
        if (previewsFirst) {
            this.took1("preview first");
            await this.engineRun(c, cli, argvKnown, true, undefined, outcome);
        }
        if (!outcome.struck) await this.engineRun(c, cli, argvKnown, c.kind === "preview" || c.previewOnly === true, strike, outcome, fault);
        // A preview begun beside the command sends its Diffs once it has ended (unless the machine went down with it).
        const ended = this.besideEnded;
        this.besideEnded = undefined;
        if (ended !== undefined && !(outcome.struck && strike?.kind === "crash-machine")) {
            this.pass(1000);
            await this.previewBeside(ended, [], outcome);
        }
        for (const s of outcome.said) this.log.push(`  ${s.untrue ? "UNTRUE " : ""}said: ${s.note.text.slice(0, 400)}`);
        return outcome;
    }

    /** One engine run (a command's preview, or its update): the plugins it starts and the RPCs it sends them. */
    private async engineRun(c: Command, cli: string, argv: string[], preview: boolean, strike: Strike | undefined, outcome: CommandOutcome,
        fault?: GoogleFault): Promise<void> {
        const address = `${cli}-run${++this.run}`;
        this.guide?.beginRun();
        const rc: RunCommand = runCommandOf(argv);
        const procs = new Map<ProviderName, { p: SimProcess; j: JournalShell }>();
        // An open item is said once per run: a second saying of it in the same run is noise.
        const saidOnce = new Set<string>();
        const saidInRun = (n: Note) => {
            if (n.kind !== "unrecorded" && n.kind !== "removed") return undefined;
            const again = saidOnce.has(n.text);
            saidOnce.add(n.text);
            return again ? `said a second time in one run: ${n.text}` : undefined;
        };
        let engineGone = false;
        let recordNothing = false;
        /** A second Ctrl-C came: the engine records nothing more, and answers given before it it may never have heard. */
        let twice = false;
        /** A second Ctrl-C to come once the struck operation is answered (Strike.again). */
        let secondCtrlC: { kind: string; m: Member } | undefined;
        /** The resource whose write a preview beside the command began at, to send its Diffs at the end (Stack.besideLate). */
        let besideAtEnd: string | undefined;
        let stopStarting = false;
        const diagnostics: Diagnostics = {
            warn: (message) => {
                for (const line of message.split("\n")) {
                    const text = line.replace(/^ {2}- /, "");
                    if (text.startsWith("what earlier runs")) continue;
                    const note = this.parse(text);
                    if (note.kind === "other" && !/crash journal/.test(text)) continue;
                    outcome.said.push({ note, untrue: this.untrue(note) ?? saidInRun(note) });
                }
            },
            debug: () => undefined,
        };
        const proc = (name: ProviderName) => {
            let got = procs.get(name);
            if (!got) {
                const p = this.world.spawn(cli);
                outcome.plugins++;
                this.send("Handshake", "", "register", preview);
                const j = new JournalShell(p.host(), diagnostics, () => this.iam.reader(), () => rc, this.rules);
                this.diffSinks.set(j, (urn, why) => outcome.said.push({ note: { text: why, kind: "other", unchecked: false }, untrue: this.untrueDiff(urn, why) }));
                j.engine(address);
                const urn = providerUrn(name, this.version);
                j.attach(urn);
                j.provider(urn, MODEL_ENDPOINT);
                got = { p, j };
                procs.set(name, got);
            }
            return got;
        };
        /** What this run's refresh found gone, where the run is a preview (which records nothing). */
        const goneInRun = new Set<string>();
        const targeted = (m: Member) => {
            const urn = urnOf(m.name);
            const hit = (ts: string[]) => ts.includes(urn) || (c.targetDependents === true && ts.includes(providerUrn(m.provider, this.version)));
            return (c.targets?.length ? hit(c.targets) : true) && !(c.excludes ?? []).includes(urn);
        };
        let writes = 0;
        /** Each process's writes in this run, and whether an aimed strike (Strike.afterOwnWrite) came already. */
        const wroteBy = new Map<SimProcess, number>();
        let aimedStruck = false;

        /** What each Binding's or Policy's Read in this run found: Google's grants, which the engine records. */
        const readFound = new Map<string, Member>();
        /** One resource operation through the journal, as the server runs it. */
        const op = async (m: Member, kind: "create" | "delete" | "refresh" | "import" | "update", held: Member | undefined, phase: Phase): Promise<"ok" | "gone" | "failed"> => {
            const { p, j } = proc(m.provider);
            if (!p.alive || engineGone) return "failed";
            const heldClaim = held ? claimOf(held) : undefined;
            // A Read carries no preview flag: the engine's refresh and import send the same request in a preview.
            const read = kind === "refresh" || kind === "import";
            const method = read ? "Read" : kind === "create" ? "Create" : kind === "update" ? "Update" : "Delete";
            const id = read ? memberId(m) : undefined;
            const told = this.guide?.answer(m.name, method, id);
            this.send(method, m.name, phase, preview && !read, id);
            if (told === "cut") {
                // The engine never heard back: it was killed, or it stopped waiting. It records nothing more, and the
                // trace tells which of the steps it had under way it still sent.
                recordNothing = true;
                this.took1("answer never came");
                return "failed";
            }
            try {
                let twiceAtAnswer = true;
                const result = await j.operation({ urn: urnOf(m.name), kind, preview: preview && !read, ...(heldClaim ? { held: heldClaim } : {}) },
                    { iam: () => { throw new Error("the simulated Member reads the model's IAM"); }, warn: () => undefined },
                    // Whether a second Ctrl-C had come by the time the operation's answer was ready.
                    async (ctx) => { try { return await (async () => {
                            ctx.named(memberId(m));
                            if (told === "failed") throw new Error("the recorded call failed");
                            if (read && told !== undefined) return told === "gone" ? "gone" as const : "ok" as const;
                            if (read && m.owns) {
                                // A Policy's Read shows the whole policy (resources/policy.ts), empty or not.
                                const found = this.iam.readCovered(m.at.parent, claimOf(m));
                                readFound.set(m.name, { ...m, at: found[0] ?? m.at, owns: found.map((f) => f.grant) });
                                return "ok" as const;
                            }
                            if (read && m.members) {
                                // A Binding's Read shows Google's members of its role (resources/grant.ts): none is "gone".
                                const found = this.iam.readCovered(m.at.parent, claimOf(m));
                                if (found.length === 0) return "gone" as const;
                                readFound.set(m.name, { ...m, at: found[0], members: found.map((f) => f.grant.member).sort() });
                                return "ok" as const;
                            }
                            if (read) return this.iam.read(m.at) ? "ok" as const : "gone" as const;
                            if (preview) return "ok" as const;
                            const present = kind !== "delete";
                            const kept = kind === "delete" ? ctx.kept(parentName(PARENTS[m.at.parent])) : undefined;
                            const leftOnce = new Set<string>();
                            /** A grant a Delete leaves because another resource of the run declares it, with the resource's warning (resources/parent.ts: keptGrants). */
                            const keeps = (at: Placed): boolean => {
                                const keeper = kept?.declaredBy(grantKey(at.grant));
                                if (keeper === undefined) return false;
                                // One only a run that may have been a preview saw holding it: the warning says "may".
                                const maybe = kept?.maybe?.(grantKey(at.grant)) === true;
                                if (!leftOnce.has(placedKey(at))) {
                                    outcome.said.push({ note: { text: `deleted, but left ${describePlaced(at)}: ${maybe ? "may be " : ""}declared by ${keeper}`, kind: "left", at, unchecked: true },
                                        untrue: maybe ? undefined : this.untrueLeft(keeper, at) });
                                }
                                leftOnce.add(placedKey(at));
                                return true;
                            };
                            // A Member whose grant another resource declares sends no request at all.
                            if (!authoritative(m) && kind === "delete" && keeps(m.at)) return "ok" as const;
                            // A Policy's Delete where another Policy of the run manages the parent removes only the grants
                            // its own state holds that no resource declares, and leaves the rest to that Policy.
                            const manager = m.owns ? kept?.policy : undefined;
                            if (manager !== undefined) {
                                outcome.said.push({ note: { text: `deleted, but left the IAM policy of ${parentName(PARENTS[m.at.parent])} to ${manager}, which manages it now: only what this resource alone declared was removed`, kind: "other", unchecked: true } });
                            }
                            /**
                             * What the write changes in the policy as it is now: what it sets (a Member its grant, a Binding
                             * its role, a Policy the whole policy) to exactly what it declares, or, for a Delete, to nothing
                             * but what another resource declares.
                             */
                            const changesNow = (): Change[] => {
                                const want = new Set(present ? grantsOf(m).map(placedKey) : []);
                                const gone = manager !== undefined
                                    ? grantsOf(m).filter((g) => this.iam.has(g) && kept?.declaredBy(grantKey(g.grant)) === undefined)
                                    : this.iam.coveredBy(m.at.parent, claimOf(m)).filter((x) => !want.has(placedKey(x)) && !keeps(x));
                                const out: Change[] = gone.map((at) => ({ at, present: false }));
                                if (present) for (const g of grantsOf(m)) if (!this.iam.has(g)) out.push({ at: g, present: true });
                                return out;
                            };
                            const overtaken = () => {
                                for (const g of grantsOf(m)) this.iam.nothingToWrite(g, present);
                            };
                            let changes = changesNow();
                            if (changes.length === 0) {
                                const current = this.iam.policy(m.at.parent);
                                // Written unchanged where the journal fences a dead process's write in flight (the etag moves).
                                if (ctx.fenced(PARENTS[m.at.parent], current)) {
                                    const fence = ctx.wrote(PARENTS[m.at.parent], current, current, this.world.now + 30_000);
                                    this.iam.touch(m.at.parent);
                                    this.iam.writes++;
                                    fence.landed(this.iam.policy(m.at.parent));
                                } else overtaken();
                                return "ok" as const;
                            }
                            /** The read-modify-write: the policy as read (and its etag), and as this write leaves it. */
                            const readPolicy = () => {
                                const changed = new Set(changes.map((c) => placedKey(c.at)));
                                const after = this.iam.all().filter((x) => x.parent === m.at.parent && !changed.has(placedKey(x)));
                                for (const c of changes) if (c.present) after.push(c.at);
                                return { before: this.iam.policy(m.at.parent), after: policyOf(after) };
                            };
                            const deadline = this.world.now + 30_000;
                            let rmw = readPolicy();
                            let rec = ctx.wrote(PARENTS[m.at.parent], rmw.before, rmw.after, deadline);
                            const n = ++writes;
                            const ownWrites = wroteBy.get(p) ?? 0;
                            wroteBy.set(p, ownWrites + 1);
                            const aimed = (s: Strike) => s.afterDeleteFirst ? this.deletedFirst
                                : s.afterOwnWrite ? !aimedStruck && ownWrites === 1 && [...procs.values()].some((x) => x.p !== p && x.p.alive)
                                : s.at === n;
                            const hit = strike && aimed(strike) ? strike : undefined;
                            if (hit) aimedStruck = true;
                            this.deletedFirst = false;
                            const what = `${kind} of ${m.name}`;
                            /** A kill: of the plugin, or of the CLI and every plugin (the machine's crash loses what is not on disk, too). */
                            const die = (k: StrikeKind): Error => {
                                if (k === "kill-plugin") {
                                    this.world.kill(p);
                                    if (hit?.torn) this.world.tear(p.writer.id);
                                    stopStarting = true;
                                    return new Error("the plugin died");
                                }
                                for (const x of procs.values()) this.world.kill(x.p);
                                if (hit?.torn) this.world.tear(p.writer.id);
                                if (k === "crash-machine") this.world.crash();
                                engineGone = true;
                                if (kind === "create") this.checkpoint.pendingCreates.set(urnOf(m.name), m);
                                return new Error("the CLI died");
                            };
                            /** The operation fails once its deadline is past: the engine starts no more steps. */
                            const failAtDeadline = (why: string): Error => {
                                this.pass(Math.max(0, deadline - this.world.now));
                                outcome.clean = false;
                                stopStarting = true;
                                return new Error(why);
                            };
                            if (hit?.torn) {
                                this.log.push(`  ! ${hit.kind} as the plugin journals the ${what}: the line is torn, the write never sent`);
                                outcome.struck = true;
                                outcome.clean = false;
                                throw die(hit.kind);
                            }
                            await rec.durable;
                            // A process killed meanwhile sends nothing more.
                            if (!p.alive) throw new Error("the plugin died");
                            for (const c of changes) this.known.set(placedKey(c.at), c.at);
                            // Whether Google applied the write already (a reset), and whether its answer to this record comes (rec.landed).
                            let applied = false;
                            let answered = true;
                            const google = fault?.at === n ? fault : undefined;
                            if (google?.kind === "conflict") {
                                this.iam.touch(m.at.parent);
                                rec.undo();
                                this.log.push(`  ! 409 on the write of ${what}: another writer changed the policy since its read${google.lands ? "; it reads again and writes" : ", and does on every retry"}`);
                                if (!google.lands) throw failAtDeadline("409 ABORTED: concurrent policy changes on every attempt within the request timeout");
                                this.pass(1000);
                                changes = changesNow();
                                if (changes.length === 0) {
                                    overtaken();
                                    return "ok" as const;
                                }
                                rmw = readPolicy();
                                rec = ctx.wrote(PARENTS[m.at.parent], rmw.before, rmw.after, deadline);
                                await rec.durable;
                                if (!p.alive) throw new Error("the plugin died");
                                for (const c of changes) this.known.set(placedKey(c.at), c.at);
                            } else if (google?.kind === "quota") {
                                this.log.push(`  ! 429 on the write of ${what}: ${google.lands ? `its turn under the quota comes ${google.waitMs ?? 0} ms later` : "no turn under the quota before its deadline"}`);
                                if (!google.lands) {
                                    rec.undo();
                                    throw failAtDeadline("429: no room under the quota within the request timeout");
                                }
                                this.pass(google.waitMs ?? 0);
                                // What else is under way goes on meanwhile.
                                for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
                                if (!p.alive) throw new Error("the plugin died");
                            } else if (google?.kind === "reset") {
                                this.log.push(`  ! connection reset on the write of ${what}: Google ${google.applied ? "applied" : "never applied"} it, and the answer is lost`);
                                if (google.applied) this.iam.apply(changes);
                                if (!google.lands) {
                                    outcome.clean = false;
                                    stopStarting = true;
                                    throw new Error("the connection was reset, and no retry got an answer");
                                }
                                // Applied: the retry's etag is stale (409), and the fresh read shows the change: nothing more is written.
                                applied = google.applied === true;
                                answered = !applied;
                            }
                            if (hit?.kind === "unavailable") {
                                outcome.clean = false;
                                stopStarting = true;
                                // Undone only where no attempt can have applied: after a reset, one may have (parentPolicy.ts,
                                // neverApplied), so its record stays (seed 11, case 9911).
                                if (google?.kind !== "reset") rec.undo();
                                throw new Error("503");
                            }
                            if (hit?.landsAfter !== undefined) {
                                this.iam.send({ changes, etag: rmw.before.etag ?? "", reads: hit.landsAfter, until: deadline, what });
                            } else if (!applied) {
                                this.iam.apply(changes);
                            }
                            if (this.besideAt === n && !preview) {
                                if (this.besideLate) besideAtEnd = urnOf(m.name);
                                else await this.previewBeside(urnOf(m.name), changes.map((c) => c.at), outcome);
                            }
                            if (hit) {
                                this.log.push(`  ! ${hit.kind} ${hit.landsAfter !== undefined ? `while the write of ${what} is in flight` : `after ${what} was applied`}`);
                                outcome.struck = hit.kind !== "lost-answer";
                                outcome.clean = false;
                                switch (hit.kind) {
                                    case "lost-answer":
                                        stopStarting = true;
                                        throw new Error("the answer was lost");
                                    case "kill-plugin":
                                    case "kill-cli":
                                    case "crash-machine":
                                        throw die(hit.kind);
                                    case "ctrl-c":
                                        for (const x of procs.values()) x.j.cancel();
                                        stopStarting = true;
                                        if (hit.again) secondCtrlC = { kind, m };
                                        break;
                                    case "ctrl-c-twice":
                                        for (const x of procs.values()) {
                                            x.j.cancel();
                                            x.j.cancel();
                                        }
                                        stopStarting = true;
                                        recordNothing = true;
                                        twice = true;
                                        if (kind === "create") this.checkpoint.pendingCreates.set(urnOf(m.name), m);
                                        // The CLI exits at once: the save of the step that ended just before may not be done
                                        // (its Create stays pending, as the engine saved it when the step began).
                                        if (this.unsaved) {
                                            this.saveAtRisk(this.unsaved);
                                            if (this.draws.chance(0.5)) this.loseLastSave(this.unsaved);
                                        }
                                        break;
                                }
                            }
                            if (answered) rec.landed(this.iam.policy(m.at.parent));
                            return "ok" as const;
                    })(); } finally { twiceAtAnswer = twice; } },
                    (r) => (r === "gone" || kind === "delete" ? undefined : claimOf(read ? readFound.get(m.name) ?? m : m)));
                // A killed process answers nothing: the engine sees its connection close. Where the journal kept the
                // answer first, the engine never heard what the journal took for answered (see knownIssue in case.ts).
                if (!p.alive) {
                    if (!preview && !read && result === "ok") for (const g of grantsOf(m)) this.unheard.set(placedKey(g), g);
                    throw new Error("the plugin died");
                }
                // Answered before a second Ctrl-C that came before the engine recorded it (another operation's write
                // was struck meanwhile): the journal kept the answer, the engine never saved it (the lost-save issue).
                if (result === "ok" && !preview && !read && twice && !twiceAtAnswer) {
                    this.lostSave = true;
                    this.putAtRisk([m]);
                }
                // The second Ctrl-C, once the answer reached the engine: it closes its plugins and records nothing more.
                if (secondCtrlC !== undefined) {
                    const { kind: was, m: struck } = secondCtrlC;
                    secondCtrlC = undefined;
                    for (const x of procs.values()) x.j.cancel();
                    recordNothing = true;
                    twice = true;
                    if (was === "create") this.checkpoint.pendingCreates.set(urnOf(struck.name), struck);
                    // The answer came between the two: the engine never saved it (the known issue of a lost save).
                    this.lostSave = true;
                    this.putAtRisk([struck]);
                    this.log.push(`  ! ctrl-c again, after the answer to the ${was} of ${struck.name}`);
                }
                this.log.push(`  ${preview ? "preview " : ""}${kind} ${m.name} (${describeResource(m)}, ${m.provider}): ${result}`);
                return result;
            } catch (e) {
                this.log.push(`  ${preview ? "preview " : ""}${kind} ${m.name} (${describeResource(m)}, ${m.provider}): failed (${e instanceof Error ? e.message : String(e)})`);
                return "failed";
            }
        };

        if (!preview) this.unsaved = undefined;
        // A preview beside this command may have read the state as it began (drawn): its Diffs come later.
        if (!preview && this.besideAt !== undefined) this.besideReads = this.draws.chance(0.5) || this.besideLate ? copyCheckpoint(this.checkpoint) : undefined;
        const record = (f: () => void) => {
            if (!engineGone && !recordNothing && !preview) {
                this.unsaved = copyCheckpoint(this.checkpoint);
                f();
            }
        };
        try {
            if (c.kind === "refresh" || (c.refresh && (c.kind === "up" || c.kind === "preview"))) {
                if (c.clearPendingCreates && !preview) this.checkpoint.pendingCreates.clear();
                // Every resource of the checkpoint is read, the replaced ones awaiting their Delete too (a recorded
                // trace shows both Reads of a URN that has a condemned old).
                const condemned = new Set(this.checkpoint.condemned);
                for (const m of this.guided([...this.checkpoint.resources.values(), ...this.checkpoint.condemned])) {
                    if (!targeted(m) || stopStarting || engineGone || m.pendingReplacement) continue;
                    if (this.guide?.stopped() && this.guide.answer(m.name, "Read", memberId(m)) === undefined) continue;
                    const r = await op(m, "refresh", m, "refresh");
                    if (r === "gone") {
                        this.took1("refresh finds it gone");
                        // A preview saves nothing, but the rest of its run goes on from what it read (a recorded
                        // `preview --refresh` creates a resource its refresh found gone).
                        if (preview && !condemned.has(m)) goneInRun.add(urnOf(m.name));
                        record(() => (condemned.has(m) ? (this.checkpoint.condemned = this.checkpoint.condemned.filter((x) => x !== m)) : this.checkpoint.resources.delete(urnOf(m.name))));
                    }
                    // A Binding's or Policy's Read answers the grants Google shows: the engine records them as its state.
                    const now = r === "ok" ? readFound.get(m.name) : undefined;
                    if (now && !sameResource(now, m)) {
                        record(() => {
                            if (condemned.has(m)) this.checkpoint.condemned = this.checkpoint.condemned.map((x) => (x === m ? now : x));
                            else this.checkpoint.resources.set(urnOf(m.name), now);
                        });
                    }
                    // Pulumi 3.248's refresh diffs what it read against the resource's inputs (found by a recorded trace).
                    if (r === "ok" && !engineGone) {
                        this.send("Diff", m.name, "refresh", preview);
                        proc(m.provider).j.state(urnOf(m.name), claimOf(now ?? m), claimOf(now ?? m));
                    }
                }
            }
            if (c.kind === "import" && c.importAt && c.importName) {
                const m: Member = { name: c.importName, at: c.importAt, provider: c.importProvider ?? "default" };
                // An import of what the stack already holds under that name and ID sends the plugin nothing (a
                // recorded trace: the same note's import run twice).
                const had = this.checkpoint.resources.get(urnOf(m.name));
                if (had && placedKey(had.at) === placedKey(m.at)) {
                    this.took1("import of what the stack holds");
                    return;
                }
                this.took1("import");
                // The engine reads the resource first, then checks the inputs it read (as a recorded trace shows).
                const r = await op(m, "import", undefined, "import");
                if (r === "ok" && !engineGone) {
                    this.send("Check", m.name, "import", preview);
                    proc(m.provider).j.declare(urnOf(m.name), claimOf(m));
                    record(() => this.checkpoint.resources.set(urnOf(m.name), m));
                }
            }
            if (c.kind === "up" || c.kind === "preview") await this.update(c, preview, proc, op, record, targeted, () => stopStarting || engineGone, goneInRun);
            if (engineGone) this.took1("answer never came");
            if (c.kind === "destroy") {
                const order = this.order([...this.checkpoint.resources.values()].filter((m) => targeted(m)));
                const drawn = this.draws.chance(0.5);
                const parallel = this.guide ? this.guide.parallel() : drawn;
                this.took1(parallel ? "destroy in parallel" : "destroy one by one");
                const one = async (m: Member) => {
                    if (stopStarting || engineGone || preview) return;
                    if (this.guide?.stopped() && this.guide.answer(m.name, "Delete") === undefined) return;
                    const r = await op(m, "delete", m, "delete");
                    if (r === "ok") record(() => this.checkpoint.resources.delete(urnOf(m.name)));
                };
                if (parallel) await Promise.all(order.map(one));
                else for (const m of order) await one(m);
            }
            // A preview that began beside a write of this command, reading the state as the command began, sends its
            // Diffs once the command's operations are over, before its plugins close.
            if (besideAtEnd !== undefined && this.besideLate === "ended") this.besideEnded = besideAtEnd;
            else if (besideAtEnd !== undefined && !engineGone) {
                this.pass(1000);
                await this.previewBeside(besideAtEnd, [], outcome);
            }
        } finally {
            // The engine closes its plugins: a Cancel each, then their shutdown (the server's drain and close).
            if (!engineGone) {
                for (const { p, j } of procs.values()) {
                    if (!p.alive) continue;
                    j.cancel();
                    j.stop();
                    await j.finish(async () => true, 2500);
                    j.close();
                    this.world.kill(p);
                }
            }
            // A pending create stays in the checkpoint until `refresh --clear-pending-creates` (or an import of it),
            // even once a later run has created the resource (as a recorded trace shows).
        }
    }

    /** `pulumi up` / `pulumi preview`: Check and Diff every program resource it targets, then create, replace and delete. */
    private async update(c: Command, preview: boolean, proc: (p: ProviderName) => { j: JournalShell },
        op: (m: Member, kind: "create" | "delete" | "update", held: Member | undefined, phase: Phase) => Promise<string>,
        record: (f: () => void) => void, targeted: (m: Member) => boolean, halted: () => boolean, goneInRun: ReadonlySet<string>): Promise<void> {
        type Step = { kind: "create" | "update" | "replace"; m: Member; old?: Member };
        const steps: Step[] = [];
        const replaced: Member[] = [];
        const program = this.order(this.program.filter((m) => targeted(m)));
        /** Whether a guided run stopped before it sent `method` for `name`: the model then does not send it either. */
        const unsent = (name: string, method: string) => this.guide !== undefined && this.guide.stopped() && this.guide.answer(name, method) === undefined;
        /** A deleteBeforeReplace replacement: its old deleted, then the new one created. False: the run stopped. */
        const deleteFirst = async (step: Step): Promise<boolean> => {
            const urn = urnOf(step.m.name);
            this.took1("replace, deleting first");
            // The engine checks the replacement's inputs again, as new (a recorded trace shows the second Check).
            this.send("Check", step.m.name, "register", preview);
            proc(step.m.provider).j.declare(urn, claimOf(step.m));
            if (preview) {
                // A preview sends no Delete, but it previews the replacement's Create (as a recorded trace shows).
                if (!unsent(step.m.name, "Create")) await op(step.m, "create", undefined, "register");
                return true;
            }
            if (unsent(step.m.name, "Delete")) return true;
            if ((await op(step.old!, "delete", step.old, "register")) !== "ok") return true;
            record(() => this.checkpoint.resources.set(urn, { ...step.old!, pendingReplacement: true }));
            if (halted()) return false;
            if (unsent(step.m.name, "Create")) return true;
            this.deletedFirst = true;
            const created = await op(step.m, "create", undefined, "register");
            this.deletedFirst = false;
            if (created === "ok") record(() => this.checkpoint.resources.set(urn, step.m));
            return true;
        };
        for (const m of program) {
            const urn = urnOf(m.name);
            const { j } = proc(m.provider);
            if (unsent(m.name, "Check")) continue;
            // A Check or Diff the engine never heard back from (it was killed), or that failed (its plugin died under
            // it), leads to nothing more for the resource.
            const checked = this.guide?.answer(m.name, "Check");
            this.send("Check", m.name, "register", preview);
            j.declare(urn, claimOf(m));
            if (checked === "cut" || checked === "failed") continue;
            const old = goneInRun.has(urn) ? undefined : this.checkpoint.resources.get(urn);
            if (!old) {
                steps.push({ kind: "create", m });
                continue;
            }
            if (old.pendingReplacement) {
                // Deleted already for its replacement: the engine diffs it, checks the inputs again as new and creates
                // the replacement (as a recorded trace shows).
                this.send("Diff", m.name, "register", preview);
                j.state(urn, claimOf(old), claimOf(m));
                this.send("Check", m.name, "register", preview);
                j.declare(urn, claimOf(m));
                this.took1("replacement created after its old was deleted");
                steps.push({ kind: "create", m });
                continue;
            }
            const told = this.guide?.diff(m.name);
            const diffed = this.guide?.answer(m.name, "Diff");
            this.send("Diff", m.name, "register", preview);
            if (diffed === "cut" || diffed === "failed") continue;
            const { force, tell } = j.state(urn, claimOf(old), claimOf(m));
            for (const why of tell) this.diffSinks.get(j)?.(urn, why);
            // A Member is replaced when its grant changes. Another provider alone is no replacement: the engine diffs
            // the resource with the new one and keeps it (as recorded traces show).
            // A Binding is replaced when its parent changes (a Policy's never does), and updated when its members do.
            const replace = told !== undefined && !isMemberLike(m) ? told === "replace"
                : m.owns ? false : m.members ? old.at.parent !== m.at.parent : placedKey(old.at) !== placedKey(m.at);
            if (old.provider !== m.provider) this.took1("provider changed");
            if (replace) steps.push({ kind: "replace", m, old });
            // Guided by a trace, the engine's recorded Diff decides (a refresh may have read the resource as declared).
            else if (force || told === "update" || (told === undefined && authoritative(m) && !sameResource(old, m))) steps.push({ kind: "update", m, old });
            else if (old.provider !== m.provider) record(() => this.checkpoint.resources.set(urn, m));
            // The engine runs a deleteBeforeReplace replacement as its resource registers: drawn, before the program's
            // later resources are Checked (the Node SDK registers them as the program runs), or after every Check.
            const last = steps[steps.length - 1];
            if (last?.m === m && last.kind === "replace" && m.deleteBeforeReplace && !preview && !halted() && this.draws.chance(0.5)) {
                steps.pop();
                this.log.push(`  (${m.name} is replaced as it registers, before the later Checks)`);
                await deleteFirst(last);
            }
        }
        for (const step of steps) {
            if (halted()) break;
            const urn = urnOf(step.m.name);
            if (step.kind === "create") {
                if (unsent(step.m.name, "Create")) continue;
                this.took1("create");
                if ((await op(step.m, "create", undefined, "register")) === "ok") record(() => this.checkpoint.resources.set(urn, step.m));
            } else if (step.kind === "update") {
                if (unsent(step.m.name, "Update")) continue;
                this.took1("update");
                if ((await op(step.m, "update", step.old, "register")) === "ok") record(() => this.checkpoint.resources.set(urn, step.m));
            } else if (step.m.deleteBeforeReplace) {
                if (!(await deleteFirst(step))) break;
            } else {
                this.took1("replace, creating first");
                this.send("Check", step.m.name, "register", preview);
                proc(step.m.provider).j.declare(urn, claimOf(step.m));
                if (unsent(step.m.name, "Create")) continue;
                if ((await op(step.m, "create", undefined, "register")) !== "ok") continue;
                record(() => {
                    this.checkpoint.resources.set(urn, step.m);
                    this.checkpoint.condemned.push(step.old!);
                });
                if (halted() || preview) continue;
                // The replaced resource goes at the end of the run, with the deletes (Pulumi's create-first order).
                replaced.push(step.old!);
            }
        }
        if (preview) return;
        // What the program no longer declares is deleted after every Check (a full run), targeted ones only otherwise.
        const declared = new Set(this.program.map((m) => urnOf(m.name)));
        const doomed = this.order([...this.checkpoint.resources.values()].filter((m) => !declared.has(urnOf(m.name)) && targeted(m)));
        // And so do the replaced resources an earlier run left condemned.
        for (const old of this.guided([...replaced, ...this.checkpoint.condemned.filter((m) => !replaced.includes(m) && targeted(m))])) {
            if (halted()) break;
            if (unsent(old.name, "Delete")) continue;
            if (!replaced.includes(old)) this.took1("a condemned resource deleted by a later run");
            if ((await op(old, "delete", old, "delete")) === "ok") record(() => (this.checkpoint.condemned = this.checkpoint.condemned.filter((m) => m !== old)));
        }
        for (const m of doomed) {
            if (halted()) break;
            if (unsent(m.name, "Delete")) continue;
            this.took1("delete what the program dropped");
            if ((await op(m, "delete", m, "delete")) === "ok") record(() => this.checkpoint.resources.delete(urnOf(m.name)));
        }
    }

    /**
     * A `pulumi preview` in another terminal while this command's write to `at` for `urn` is applied and its
     * operation not yet answered (or, `at` empty, once the command's operations are over): its plugins start, read the folder and send
     * their Checks and Diffs while the writer is alive (the preview takes no lock on the stack; it reads the state as
     * it begins, which may be before this command began).
     */
    private async previewBeside(urn: string, at: Placed[], outcome: CommandOutcome): Promise<void> {
        this.besideAt = undefined;
        // The preview reads the state as saved: every save before it is done.
        this.unsaved = undefined;
        const keys = at.map((p) => `${urn}|${placedKey(p)}`);
        for (const key of keys) this.underway.add(key);
        const cmd: Command = { kind: "preview" };
        this.log.push(`  $ ${argvOf(cmd).join(" ")}   [beside, ${at.length ? `while ${nameOf(urn)}'s write is under way` : `begun at ${nameOf(urn)}'s write, its Diffs once the command${this.besideLate === "ended" ? " has ended" : "'s operations are over"}`}]`);
        const side: CommandOutcome = { said: [], struck: false, clean: true, plugins: 0 };
        const reads = this.besideReads;
        this.besideReads = undefined;
        if (reads) this.log.push("    (it read the state as the command began)");
        try {
            // Only the preview's own calls see the older state; the command's other operations go on beside it.
            await beside.run(reads, () => this.engineRun(cmd, `cli${++this.cli}`, this.commandKnown ? argvOf(cmd) : [], true, undefined, side));
        } finally {
            for (const key of keys) this.underway.delete(key);
        }
        for (const s of side.said) this.log.push(`    ${s.untrue ? "UNTRUE " : ""}said beside: ${s.note.text.slice(0, 400)}`);
        outcome.said.push(...side.said);
    }

    /**
     * Whether a Diff's reason for an update of `urn` is untrue as it is said: that an operation stopped before Pulumi
     * recorded its write, where the operation is still under way, or where the engine's state of `urn` is already as
     * that write left it (Pulumi recorded it: there is nothing for the update to record or put back).
     */
    private untrueDiff(urn: string, why: string): string | undefined {
        const stopped = / by an operation that stopped before Pulumi recorded it; /.test(why);
        if (!stopped) return undefined;
        for (const p of this.known.values()) {
            const [grant, parent] = [describeGrant(p.grant), parentName(PARENTS[p.parent])];
            const added = why.startsWith(`${grant} was written to ${parent} `);
            if (!added && !why.startsWith(`${grant} was removed from ${parent} `)) continue;
            const at = `Diff of ${nameOf(urn)}: "${why}"`;
            if (this.underway.has(`${urn}|${placedKey(p)}`)) return `${at}: that write's operation is still under way`;
            const held = this.saved.resources.get(urn);
            const holds = held !== undefined && holdsGrant(held, p);
            if (added && holds) return `${at}: the engine's state of ${nameOf(urn)} holds that grant (Pulumi recorded it)`;
            if (!added && !holds) return `${at}: the engine's state of ${nameOf(urn)} does not hold that grant (Pulumi recorded its removal)`;
            return undefined;
        }
        return `names a grant the plugin never wrote: ${why}`;
    }

    /**
     * Whether a Delete's warning that it left `at` to `keeper` is untrue as it is said: where neither the program
     * declares that grant for it nor the engine's saved state of it holds the grant (one deleted already for its
     * replacement holds nothing), no one keeps it.
     */
    private untrueLeft(keeper: string, at: Placed): string | undefined {
        if (this.program.some((m) => urnOf(m.name) === keeper && holdsGrant(m, at))) return undefined;
        const held = this.saved.resources.get(keeper);
        if (held && !held.pendingReplacement && holdsGrant(held, at)) return undefined;
        // A replaced old of that resource, awaiting its Delete, holds it still: that Delete removes it.
        if (this.saved.condemned.some((m) => urnOf(m.name) === keeper && holdsGrant(m, at))) return undefined;
        return `a Delete says it left ${describePlaced(at)} to ${nameOf(keeper)}, which neither the program nor the engine's state holds it for`;
    }

    /**
     * A second Ctrl-C came while the save of the last step that ended may be under way: whether it is lost or not, the
     * journal cannot tell, and what it leaves of that step's grants is the lost-save known issue's (case.ts).
     */
    private saveAtRisk(before: Checkpoint): void {
        this.putAtRisk([...[...this.checkpoint.resources].filter(([urn, m]) => before.resources.get(urn) !== m).map(([, m]) => m),
            ...[...before.resources].filter(([urn, m]) => this.checkpoint.resources.get(urn) !== m).map(([, m]) => m)]);
    }

    private putAtRisk(steps: Member[]): void {
        for (const g of steps.flatMap(grantsOf)) this.lostSaveOf.set(placedKey(g), g);
    }

    /** A second Ctrl-C ended the CLI before it saved the last step that ended: the checkpoint is as before it. */
    private loseLastSave(before: Checkpoint): void {
        const lost = [...this.checkpoint.resources].filter(([urn]) => !before.resources.has(urn));
        // Whatever the step was (a Create, a Delete, a replaced resource's Delete), the journal saw it answered.
        this.lostSave = true;
        this.checkpoint = { ...before, pendingCreates: new Map([...before.pendingCreates, ...this.checkpoint.pendingCreates, ...lost]) };
        this.log.push(`  ! the CLI exited before saving the last step that ended`);
    }

    /** A deleteBeforeReplace replacement run as its resource registers: the old resource's Delete, then the Create. */
    /** Whether a note is untrue as it is said (undefined: true, or a note that says it may be). */
    private untrue(n: Note): string | undefined {
        if (n.unchecked || n.kind === "unusable" || n.kind === "other") return undefined;
        if (!n.at) return `names a grant the plugin never wrote: ${n.text}`;
        if (n.kind === "unrecorded") {
            if (!this.iam.has(n.at)) return `says ${describePlaced(n.at)} is in IAM, but it is not`;
            if (this.held(n.at, this.saved)) return `says ${describePlaced(n.at)} is in no state, but the engine's state holds it`;
        }
        if (n.kind === "removed") {
            if (this.iam.has(n.at)) return `says ${describePlaced(n.at)} was removed, but IAM holds it`;
            if (!this.held(n.at, this.saved)) return `says Pulumi's state holds ${describePlaced(n.at)}, but no resource's state does`;
        }
        return undefined;
    }
}

/** The checkpoint a preview beside a command read as it began, for that preview's calls (see Stack.checkpoint). */
const beside = new AsyncLocalStorage<Checkpoint | undefined>();

export interface CommandOutcome {
    said: Said[];
    /** The command was cut off (a kill, a crash, a Ctrl-C): what the engine recorded may not be all it did. */
    struck: boolean;
    /** Every operation was answered and recorded. */
    clean: boolean;
    /** How many plugin processes the command's runs started. */
    plugins: number;
}

/** Whether two states of a resource declare the same grants. */
function sameResource(a: Member, b: Member): boolean {
    const keys = (m: Member) => grantsOf(m).map(placedKey).sort().join();
    return keys(a) === keys(b);
}

/** Whether a model resource stands for a Member (a trace's Bindings and Policies are modelled by their first grant). */
const isMemberLike = (m: Member) => m.type === undefined || /IamMember:/.test(m.type);

function copyCheckpoint(c: Checkpoint): Checkpoint {
    return { resources: new Map(c.resources), pendingCreates: new Map(c.pendingCreates), condemned: [...c.condemned] };
}

function policyOf(grants: Placed[]): Policy {
    const byRole = new Map<string, string[]>();
    for (const { grant } of grants) byRole.set(grant.role, [...(byRole.get(grant.role) ?? []), grant.member]);
    return { version: 1, bindings: [...byRole].map(([role, members]) => ({ role, members })) };
}

function shuffle<T>(d: Draws, xs: T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
        const k = d.int(i + 1);
        [out[i], out[k]] = [out[k], out[i]];
    }
    return out;
}

