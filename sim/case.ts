// One simulated case: a stack of Members and Bindings (and Policies, on request), a program, commands a user runs
// with the faults drawn for them, the recovery the README tells, and the judge of every command (the invariants). A case is data drawn from a seed
// (`drawCase`), so it can be shrunk by dropping parts of it and replayed exactly.

import { Rules } from "../provider/journal/rules";
import { World } from "./machine";
import {
    authoritative, BINDING_ROLE, POLICY_PARENT, Command, CommandOutcome, describePlaced, Draws, GoogleFault, grantsOf, holdsGrant, Member, nameOf,
    Placed, placedKey, ProviderName, providerUrn, setsGrant, Stack, Strike, StrikeKind, urnOf,
} from "./model";

/** A user's step: change the program (or not), then run a command, which a strike may cut off. */
export interface Step {
    program: Member[];
    command: Command;
    strike?: Strike;
    /** What Google does to one of the command's writes (never the strike's). */
    google?: GoogleFault;
    /** Commands the user runs after it, before recovering (a preview, a targeted run, an import of a named orphan). */
    then: Command[];
    /** The user puts the program back as it was before this step, before recovering. */
    revert: boolean;
    /** A `pulumi preview` runs beside the command, at its `beside`-th write (applied, not yet answered). */
    beside?: number;
    /**
     * That preview, which read the state as the command began, sends its Diffs once the command's operations are over:
     * before its plugins close ("open"), or once the command has ended ("ended").
     */
    besideLate?: "open" | "ended";
    /** Minutes pass before the command: another process's write is long over (see IN_FLIGHT_SLACK_MS). */
    later?: boolean;
}

export interface Case {
    seed: number;
    commandKnown: boolean;
    foreign: Placed[];
    initial: Member[];
    steps: Step[];
    storage: { unusable?: boolean; fullAfter?: number };
    upgrade: boolean;
    /** `pulumi stack rename` after the setup: the journal's folder starts empty (what the stack holds unknown to it). */
    renamed?: boolean;
}

const ROLES = ["roles/servicemanagement.serviceConsumer", "roles/viewer"];
const USERS = ["ann", "bob", "cy", "dee"];
const grantOf = (d: Draws): Placed => ({ parent: d.int(2), grant: { role: d.pick(ROLES), member: `user:${d.pick(USERS)}@example.com` } });
const STRIKES: StrikeKind[] = ["kill-plugin", "kill-cli", "crash-machine", "ctrl-c", "ctrl-c-twice", "lost-answer", "unavailable"];

function drawProgram(d: Draws, was: Member[], names: { n: number }): Member[] {
    const out = was.filter(() => !d.chance(0.25)).map((m) => (d.chance(0.2) ? { ...m, at: grantOf(d) } : d.chance(0.15) ? { ...m, deleteBeforeReplace: !m.deleteBeforeReplace } : m));
    const adds = d.int(3);
    for (let i = 0; i < adds; i++) {
        // A twin: one grant declared twice, as a copy-paste makes it.
        const twin = out.length > 0 && d.chance(0.3) ? d.pick(out) : undefined;
        out.push({ name: `m${names.n++}`, at: twin ? twin.at : grantOf(d), provider: d.chance(0.3) ? "explicit" : "default", ...(d.chance(0.3) ? { deleteBeforeReplace: true } : {}) });
    }
    return out;
}

function drawCommand(d: Draws, program: Member[], stateNames: string[]): Command {
    const all = [...new Set([...program.map((m) => m.name), ...stateNames])];
    const target = () => (all.length ? [urnOf(d.pick(all))] : undefined);
    const skipPreview = d.chance(0.5);
    switch (d.pick(["up", "up", "up", "destroy", "refresh", "up-target", "destroy-target", "up-exclude", "up-refresh"] as const)) {
        case "up": return { kind: "up", skipPreview };
        case "up-refresh": return { kind: "up", skipPreview, refresh: true };
        case "up-target": return { kind: "up", skipPreview, targets: target() };
        case "up-exclude": return { kind: "up", skipPreview, excludes: target() };
        case "destroy": return { kind: "destroy", skipPreview };
        case "destroy-target": return { kind: "destroy", skipPreview, targets: target() };
        case "refresh": return { kind: "refresh", skipPreview };
    }
}

