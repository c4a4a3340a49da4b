// The engine model held to the real engine: each recorded trace (trace.ts) is replayed through the model (model.ts),
// the model's open choices settled by what the trace shows (the order the engine started steps in, the answers it
// got, whether it stopped), and the calls the model sends compared with the calls the engine sent:
//   - for each command, the same engine runs (a preview first, or not), each with calls;
//   - in each run, each resource's calls in the same order (Check, Diff, Create, Update, Delete, Read; preview or not);
//   - each call of a later phase (a refresh's reads, an import's, the program's steps, the deletes at the end) started
//     once every call of an earlier phase had ended;
//   - after a command nothing cut off, the checkpoint the model recorded is the engine's.
// The first call the model cannot place is the divergence: a model bug until shown otherwise.

import { Rules } from "../provider/journal/rules";
import { World } from "./machine";
import { parentName } from "../provider/iam/names";
import { Answer, Checkpoint, Command, CommandOutcome, Draws, Guide, Member, MODEL_ENDPOINT, PARENTS, Placed, Phase, providerUrn, SentCall, Stack, Transition, urnOf } from "./model";
import { campaignParents, reportNotesIn } from "./trace";
import type { ParentKind, Trace, TraceCall, TraceCommand, TraceResource, TraceState } from "./trace";

/** The calls about a resource: what the engine model decides. The rest (Handshake, Configure, Cancel …) it does not. */
const RESOURCE_CALLS = new Set(["Check", "Diff", "Create", "Update", "Delete", "Read"]);
const PHASES: Phase[] = ["refresh", "import", "register", "delete"];
const PARENT_INDEX: Record<ParentKind, number> = { service: 0, consumer: 1, policyConsumer: 2 };

const parentKindOf = (name: string): ParentKind => (!name.includes("/consumers/") ? "service" : /\/consumers\/pol-/.test(name) ? "policyConsumer" : "consumer");

const grantOf = (g: string) => {
    const [role, ...member] = g.split(" ");
    return { role, member: member.join(" ") };
};

/** A trace's resource as the model's: a Member, a Binding (its role's members) or a Policy (every grant it owns). */
function memberOf(r: TraceResource): Member {
    const grants = r.grants.map(grantOf);
    const binding = /IamBinding:/.test(r.type);
    const policy = /IamPolicy:/.test(r.type);
    return {
        name: r.name,
        at: { parent: PARENT_INDEX[r.parent], grant: grants[0] ?? { role: "roles/none", member: "user:none@example.com" } },
        provider: r.provider.startsWith("default") ? "default" : "explicit",
        ...(binding && grants.length ? { members: grants.map((g) => g.member) } : {}),
        ...(policy ? { owns: grants } : {}),
        ...(r.deleteBeforeReplace ? { deleteBeforeReplace: true } : {}),
        ...(r.pendingReplacement ? { pendingReplacement: true } : {}),
        ...(/IamMember:/.test(r.type) ? {} : { type: r.type }),
    };
}

/**
 * A recorded journal's text as the model names things (model.ts): the campaign's project, stack, parents and
 * emulator become the model's, each resource's URN the one the model gives its name, each provider the model's.
 */
