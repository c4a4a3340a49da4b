// A recorded trace of the real engine: what one campaign trial's commands sent the plugin, as the CLI itself logged it
// (`PULUMI_DEBUG_GRPC=<file>`: one JSON line as each call starts and one as it ends), reduced to what the engine model
// decides — which resources, which calls in which order, what each answered — and the engine's checkpoint as each
// command started; with what the campaign recorded beside it (the journal, IAM and etags the plugins read as it began,
// the journal's notes it printed). The reduction keeps no request body and no credential.

/** Where a grant's parent is, as the campaign's programs place them. */
export type ParentKind = "service" | "consumer" | "policyConsumer";

/** The names of a campaign trial's parents (its service, and the consumers of its Members and of its Policy). */
export const campaignParents = (label: string): Record<ParentKind, string> =>
    ({ service: `${label}.endpoints.campaign-project.cloud.goog`, consumer: `cons-${label}`, policyConsumer: `pol-${label}` });

/**
 * The lines of the crash journal's report in printed text (`- <grant> on <parent> was written for …`: in IAM, in no
 * state; `- <grant> was removed from <parent> by an operation …`: gone, a state holds it): each one's sign, grant and
 * parent.
 */
export function reportNotesIn(text: string): { sign: "+" | "-"; grant: string; parent: string }[] {
    const out: { sign: "+" | "-"; grant: string; parent: string }[] = [];
    for (const m of text.matchAll(/- (\S+ \S+) on (services\/\S+) was written for /g)) out.push({ sign: "+", grant: m[1], parent: m[2] });
    for (const m of text.matchAll(/- (\S+ \S+) was removed from (services\/\S+) by an operation/g)) out.push({ sign: "-", grant: m[1], parent: m[2] });
    return out;
}

/** A resource as a program registered it, or as a checkpoint holds it. */
export interface TraceResource {
    name: string;
    type: string;
    /** The provider's resource name: `default`, `default_8_38_0`, or an explicit provider's name. */
    provider: string;
    deleteBeforeReplace?: boolean;
    /** In a checkpoint: deleted first for its replacement, whose Create is not recorded yet. */
    pendingReplacement?: boolean;
    parent: ParentKind;
    /** Each grant it declares or holds, as `role member`. */
    grants: string[];
}

/** What the engine's checkpoint held. */
export interface TraceState {
    resources: TraceResource[];
    /** Replaced resources whose Delete is still to come (`delete: true` in the checkpoint). */
    condemned: TraceResource[];
    /** Creates the engine began and never saw end. */
    pendingCreates: TraceResource[];
}

/** One call from the engine to the plugin, by the index of the log lines where it started and ended. */
export interface TraceCall {
    method: string;
    /** The resource's (or provider's) name; "" for a call about no resource (Handshake, Cancel). */
    name: string;
    start: number;
    /** Absent when the call never ended (the CLI was killed). */
    end?: number;
    error?: string;
    /** A Diff's answer. */
    diff?: "none" | "update" | "replace";
    /** A Read whose answer was "not found". */
    gone?: boolean;
    /** A Create, Update or Delete sent with `preview: true`. */
    preview?: boolean;
    /** A Read's resource ID as the user's import names it, after its parent: `role member`, `role`, or "" (a Policy). */
    id?: string;
}

export interface TraceCommand {
    /** The command's arguments after `pulumi`, as the user ran them. */
    args: string[];
    /** The fault the campaign struck it with. */
    fault?: string;
    /** The CLI refused it before its engine sent a resource anything (it failed: a locked stack, an unreadable snapshot). */
    refused?: boolean;
    before: TraceState;
    /** The resources its program registered (none for a destroy or a refresh). */
    program: TraceResource[];
    calls: TraceCall[];
    /** What IAM held as it started, as `parent-kind role member` (recorded since the journal's notes are). */
    iam?: string[];
    /** The stack's crash journal as it started: each file's name and its lines, as the plugin left them. */
    journal?: Record<string, string>;
    /** The journal's notes it printed: `+ parent-kind role member` (in IAM, in no state), `-` (removed, a state holds it). */
    said?: string[];
    /** When it started (ms since the epoch). */
    startedAt?: number;
    /** Each parent's policy etag as it started, by parent kind. */
    etags?: Record<string, string>;
    /** The journal's writers still running as it started. */
    alive?: string[];
}