function drawSide(d: Draws, program: Member[]): Command {
    const names = program.map((m) => m.name);
    switch (d.pick(["preview", "preview-refresh", "refresh-preview-only", "up-target", "import-preview-only"] as const)) {
        case "preview": return { kind: "preview" };
        case "preview-refresh": return { kind: "preview", refresh: true };
        case "refresh-preview-only": return { kind: "refresh", previewOnly: true };
        case "up-target": return { kind: "up", skipPreview: d.chance(0.5), ...(names.length ? { targets: [urnOf(d.pick(names))] } : {}) };
        // The import a note gives, run with --preview-only (filled in from the notes when run).
        case "import-preview-only": return { kind: "import", previewOnly: true };
    }
}

/** The strikes that kill a process: a write of its may be in flight, or its record half written (Strike). */
const KILLS: StrikeKind[] = ["kill-plugin", "kill-cli", "crash-machine"];

/**
 * The draws added after the others, from a stream of their own, so that a seed's cases are what they were before
 * them plus these: a kill before Google applied the write, Google's faults, `--target-dependents`.
 */
function drawLater(seed: number, initial: Member[], steps: Step[]): void {
    const d = new Draws(seed ^ 0x1a7e5);
    // Streams of their own, so that the other later draws are what they were.
    const agains = new Draws(seed ^ 0xc7c2);
    const lates = new Draws(seed ^ 0xbe51);
    const aims = new Draws(seed ^ 0xd1f5);
    const deaths = new Draws(seed ^ 0xdea7);
    let before = initial;
    for (const s of steps) {
        if (s.strike && KILLS.includes(s.strike.kind)) {
            if (d.chance(0.2)) s.strike.torn = true;
            else if (d.chance(0.3)) s.strike.landsAfter = 1 + d.int(3);
        }
        if (s.strike?.kind === "ctrl-c" && agains.chance(0.4)) s.strike.again = true;
        if (s.beside !== undefined && lates.chance(0.5)) s.besideLate = lates.chance(0.5) ? "open" : "ended";
        // A plugin's kill aimed at its second write while another plugin of the run lives on, a late preview begun at
        // the run's first write: the preview's Diffs come while that plugin's answers are in the live run's hands.
        if (s.strike?.kind === "kill-plugin" && deaths.chance(0.15)) {
            s.strike.afterOwnWrite = true;
            s.beside = 1;
            s.besideLate = deaths.chance(0.5) ? "open" : "ended";
        }
        // A strike aimed at the Create of a deleteBeforeReplace replacement, after its old's Delete: a rare moment the
        // engine keeps the deleted old in its state (pending replacement) until the new one is recorded.
        const replacedFirst = s.program.some((m) => m.deleteBeforeReplace && before.some((b) => b.name === m.name && placedKey(b.at) !== placedKey(m.at)));
        if (s.strike && replacedFirst && aims.chance(0.4)) s.strike.afterDeleteFirst = true;
        if (d.chance(0.3)) {
            const kind = d.pick(["conflict", "quota", "reset"] as const);
            const fault: GoogleFault = { kind, at: 1 + d.int(3), lands: d.chance(0.6) };
            if (kind === "reset") fault.applied = d.chance(0.5);
            if (kind === "quota" && fault.lands) fault.waitMs = 1000 * (1 + d.int(20));
            if (fault.at !== s.strike?.at) s.google = fault;
        }
        // The explicit provider, where the program or the state has a Member of it: `--target` of it alone sends none.
        const explicit = [...before, ...s.program].some((m) => m.provider === "explicit");
        for (const c of [s.command, ...s.then]) {
            if (!c.targets?.length || !d.chance(0.3)) continue;
            c.targetDependents = true;
            if (explicit && d.chance(0.5)) c.targets = [providerUrn("explicit", "")];
        }
        before = s.program;
    }
}

/**
 * Bindings, drawn after the rest from a stream of their own (so a seed's Members are what they were): at most one per
 * parent in each program, each setting BINDING_ROLE to one to three users. A step may drop one, change its members
 * (an update), move it to the other parent (a replacement), or add one; a `--target` may name one.
 */