function translated(text: string, label: string, version: string): string {
    const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const theirs = campaignParents(label);
    const mine = (kind: ParentKind) => PARENTS[PARENT_INDEX[kind]];
    const consumerOf = (kind: ParentKind) => { const p = mine(kind); return p.kind === "consumer" ? p.consumerProject : ""; };
    return text
        .replace(new RegExp(`urn:pulumi:[^:"]+::${esc(label)}::([^"|]+?)::([^"|:]+)`, "g"), (_, type: string, name: string) =>
            type === "pulumi:providers:cloud" ? providerUrn(name.startsWith("default") ? "default" : "explicit", version) : urnOf(name))
        .replace(/http:\/\/127\.0\.0\.1:\d+[^"|\s]*/g, MODEL_ENDPOINT)
        .split(theirs.service).join(mine("service").serviceName)
        .split(theirs.consumer).join(consumerOf("consumer"))
        .split(theirs.policyConsumer).join(consumerOf("policyConsumer"));
}

/** The model's parent names, by the kind a trace gives them. */
const KIND_OF_MODEL_PARENT = new Map(Object.entries(PARENT_INDEX).map(([kind, i]) => [parentName(PARENTS[i]), kind]));

/**
 * The journal's notes in what the model's run said, as the campaign records the CLI's (`+|- parent-kind role member`):
 * the lines of its report of what earlier runs left (a Diff's reasons, said on the resource, the campaign does not
 * parse).
 */
function notesOf(said: CommandOutcome["said"]): string[] {
    const out = new Set<string>();
    for (const { note } of said) {
        if (note.kind !== "unrecorded" && note.kind !== "removed") continue;
        // The model's note is the report's line without its bullet.
        for (const n of reportNotesIn(`- ${note.text}`)) out.add(`${n.sign} ${KIND_OF_MODEL_PARENT.get(n.parent) ?? n.parent} ${n.grant}`);
    }
    return [...out].sort();
}

function checkpointOf(s: TraceState): Checkpoint {
    return {
        resources: new Map(s.resources.map((r) => [urnOf(r.name), memberOf(r)])),
        pendingCreates: new Map(s.pendingCreates.map((r) => [urnOf(r.name), memberOf(r)])),
        condemned: s.condemned.map(memberOf),
    };
}

/** The command the model runs for the recorded arguments. */
export function commandOf(args: string[]): Command {
    const kind = args[0] as Command["kind"];
    const values = (flag: string) => args.flatMap((a, i) => (a === flag && i + 1 < args.length ? [urnOf(args[i + 1].slice(args[i + 1].lastIndexOf("::") + 2))] : []));
    const c: Command = { kind };
    if (args.includes("--skip-preview")) c.skipPreview = true;
    if (args.includes("--refresh")) c.refresh = true;
    if (args.includes("--preview-only")) c.previewOnly = true;
    if (args.includes("--clear-pending-creates")) c.clearPendingCreates = true;
    if (values("--target").length) c.targets = values("--target");
    if (values("--exclude").length) c.excludes = values("--exclude");
    if (kind === "import") {
        const [, name, id] = args.slice(1).filter((a) => !a.startsWith("--"));
        const [parent, role, ...member] = id.split(" ");
        const at: Placed = { parent: PARENT_INDEX[parentKindOf(parent)], grant: { role, member: member.join(" ") } };
        Object.assign(c, { importName: name, importId: id, importAt: at, importProvider: "default" });
    }
    return c;
}

/** A command's calls, split into the engine's runs: a run ends with its Cancels, the next begins with a Handshake. */
export function runsOf(calls: TraceCall[]): TraceCall[][] {
    const runs: TraceCall[][] = [];
    let current: TraceCall[] = [];
    let closing = false;
    for (const c of calls) {
        if (c.method === "Handshake" && closing) {
            runs.push(current);
            current = [];
            closing = false;
        }
        if (c.method === "Cancel") closing = true;
        current.push(c);
    }
    if (current.length) runs.push(current);
    return runs;
}

/** The trace's answers, run by run, as the model asks for them. */
class TraceGuide implements Guide {
    private run = -1;
    private calls: TraceCall[] = [];
    private used = new Set<TraceCall>();
    constructor(private readonly runs: TraceCall[][], private readonly struck: boolean) {}

    beginRun(): void {
        this.run++;
        this.calls = (this.runs[this.run] ?? []).filter((c) => RESOURCE_CALLS.has(c.method));
        this.used = new Set();
    }
    order<T>(xs: T[], nameOf: (x: T) => string): T[] {
        const first = (x: T) => {
            const i = this.calls.findIndex((c) => c.name === nameOf(x));
            return i < 0 ? Number.MAX_SAFE_INTEGER : i;
        };
        return [...xs].sort((a, b) => first(a) - first(b));
    }
    parallel(): boolean {
        const deletes = this.calls.filter((c) => c.method === "Delete");
        return deletes.some((a) => deletes.some((b) => a !== b && a.start < b.start && (a.end === undefined || a.end > b.start)));
    }
    private next(name: string, method: string, id?: string): TraceCall | undefined {
        const open = this.calls.filter((c) => c.name === name && c.method === method && !this.used.has(c));
        // A URN's live resource and its replaced old are read at once: the ID tells which Read was whose.
        const tail = id === undefined ? undefined : id.includes(" ") ? id.slice(id.indexOf(" ") + 1) : "";
        return (tail !== undefined ? open.find((c) => c.id === tail) : undefined) ?? open[0];
    }
    diff(name: string) {
        return this.next(name, "Diff")?.diff;
    }
    answer(name: string, method: string, id?: string): Answer | undefined {
        const c = this.next(name, method, id);
        if (!c) return undefined;
        return c.end === undefined ? "cut" : c.error !== undefined ? "failed" : c.gone ? "gone" : "ok";
    }
    sent(name: string, method: string, id?: string): void {
        const c = this.next(name, method, id);
        if (c) this.used.add(c);
    }
    stopped(): boolean {
        const struckRun = this.struck && this.run >= this.runs.length - 1;
        return struckRun || this.calls.some((c) => c.end === undefined || c.error !== undefined);
    }
}

export interface Conformance {
    label: string;
    commands: number;
    /** The first call (or checkpoint) the model could not place, if any. */
    divergence?: string;
    took: Map<Transition, number>;
    /** Commands whose notes were compared: the core fed what the plugin read (its journal, IAM, the engine's calls). */
    notesCompared: number;
    /** The first command whose notes the core said otherwise than the real plugin, if any. */
    notesDiffer?: string;
}

const describeCall = (c: { method: string; name: string; preview?: boolean }) => `${c.method}${c.preview ? " (preview)" : ""} ${c.name}`;

/** Where the model's calls of one run part from the engine's, or undefined. */
function compareRun(engine: TraceCall[], model: SentCall[]): string | undefined {
    const byName = new Map<string, SentCall[]>();
    for (const m of model) byName.set(m.name, [...(byName.get(m.name) ?? []), m]);
    const phaseOf = new Map<TraceCall, Phase>();
    for (const c of engine) {
        const mine = byName.get(c.name) ?? [];
        // A refresh reads a URN's live resource and its condemned old at once: their calls may interleave.
        const k = mine.length && mine[0].phase === "refresh" ? Math.max(0, mine.findIndex((m) => m.phase === "refresh" && m.method === c.method)) : 0;
        const expected = mine.splice(k, 1)[0];
        if (!expected) return `the engine sent ${describeCall(c)}; the model sends nothing more for ${c.name}`;
        if (expected.method !== c.method || expected.preview !== Boolean(c.preview)) {
            return `the engine sent ${describeCall(c)}; the model sends ${describeCall(expected)} there`;
        }
        phaseOf.set(c, expected.phase);
    }
    for (const [name, left] of byName) if (left.length) return `the model sends ${describeCall(left[0])}; the engine sent no such call for ${name}`;
    for (const b of engine) {
        const early = engine.find((a) => PHASES.indexOf(phaseOf.get(a)!) < PHASES.indexOf(phaseOf.get(b)!) && (a.end === undefined || a.end > b.start));
        if (early) return `the engine sent ${describeCall(b)} (${phaseOf.get(b)}) before ${describeCall(early)} (${phaseOf.get(early)}) had ended`;
    }
    return undefined;
}

const namesOf = (c: Checkpoint) => ({
    resources: [...c.resources.values()].map((m) => `${m.name}${m.provider === "explicit" ? " (explicit)" : ""}${m.pendingReplacement ? " (pending replacement)" : ""}`).sort().join(", "),
    condemned: c.condemned.map((m) => m.name).sort().join(", "),
    pending: [...c.pendingCreates.values()].map((m) => m.name).sort().join(", "),
});

/** Replays one trace through the model; the first divergence, and the model's flows it took. */
export async function conform(trace: Trace): Promise<Conformance> {
    const world = new World();
    const stack = new Stack(new Rules(), new Draws(0), world);
    stack.trace = true;
    const out: Conformance = { label: trace.label, commands: trace.commands.length, took: stack.took, notesCompared: 0 };
    const say = (i: number, cmd: TraceCommand, what: string) => `command ${i + 1} (\`pulumi ${cmd.args.join(" ")}\`${cmd.fault ? `, struck: ${cmd.fault}` : ""}): ${what}`;
    for (const [i, cmd] of trace.commands.entries()) {
        // A command the CLI refused before its engine ran (a locked stack) sent nothing, and the model runs nothing.
        if (cmd.refused) continue;
        stack.checkpoint = checkpointOf(cmd.before);
        if (cmd.program.length || cmd.args[0] === "up" || cmd.args[0] === "preview") stack.program = cmd.program.map(memberOf);
        const allRuns = runsOf(cmd.calls);
        const runs = allRuns.filter((r) => r.some((c) => RESOURCE_CALLS.has(c.method)));
        const cutOff = cmd.fault !== undefined || cmd.calls.some((c) => c.end === undefined);
        stack.guide = new TraceGuide(allRuns, cmd.fault !== undefined);
        stack.sent.length = 0;
        // What the real plugin read as the command began: the journal its processes left, IAM, the clock.
        const { journal, iam, startedAt } = cmd;
        const fed = journal !== undefined && iam !== undefined && startedAt !== undefined;
        if (fed) {
            world.now = startedAt;
            world.load(Object.fromEntries(Object.entries(journal).map(([name, text]) => [name, translated(text, trace.label, stack.version)])), cmd.alive);
            const etags: (string | undefined)[] = [];
            for (const [kind, etag] of Object.entries(cmd.etags ?? {})) if (kind in PARENT_INDEX) etags[PARENT_INDEX[kind as ParentKind]] = etag;
            stack.iam.load(iam.flatMap((g) => {
                const [kind, ...rest] = g.split(" ");
                return kind in PARENT_INDEX ? [{ parent: PARENT_INDEX[kind as ParentKind], grant: grantOf(rest.join(" ")) }] : [];
            }), etags);
        }
        const said = await stack.command(commandOf(cmd.args));
        const modelRuns = [...new Set(stack.sent.filter((c) => RESOURCE_CALLS.has(c.method)).map((c) => c.run))];
        // The model's runs that sent calls, against the engine's (a run that sent nothing about a resource is left out).
        for (let r = 0; r < Math.max(runs.length, modelRuns.length); r++) {
            const engine = runs[r];
            const model = modelRuns[r] === undefined ? [] : stack.sent.filter((c) => c.run === modelRuns[r] && RESOURCE_CALLS.has(c.method));
            if (!engine) return { ...out, divergence: say(i, cmd, `the model runs the engine ${modelRuns.length} times with calls; the engine ran ${runs.length} (run ${r + 1} of the model sends ${describeCall(model[0])})`) };
            const diverges = compareRun(engine.filter((c) => RESOURCE_CALLS.has(c.method)), model);
            if (diverges) return { ...out, divergence: say(i, cmd, `run ${r + 1}: ${diverges}`) };
        }
        // (b): the notes of a command that ran to its end (a struck one printed what it reached), all of whose journal's
        // writers were gone as it began (a plugin finishing its writes after its CLI died exits during the command, at
        // a moment the trace does not keep, and whether it still ran decides what the journal may say).
        if (fed && cmd.said !== undefined && !cutOff && (cmd.alive ?? []).length === 0) {
            out.notesCompared++;
            // As sets: a note a command's preview and its update each say, or the report at a run's start and end, is one.
            const mine = notesOf(said.said);
            const theirs = [...new Set(cmd.said)].sort();
            if (out.notesDiffer === undefined && mine.join("\n") !== theirs.join("\n")) {
                out.notesDiffer = say(i, cmd, `the real plugin said [${theirs.join("; ")}]; the core, fed the trace, says [${mine.join("; ")}]`);
            }
        }
        if (!cutOff) {
            const next = trace.commands[i + 1]?.before ?? trace.after;
            const [mine, theirs] = [namesOf(stack.checkpoint), namesOf(checkpointOf(next))];
            for (const k of ["resources", "condemned", "pending"] as const) {
                if (mine[k] !== theirs[k]) return { ...out, divergence: say(i, cmd, `the model records ${k} [${mine[k]}]; the engine recorded [${theirs[k]}]`) };
            }
        }
    }
    return out;
}