export interface Trace {
    label: string;
    commands: TraceCommand[];
    /** The checkpoint as the trial ended. */
    after: TraceState;
}

/** One line of `PULUMI_DEBUG_GRPC`'s log. */
interface RawLine {
    method: string;
    request?: Record<string, unknown>;
    response?: Record<string, unknown>;
    errors?: string[];
    progress?: string;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const nameOfUrn = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

function parentOf(props: Record<string, unknown>): ParentKind {
    const consumer = str(props.consumerProject);
    return consumer === undefined || consumer === "" ? "service" : consumer.startsWith("pol-") ? "policyConsumer" : "consumer";
}

function grantsOf(props: Record<string, unknown>): string[] {
    const role = str(props.role);
    if (str(props.member) !== undefined) return [`${role ?? ""} ${str(props.member) ?? ""}`];
    if (Array.isArray(props.members)) return props.members.map((m) => `${role ?? ""} ${String(m)}`);
    const data = str(props.policyData);
    if (data !== undefined) {
        try {
            const policy = JSON.parse(data) as { bindings?: { role?: string; members?: string[] }[] };
            return (policy.bindings ?? []).flatMap((b) => (b.members ?? []).map((m) => `${b.role ?? ""} ${m}`));
        } catch {
            return [];
        }
    }
    return [];
}

/** The provider a state's or a registration's `provider` reference names (`urn::id`), or the default one. */
const providerOf = (ref: unknown) => {
    const urn = str(ref)?.split("::").slice(0, -1).join("::");
    return urn ? nameOfUrn(urn) : "default";
};

interface CheckpointResource {
    urn: string;
    type: string;
    custom?: boolean;
    provider?: string;
    delete?: boolean;
    pendingReplacement?: boolean;
    outputs?: Record<string, unknown>;
    inputs?: Record<string, unknown>;
}

/** The file backend's checkpoint (`.pulumi/stacks/<project>/<stack>.json`), reduced. */
export function stateOf(checkpoint: string | undefined): TraceState {
    const out: TraceState = { resources: [], condemned: [], pendingCreates: [] };
    if (!checkpoint) return out;
    type Latest = { resources?: CheckpointResource[]; pending_operations?: { resource: CheckpointResource; type: string }[] };
    const latest = (JSON.parse(checkpoint) as { checkpoint?: { latest?: Latest } }).checkpoint?.latest ?? {};
    const reduce = (r: CheckpointResource): TraceResource => {
        const props = { ...(r.inputs ?? {}), ...(r.outputs ?? {}) };
        return { name: nameOfUrn(r.urn), type: r.type, provider: providerOf(r.provider), parent: parentOf(props), grants: grantsOf(props), ...(r.pendingReplacement ? { pendingReplacement: true } : {}) };
    };
    for (const r of latest.resources ?? []) {
        if (!r.custom || r.type.startsWith("pulumi:providers:")) continue;
        (r.delete ? out.condemned : out.resources).push(reduce(r));
    }
    for (const op of latest.pending_operations ?? []) if (op.type === "creating") out.pendingCreates.push(reduce(op.resource));
    return out;
}

/** The calls a trace keeps: about resources, and the plugin processes' start (Handshake) and close (Cancel). */
const KEPT = new Set(["Handshake", "Cancel", "Check", "Diff", "Create", "Update", "Delete", "Read"]);

/** One command's log, reduced: the program it registered and the calls it sent the plugin. */
export function callsOf(log: string): { program: TraceResource[]; calls: TraceCall[] } {
    const program = new Map<string, TraceResource>();
    const calls: TraceCall[] = [];
    const open = new Map<string, TraceCall[]>();
    const lines = log.split("\n").filter((l) => l.trim() !== "");
    lines.forEach((text, index) => {
        const line = JSON.parse(text) as RawLine;
        const req = line.request ?? {};
        if (line.method === "/pulumirpc.ResourceMonitor/RegisterResource" && line.progress === "request_started") {
            const type = str(req.type) ?? "";
            if (req.custom === true && !type.startsWith("pulumi:providers:")) {
                const props = (req.object ?? {}) as Record<string, unknown>;
                program.set(str(req.name) ?? "", {
                    name: str(req.name) ?? "", type, provider: providerOf(req.provider), parent: parentOf(props), grants: grantsOf(props),
                    ...(req.deleteBeforeReplace === true ? { deleteBeforeReplace: true } : {}),
                });
            }
            return;
        }
        const prefix = "/pulumirpc.ResourceProvider/";
        if (!line.method.startsWith(prefix) || !KEPT.has(line.method.slice(prefix.length))) return;
        // A call's two lines carry the same request: that pairs them (first started, first ended, among equals).
        const key = `${line.method} ${JSON.stringify(req)}`;
        if (line.progress === "request_started") {
            const call: TraceCall = { method: line.method.slice(prefix.length), name: str(req.urn) ? nameOfUrn(str(req.urn)!) : "", start: index };
            if (req.preview === true) call.preview = true;
            const id = str(req.id);
            if (call.method === "Read" && id !== undefined) call.id = id.includes(" ") ? id.slice(id.indexOf(" ") + 1) : "";
            calls.push(call);
            open.set(key, [...(open.get(key) ?? []), call]);
            return;
        }
        const call = open.get(key)?.shift();
        if (!call) return;
        call.end = index;
        if (line.errors?.length) call.error = line.errors[0].replace(/^rpc error: code = \w+ desc = /, "").slice(0, 200);
        const res = line.response ?? {};
        if (call.method === "Diff") {
            const replaces = Array.isArray(res.replaces) && res.replaces.length > 0;
            call.diff = res.changes === "DIFF_SOME" ? (replaces ? "replace" : "update") : "none";
        }
        if (call.method === "Read" && !call.error && !str(res.id)) call.gone = true;
    });
    return { program: [...program.values()], calls };
}

/** The commands that drive the engine (the others — `stack export`, `cancel`, `state repair` — send the plugin nothing). */
const ENGINE = new Set(["up", "preview", "refresh", "destroy", "import"]);

/**
 * A trial's trace from what the campaign kept: each command's arguments, fault, checkpoint as it started and log.
 * `log(file)` reads one command's log (undefined: the command wrote none).
 */
export function traceOf(trial: { label: string; commands: { args: string[]; fault?: string; file: string; before?: string; code?: number; iam?: string[];
    journal?: Record<string, string>; said?: string[]; startedAt?: number; etags?: Record<string, string>; alive?: string[] }[]; after?: string },
    log: (file: string) => string | undefined): Trace {
    const commands: TraceCommand[] = [];
    for (const c of trial.commands) {
        if (!ENGINE.has(c.args[0])) continue;
        const { program, calls } = callsOf(log(c.file) ?? "");
        const refused = c.code !== undefined && c.code !== 0 && !calls.some((x) => x.method !== "Handshake" && x.method !== "Cancel");
        commands.push({ args: c.args, ...(c.fault ? { fault: c.fault } : {}), ...(refused ? { refused } : {}), before: stateOf(c.before), program, calls,
            ...(c.iam ? { iam: [...c.iam].sort() } : {}), ...(c.journal ? { journal: c.journal } : {}), ...(c.said ? { said: [...c.said].sort() } : {}),
            ...(c.startedAt !== undefined ? { startedAt: c.startedAt } : {}), ...(c.etags ? { etags: c.etags } : {}), ...(c.alive ? { alive: c.alive } : {}) });
    }
    return { label: trial.label, commands, after: stateOf(trial.after) };
}

/** A trace as its file holds it: one line per command, so that a change to one reads as a change to its line. */
export function formatTrace(t: Trace): string {
    return `{"label":${JSON.stringify(t.label)},"after":${JSON.stringify(t.after)},"commands":[\n${t.commands.map((c) => JSON.stringify(c)).join(",\n")}\n]}\n`;
}