function drawBindings(seed: number, c: { initial: Member[]; steps: Step[] }): void {
    const d = new Draws(seed ^ 0xb1d5);
    if (!d.chance(0.5)) return;
    let n = 0;
    const users = (): string[] => {
        const picked = USERS.filter(() => d.chance(0.4));
        return (picked.length ? picked : [d.pick(USERS)]).map((u) => `user:${u}@example.com`);
    };
    const make = (name: string, parent: number, members: string[], provider: ProviderName, deleteBeforeReplace?: boolean): Member => ({
        name, at: { parent, grant: { role: BINDING_ROLE, member: members[0] } }, members, provider, ...(deleteBeforeReplace ? { deleteBeforeReplace } : {}),
    });
    const fresh = (parent: number) => make(`bind${n++}`, parent, users(), d.chance(0.3) ? "explicit" : "default", d.chance(0.3));
    const toggle = (b: Member): Member => {
        const u = `user:${d.pick(USERS)}@example.com`;
        const has = b.members!.includes(u);
        if (has && b.members!.length === 1) return b;
        return make(b.name, b.at.parent, has ? b.members!.filter((x) => x !== u) : [...b.members!, u].sort(), b.provider, b.deleteBeforeReplace);
    };
    const evolve = (was: Member[]): Member[] => {
        const out = was.filter(() => !d.chance(0.2)).map((b) => (d.chance(0.4) ? toggle(b) : b));
        for (const [i, b] of out.entries()) {
            const other = 1 - b.at.parent;
            if (d.chance(0.15) && !out.some((x) => x.at.parent === other)) out[i] = make(b.name, other, b.members!, b.provider, b.deleteBeforeReplace);
        }
        for (const parent of [0, 1]) if (!out.some((b) => b.at.parent === parent) && d.chance(0.3)) out.push(fresh(parent));
        return out;
    };
    addAlong(d, c, [0, 1].filter(() => d.chance(0.6)).map(fresh), evolve, 0.3);
}

/**
 * Adds resources drawn apart to a case's programs: `first` to the setup's, then each step's as `evolve` makes it
 * from the one before (a step that left the program as it was leaves them too); a `--target` names one of them at
 * chance `target`.
 */
function addAlong(d: Draws, c: { initial: Member[]; steps: Step[] }, first: Member[], evolve: (was: Member[]) => Member[], target: number): void {
    let was = c.initial;
    let added = first;
    c.initial = [...c.initial, ...first];
    const names = new Set(first.map((m) => m.name));
    for (const s of c.steps) {
        if (s.program !== was) added = evolve(added);
        was = s.program;
        s.program = [...s.program, ...added];
        for (const m of added) names.add(m.name);
        for (const cmd of [s.command, ...s.then]) if (cmd.targets?.length && names.size && d.chance(target)) cmd.targets = [urnOf(d.pick([...names]))];
    }
}

/**
 * A Member of a Binding's role and of one of its members (two resources of one grant: a program the provider warns
 * of), drawn after the rest from a stream of its own: in a fifth of the cases that have a Binding, on one Binding's
 * parent, in each program where a Binding there lists that member (so the two never fight); a `--target` may name it,
 * and the user may destroy it alone after a step. A step whose Binding gains the member may have a preview beside it
 * (one that read the Binding without it).
 */
function drawShared(seed: number, c: { initial: Member[]; steps: Step[] }): void {
    const d = new Draws(seed ^ 0x5a4ed);
    if (!d.chance(0.2)) return;
    const isBinding = (m: Member) => m.members !== undefined && m.at.grant.role === BINDING_ROLE;
    const bindings = [...c.initial, ...c.steps.flatMap((s) => s.program)].filter(isBinding);
    if (bindings.length === 0) return;
    // Mostly a member an update adds to a Binding: its preview's olds then lack it.
    const added: { parent: number; member: string }[] = [];
    let before = c.initial;
    for (const s of c.steps) {
        for (const b of s.program.filter(isBinding)) {
            const old = before.find((x) => x.name === b.name && x.at.parent === b.at.parent);
            for (const member of old ? b.members!.filter((u) => !old.members!.includes(u)) : []) added.push({ parent: b.at.parent, member });
        }
        before = s.program;
    }
    const b = d.pick(bindings);
    const { parent, member } = added.length && d.chance(0.7) ? d.pick(added) : { parent: b.at.parent, member: d.pick(b.members!) };
    const share: Member = { name: "share", at: { parent, grant: { role: BINDING_ROLE, member } }, provider: d.chance(0.5) ? "explicit" : "default" };
    // A step that left the program as it was leaves it so (one array).
    const made = new Map<Member[], Member[]>();
    const withIt = (program: Member[]): Member[] => {
        const listed = program.some((x) => isBinding(x) && x.at.parent === share.at.parent && x.members!.includes(share.at.grant.member));
        if (!listed) return program;
        let out = made.get(program);
        if (!out) made.set(program, (out = [...program, share]));
        return out;
    };
    c.initial = withIt(c.initial);
    let was = c.initial;
    for (const s of c.steps) {
        s.program = withIt(s.program);
        for (const cmd of [s.command, ...s.then]) if (cmd.targets?.length && d.chance(0.3)) cmd.targets = [urnOf(share.name)];
        // A step whose Binding's update adds the member: a preview beside it may read the Binding without it.
        const gains = s.program.includes(share) && !was.includes(share) && was.some((x) => isBinding(x) && x.at.parent === share.at.parent &&
            s.program.some((y) => y.name === x.name && y.at.parent === x.at.parent));
        if (gains && s.beside === undefined && d.chance(0.4)) Object.assign(s, { beside: 1, besideLate: d.pick(["open", "ended"] as const) });
        // The user, warned of two resources of one grant, destroys the Member alone.
        if (d.chance(gains ? 0.5 : 0.2)) s.then.push({ kind: "destroy", skipPreview: d.chance(0.5), targets: [urnOf(share.name)] });
        was = s.program;
    }
}

/**
 * Policies, drawn after the rest from a stream of their own: in about 30% of the cases, at most one in each
 * program, owning a parent no other resource touches, with one to three grants. A step may drop it, add or remove a
 * grant (an update), or put another Policy in its place (whose Create then sets the policy before the old one's
 * Delete, which leaves the policy to it); a `--target` may name one.
 */
function drawPolicies(seed: number, c: { initial: Member[]; steps: Step[] }): void {
    const d = new Draws(seed ^ 0x9011c);
    if (!d.chance(0.35)) return;
    let n = 0;
    const grant = () => ({ role: d.pick(ROLES), member: `user:${d.pick(USERS)}@example.com` });
    const make = (name: string, owns: { role: string; member: string }[], provider: ProviderName): Member => {
        const unique = [...new Map(owns.map((g) => [`${g.role} ${g.member}`, g])).values()];
        return { name, at: { parent: POLICY_PARENT, grant: unique[0] }, owns: unique, provider };
    };
    const fresh = () => make(`pol${n++}`, Array.from({ length: 1 + d.int(3) }, grant), d.chance(0.3) ? "explicit" : "default");
    const toggle = (p: Member): Member => {
        const g = grant();
        const has = p.owns!.some((x) => x.role === g.role && x.member === g.member);
        if (has && p.owns!.length === 1) return p;
        return make(p.name, has ? p.owns!.filter((x) => x.role !== g.role || x.member !== g.member) : [...p.owns!, g], p.provider);
    };
    const evolve = (was: Member[]): Member[] => {
        const out = was.filter(() => !d.chance(0.2)).map((p) => (d.chance(0.5) ? toggle(p) : p));
        if (out.length === 0 && d.chance(0.4)) out.push(fresh());
        return out;
    };
    addAlong(d, c, d.chance(0.7) ? [fresh()] : [], evolve, 0.2);
}

/** The case of `seed`; `later` false: as drawn before the later draws (a case found then, replayed as it was). */
export function drawCase(seed: number, later = true): Case {
    const d = new Draws(seed);
    const names = { n: 0 };
    const initial = drawProgram(d, [], names).concat(drawProgram(d, [], names));
    const steps: Step[] = [];
    let program = initial;
    const n = 1 + d.int(3);
    for (let i = 0; i < n; i++) {
        const next = d.chance(0.7) ? drawProgram(d, program, names) : program;
        const command = drawCommand(d, next, program.map((m) => m.name));
        const strike = d.chance(0.8) ? { kind: d.pick(STRIKES), at: 1 + d.int(3) } : undefined;
        const then = Array.from({ length: d.int(3) }, () => drawSide(d, next));
        const revert = d.chance(0.4);
        const beside = d.chance(0.15) ? 1 + d.int(3) : undefined;
        const later = d.chance(0.5);
        steps.push({ program: next, command, ...(strike ? { strike } : {}), then, revert, ...(beside ? { beside } : {}), ...(later ? { later } : {}) });
        program = next;
    }
    const foreign = Array.from({ length: d.int(3) }, () => grantOf(d));
    if (later) drawLater(seed, initial, steps);
    const drawn = { initial, steps };
    if (later) drawBindings(seed, drawn);
    if (later) drawPolicies(seed, drawn);
    if (later) drawShared(seed, drawn);
    return {
        seed, commandKnown: d.chance(0.5), foreign, initial: drawn.initial, steps,
        storage: d.chance(0.03) ? { unusable: true } : d.chance(0.03) ? { fullAfter: 5 + d.int(40) } : {},
        upgrade: d.chance(0.2),
        ...(d.chance(0.1) ? { renamed: true } : {}),
    };
}

/**
 * Known issues, named (as Pulumi's lifecycle fuzzing names its exclusions): a case that draws one is run and its
 * violations counted apart, so the simulator keeps showing them until they are fixed.
 */
export function knownIssue(c: Case): string | undefined {
    const strikes = c.steps.flatMap((s) => (s.strike ? [s.strike.kind] : []));
    // A run cut off where the command line is unknown: which later run may speak for the engine is not known. The
    // machine's crash cuts the CLI off as kill -9 does (seed 16474, case 5571, was one before it was counted so).
    if (!c.commandKnown && strikes.some((k) => k === "kill-cli" || k === "ctrl-c-twice" || k === "crash-machine")) return "cut-off-with-command-line-unknown";
    // `pulumi import --preview-only` where the command line is unknown is taken for an import: what its Read found is
    // kept as what the stack holds, and a later Delete may leave a grant to the resource it never made (its warning names it).
    if (!c.commandKnown && c.steps.some((s) => s.then.some((t) => t.kind === "import" && t.previewOnly))) return "preview-import-with-command-line-unknown";
    // A new folder (`pulumi stack rename`; so is another machine's) knows nothing of what the stack holds: a Delete of
    // one of two resources of one grant removes it while the other, not Checked in its run (--target, --exclude, a
    // destroy cut off before it), stays in the stack holding it.
    const all = c.steps.flatMap((s) => [s.command, ...s.then]);
    const members = [...c.initial, ...c.steps.flatMap((s) => s.program)];
    // Two resources that set one grant: twins, a Binding and its successor on one role, a Policy and its successor.
    const twins = members.some((a) => members.some((b) => a.name !== b.name && grantsOf(b).some((g) => setsGrant(a, g))));
    if (c.renamed && (twins || all.some((k) => k.targets?.length || k.excludes?.length))) return "new-folder-knows-no-holder";
    return undefined;
}

export interface Verdict {
    violations: string[];
    transcript: string[];
    /** A known issue the run itself showed (see knownIssue). */
    known?: string;
}

/**
 * Turns of the event loop a case may take before it counts as stuck: a case ends in a few hundred, and one whose
 * promise never settles (something the journal awaits that nothing will resolve) would otherwise end the process
 * silently, its loop empty.
 */
const STUCK_AFTER_TURNS = 200_000;

/** Runs a case with `rules` and judges every command; a case that never finishes is a violation. */
export async function runCase(c: Case, rules: Rules): Promise<Verdict> {
    let outcome: { verdict: Verdict } | { failure: unknown } | undefined;
    runCaseBody(c, rules).then((verdict) => (outcome = { verdict }), (failure: unknown) => (outcome = { failure }));
    for (let turn = 0; outcome === undefined; turn++) {
        if (turn === STUCK_AFTER_TURNS) return { violations: [`the case never finished: a promise it awaits never settles (${STUCK_AFTER_TURNS} turns)`], transcript: [] };
        await new Promise((resolve) => setImmediate(resolve));
    }
    if ("failure" in outcome) throw outcome.failure;
    return outcome.verdict;
}

async function runCaseBody(c: Case, rules: Rules): Promise<Verdict> {
    const world = new World(c.storage);
    const stack = new Stack(rules, new Draws(c.seed ^ 0x5eed), world);
    stack.commandKnown = c.commandKnown;
    const violations: string[] = [];
    let unprotected = c.storage.unusable === true;
    /** How many violations came before the command in which the journal said it cannot keep its files. */
    let beforeUnprotected = 0;
    /** What IAM held as the command in which a second Ctrl-C lost a save ended (see the lost-save issue below). */
    let inIamAfterLoss: Set<string> | undefined;
    /** What IAM held as that command or any later one ended. */
    const inIamSinceLoss = new Set<string>();
    // What no program of the case ever declares: a Member declared later takes a grant over, as Pulumi's does.
    const declaredEver = new Set([...c.initial, ...c.steps.flatMap((s) => s.program)].flatMap(grantsOf).map(placedKey));
    const foreign = c.foreign.filter((f) => !declaredEver.has(placedKey(f)));
    for (const f of foreign) {
        stack.iam.set(f, true);
        stack.foreign.push(f);
    }
    /** Grants a Delete left for another resource, as its warning said (until a state holds them again). */
    const leftSoFar = new Set<string>();
    const isForeign = (p: Placed) => foreign.some((f) => placedKey(f) === placedKey(p));

    /** Runs a command and judges it; returns its outcome. */
    const run = async (label: string, cmd: Command, strike?: Strike, fault?: GoogleFault): Promise<CommandOutcome> => {
        const inIamBefore = new Set(stack.iam.all().map(placedKey));
        const out = await stack.command(cmd, strike, fault);
        if (stack.lostSave && inIamAfterLoss === undefined) inIamAfterLoss = new Set(stack.iam.all().map(placedKey));
        if (stack.lostSave) for (const p of stack.iam.all()) inIamSinceLoss.add(placedKey(p));
        // A write of an earlier command that landed in this one is that command's: judged by the commands after.
        const late = (p: Placed) => stack.iam.landedLate.has(placedKey(p));
        for (const s of out.said) if (s.note.kind === "left" && s.note.at) leftSoFar.add(placedKey(s.note.at));
        if (!unprotected && out.said.some((s) => s.note.kind === "unusable")) {
            unprotected = true;
            beforeUnprotected = violations.length;
        }
        const fail = (what: string) => violations.push(`${label}: ${cmd.kind}${cmd.targets ? " --target" : ""}: ${what}`);
        for (const s of out.said) if (s.untrue) fail(`a note untrue when said: ${s.untrue}`);
        for (const f of foreign) if (!stack.iam.has(f)) fail(`a grant no resource declares was removed: ${describePlaced(f)}`);
        if (out.clean && !unprotected) {
            const named = (p: Placed, kind: string) => out.said.some((s) => s.note.kind === kind && s.note.at && placedKey(s.note.at) === placedKey(p));
            // A grant the stack holds that was in IAM as the command began is removed only by the program's word (a
            // replaced resource awaiting its Delete holds nothing the program keeps).
            // A Binding the program declares sets its role to exactly its members, a Policy its parent's policy to
            // exactly its grants: removing the others is the program's word.
            const boundWithout = (p: Placed) => stack.program.some((b) => authoritative(b) && setsGrant(b, p) && !holdsGrant(b, p));
            for (const m of stack.checkpoint.resources.values()) {
                if (m.pendingReplacement) continue;
                for (const g of grantsOf(m)) {
                    if (inIamBefore.has(placedKey(g)) && !stack.iam.has(g) && !named(g, "removed") && !late(g) && !boundWithout(g)) {
                        fail(`${m.name}'s grant ${describePlaced(g)} was removed, though the stack still holds it, and nothing said so`);
                    }
                }
            }
            const full = !cmd.targets && !cmd.excludes && cmd.kind !== "import" && cmd.kind !== "preview" && !cmd.previewOnly;
            if (full && out.plugins > 0) {
                for (const p of stack.iam.all()) {
                    if (isForeign(p) || stack.held(p) || late(p)) continue;
                    if (!named(p, "unrecorded") && !leftSoFar.has(placedKey(p))) fail(`${describePlaced(p)} is in IAM and in no state, and was not named`);
                }
            }
            if (cmd.kind === "up" && full) {
                for (const m of stack.program) for (const g of grantsOf(m)) if (!stack.iam.has(g)) fail(`${m.name}'s declared grant ${describePlaced(g)} is not in IAM after a clean up`);
            }
        }
        return out;
    };

    stack.program = c.initial;
    await run("setup", { kind: "up", skipPreview: true });
    if (c.upgrade) stack.version = "8.39.0";
    if (c.renamed) {
        stack.log.push("$ pulumi stack rename   [the journal's folder is a new one]");
        stack.world.rename();
    }
    let lastNotes: CommandOutcome["said"] = [];
    for (const [i, step] of c.steps.entries()) {
        const before = stack.program;
        stack.program = step.program;
        if (step.later) {
            stack.pass(10 * 60_000);
            stack.log.push("  (ten minutes later)");
        }
        stack.besideAt = step.beside;
        stack.besideLate = step.besideLate;
        const out = await run(`step ${i + 1}`, step.command, step.strike, step.google);
        stack.besideAt = undefined;
        lastNotes = out.said;
        const told = [...out.said];
        if (step.revert) stack.program = before;
        for (const side of step.then) {
            let cmd = side;
            if (side.kind === "import") {
                const orphan = lastNotes.find((s) => s.note.importId && s.note.at);
                if (!orphan?.note.at) continue;
                cmd = { ...side, importName: orphan.note.importName, importId: orphan.note.importId, importAt: orphan.note.at };
            }
            const o = await run(`step ${i + 1}, then`, cmd);
            if (o.said.length) lastNotes = o.said;
            told.push(...o.said);
        }
        stack.settleInFlight();
        await recover(stack, run, i + 1, told);
    }
    // Converged: IAM holds what the program declares and what no resource declares, the state what the program declares.
    const want = new Set([...stack.program.flatMap(grantsOf).map(placedKey), ...foreign.map(placedKey)]);
    const have = new Set(stack.iam.all().map(placedKey));
    let known: string | undefined;
    if (!unprotected) {
        const last = await run("final", { kind: "up", skipPreview: true });
        // A stack with no resource of this package starts no plugin: nothing can name what a crash left.
        if (last.plugins === 0 && [...have].some((k) => !want.has(k))) known = "empty-stack-starts-no-plugin";
        for (const k of have) if (!want.has(k)) violations.push(`after recovery: ${k} is in IAM, and neither the program nor anyone else declares it`);
        for (const k of want) if (!have.has(k)) violations.push(`after recovery: ${k} is declared but not in IAM`);
        const names = [...stack.checkpoint.resources.keys()].map(nameOf).sort();
        const wanted = stack.program.map((m) => m.name).sort();
        if (names.join() !== wanted.join()) violations.push(`after recovery: the state holds ${names.join(",") || "nothing"}, the program declares ${wanted.join(",") || "nothing"}`);
        for (const s of last.said) violations.push(`a note outlived the command it gives: ${s.note.text}`);
    }
    // Ctrl-C twice ended the CLI while the save of the step answered just before may have been under way: the journal
    // took the answer for what the stack holds. A Create's (it stays pending, and is cleared) leaves an orphan no later
    // run names: a grant in IAM and in no state, the warning of a later Delete of a twin that it left the grant to the
    // resource never made, or, the grant removed since, a note that Pulumi's state holds it (seed 23, case 8643).
    const orphaned = (v: string) => /is in IAM, and neither the program nor anyone else declares it|is in IAM and in no state, and was not named|a Delete says it left .* which neither the program nor the engine's state holds it for|says Pulumi's state holds .*, but no resource's state does/.test(v);
    // The save of a Delete lost: the journal took the drop for recorded, and a later Delete of a twin removed the grant
    // the state still holds (seed 495945, case 2021). To tell the user's second Ctrl-C from the engine's closing
    // Cancel, the plugin would need the engine's presence at its end, which the model does not yet draw.
    const removed = (v: string) => /was removed, though the stack still holds it|declared grant .* is not in IAM after a clean up|is declared but not in IAM/.test(v);
    // And only of the grants whose save was at risk: any other orphan is the journal's.
    const mentions = (v: string, g: Placed) => v.includes(placedKey(g)) || v.includes(describePlaced(g));
    const ofLostSave = (v: string) => [...stack.lostSaveOf.values()].some((g) => mentions(v, g));
    // A removal only of a grant still in IAM as the command whose save was lost ended: one that command's own Delete
    // removed is the next run's to put back (seed 1, case 2104, with ctrl-c-twice off). Or a Delete's removal of a
    // grant another resource's lost save holds, put back since (by an update of the twin that Delete was of: seed 1,
    // case 1554).
    const removedLater = (v: string) => removed(v) && [...stack.lostSaveOf.values()].some((g) => mentions(v, g) &&
        (inIamAfterLoss?.has(placedKey(g)) === true || (/was removed, though the stack still holds it/.test(v) && inIamSinceLoss.has(placedKey(g)))));
    if (stack.lostSaveOf.size > 0 && violations.length && violations.every((v) => (orphaned(v) && ofLostSave(v)) || removedLater(v)) && !known) known = "ctrl-c-twice-loses-an-answered-save";
    // A plugin killed after the journal kept an answer and before the engine heard it (the answer's line is kept first,
    // so that a machine's crash after the engine saved it loses nothing): the journal takes it for answered, the engine
    // for failed. A Delete's drop so taken lets a later Delete of a twin remove the grant the state still holds (seed
    // 11, case 3623). Only violations of such a grant.
    const ofUnheard = (v: string) => [...stack.unheard.values()].some((g) => mentions(v, g));
    if (stack.unheard.size > 0 && violations.length && violations.every((v) => (orphaned(v) || removed(v)) && ofUnheard(v)) && !known) known = "killed-before-the-engine-heard-an-answer";
    // Once the journal said it cannot keep its files, what it knows is partial: a later note may be stale.
    // Only what comes from the command in which it said so on: an earlier violation is no stale note.
    if (unprotected && violations.length && beforeUnprotected === 0 && !known) known = "storage-refused-notes-may-be-stale";
    return { violations: violations.filter((v, i, all) => all.indexOf(v) === i), transcript: stack.log, ...(known ? { known } : {}) };
}

/** The README's recovery: clear pending creates, `pulumi up`, then each orphan's import and `pulumi up` again. */
async function recover(stack: Stack, run: (label: string, c: Command) => Promise<CommandOutcome>, step: number, told: CommandOutcome["said"]): Promise<void> {
    const label = `recovery ${step}`;
    // "the plugin cannot keep its crash journal in …": the user fixes the folder, as the README says.
    if (told.some((s) => s.note.kind === "unusable")) stack.world.faults = {};
    if (stack.checkpoint.pendingCreates.size) told.push(...(await run(label, { kind: "refresh", skipPreview: true, clearPendingCreates: true })).said);
    for (let round = 0; round < 3; round++) {
        const up = await run(label, { kind: "up", skipPreview: round > 0 });
        // What the user was told since the struck command, as they read it: the notes of every command.
        const out = { said: round === 0 ? [...told, ...up.said] : up.said };
        const declared = new Set(stack.program.flatMap(grantsOf).map(placedKey));
        const imports = out.said.filter((s) => s.note.kind === "unrecorded" && s.note.importId && s.note.at && !declared.has(placedKey(s.note.at)) && !stack.held(s.note.at));
        if (imports.length === 0 && !out.said.some((s) => s.note.kind === "removed")) return;
        const seen = new Set<string>();
        for (const s of imports) {
            const at = s.note.at!;
            if (seen.has(placedKey(at))) continue;
            seen.add(placedKey(at));
            const provider: ProviderName = "default";
            await run(label, { kind: "import", importName: s.note.importName, importId: s.note.importId, importAt: at, importProvider: provider });
        }
    }
}

