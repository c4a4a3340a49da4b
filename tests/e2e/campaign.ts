// A randomized fault campaign through the real CLI and YAML host, as Jepsen and FoundationDB test: each trial is a
// random program (Members and Bindings of a service and of a consumer, a Policy of another consumer, through the
// default provider and an explicit one; some Members `deleteBeforeReplace`, some declaring one grant twice), brought
// up, then a command — `pulumi up` of a changed program, or `pulumi destroy`, or `pulumi refresh` — struck at a random
// moment by kill -9 of a plugin or of the CLI, or Ctrl-C once or twice to the CLI's process group, often while a write
// has landed and its answer is held; while Google's side may answer 429s, 503s, resets, or lose the answer of a write
// it applied, and a writer outside Pulumi may change the same policies (our writes then meet 409s). The user then
// recovers as Pulumi tells them to (`pulumi cancel` for a lock, `pulumi refresh --clear-pending-creates`, `pulumi
// up`), sometimes with the program reverted, and runs what users run around a crash: `pulumi preview`, `pulumi preview
// --refresh` (as CI does on every change), `pulumi refresh --preview-only`, `pulumi up --target` and `pulumi destroy --target` of one
// resource, each drawn (a snapshot Pulumi then refuses to read, its engine's own bug after a `--target` run, is
// repaired with `pulumi state repair`, as its error recommends); some trials upgrade the plugin as they recover (the
// program pinned the old release), some rename the stack (before the crash, or between the warnings and the commands
// they give); some run the struck command and the recovery without `--skip-preview` (each previewed first). After
// every trial:
//   - converged: `pulumi preview --expect-no-changes` passes;
//   - no declared grant lost: every grant the program declares is in IAM;
//   - nothing foreign removed: grants no resource declares, made outside Pulumi, are still there;
//   - nothing unnamed: every other grant left in IAM is named, with its command, by the last `pulumi up`;
//   - no false alarm: each grant any command of the recovery names (its ups, previews, refreshes, `--target` runs and
//     imports) is as its note says — in IAM and in no state (`pulumi stack export`), or gone from IAM while a state
//     holds it — as the command started or as it ended (each command starts once the emulator has applied every
//     request it was sent: a write a killed process sent before it died lands, as Google would apply it);
//   - no warning survives its command: the user runs the `pulumi import` each note gives (sometimes its
//     `--preview-only` first, which must not fail), then `pulumi up` (which removes what the program does not
//     declare); the next `pulumi up` names nothing, and IAM holds exactly what the program declares (and the foreign
//     grants); every preview drawn succeeds.
// Seeded and replayable (the faults' timing is the machine's): `npm run campaign -- --seed S --trials N`.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ChildProcess, spawn } from "child_process";
import type { Emulator } from "../../emulator";
import { pidsWith, processes, PulumiSandbox, RunResult, sleep, VERSION, yaml } from "./support";
import { FOLDER_PLATFORM, listGrants, pluginFolder } from "../support/plugin";
import { tarball } from "../../scripts/platforms";
import { BACKEND_PREFIX } from "../../provider/deployment/location";
import { conform } from "../../sim/conform";
import { campaignParents, formatTrace, reportNotesIn, traceOf } from "../../sim/trace";

const MEMBER_ROLE = "roles/servicemanagement.serviceConsumer";
const BINDING_ROLE = "roles/servicemanagement.serviceController";
const FOREIGN = "roles/viewer user:foreign@example.com";
/** The release a drawn upgrade moves to: the same plugin, installed under the next minor version. */
const UPGRADE = VERSION.replace(/^(\d+)\.(\d+)\..*$/, (_, major: string, minor: string) => `${major}.${Number(minor) + 1}.0`);

/**
 * Installs the next release in the sandbox, once: this plugin's Node-folder build (its bundle is plain JavaScript)
 * with its version, in the bundle, package.json and schema, said as `version` — a plugin that reports the release it
 * is installed as, as a real upgrade's does (the engine checks, and `pulumi import` loads its schema by it).
 */
async function installed(sb: PulumiSandbox, version: string): Promise<void> {
    if (fs.existsSync(sb.pluginDirOf(version))) return;
    const stage = path.join(sb.dir, `release-${version}`);
    fs.cpSync(pluginFolder(FOLDER_PLATFORM), stage, { recursive: true });
    for (const file of ["lib/main.js", "package.json", "schema.json"]) {
        const where = path.join(stage, file);
        const text = fs.readFileSync(where, "utf8");
        if (!text.includes(VERSION)) throw new Error(`the Node-folder build's ${file} does not say its version ${VERSION}`);
        fs.writeFileSync(where, text.split(VERSION).join(version));
    }
    const file = `${stage}.tar.gz`;
    tarball(stage, file);
    await sb.installPlugin(version, file);
}

/** mulberry32: a small seeded generator, so a seed replays the same programs and fault choices. */
export function random(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** One resource of a program, as the generator keeps it (what it declares is computed from it). */
interface Res {
    name: string;
    kind: "member" | "binding" | "policy";
    parent: "service" | "consumer" | "policyConsumer";
    explicit: boolean;
    members: string[];
    /** The resource option `deleteBeforeReplace` (a Member's replacement then deletes its old self first). */
    deleteFirst?: boolean;
}

interface Program {
    resources: Res[];
}

const FAULTS = ["kill -9 of a plugin", "kill -9 of the CLI", "Ctrl-C once", "Ctrl-C twice"] as const;
export type Fault = (typeof FAULTS)[number];
export const isFault = (text: string): text is Fault => (FAULTS as readonly string[]).includes(text);

export interface TrialResult {
    seed: number;
    trial: number;
    fault: Fault;
    reverted: boolean;
    /** The commands of the recovery, beyond cancel, refresh and up, as drawn. */
    operations: string[];
    problems: string[];
    /** Grants left in IAM that no resource declares (each named, when there is no problem). */
    leftovers: number;
    /** Pulumi's snapshot integrity errors met, each repaired with `pulumi state repair` as its message recommends. */
    repairs: number;
    /** Checkpoints the file backend could no longer load after the kill (`failed to load checkpoint`), each restored from its `.bak`. */
    restores: number;
    /** Google's answers other than 200 during the struck command, by HTTP status (0: reset, or answer lost). */
    answers: Record<string, number>;
    seconds: number;
    /** Each command's record of RPCs, where the campaign was asked to keep them. */
    traces: TracedCommand[];
}

const pool = Array.from({ length: 24 }, (_, i) => `user:u${i}@example.com`);

function generate(r: Rand, prefix: string): Program {
    const resources: Res[] = [];
    const n = int(r, 4, 12);
    for (let i = 0; i < n; i++) {
        resources.push({ name: `${prefix}m${i}`, kind: "member", parent: r() < 0.6 ? "service" : "consumer", explicit: r() < 0.4, members: [pick(r, pool)] });
    }
    for (const parent of ["service", "consumer"] as const) {
        if (r() < 0.5) resources.push({ name: `${prefix}b-${parent}`, kind: "binding", parent, explicit: r() < 0.4, members: pool.filter(() => r() < 0.15) });
    }
    if (r() < 0.5) resources.push({ name: `${prefix}policy`, kind: "policy", parent: "policyConsumer", explicit: r() < 0.4, members: pool.filter(() => r() < 0.2) });
    for (const b of resources) if (b.kind !== "member" && b.members.length === 0) b.members = [pick(r, pool)];
    return { resources };
}

/** The program changed as a user changes one: members added, removed, moved to another member or provider. */
function mutate(r: Rand, p: Program, prefix: string): Program {
    const out: Res[] = [];
    for (const res of p.resources) {
        const roll = r();
        if (roll < 0.2) continue; // removed
        if (roll < 0.35) out.push({ ...res, members: res.kind === "member" ? [pick(r, pool)] : pool.filter(() => r() < 0.2) });
        else if (roll < 0.42) out.push({ ...res, explicit: !res.explicit });
        else out.push(res);
    }
    const more = int(r, 0, 6);
    for (let i = 0; i < more; i++) out.push({ name: `${prefix}n${i}`, kind: "member", parent: r() < 0.6 ? "service" : "consumer", explicit: r() < 0.4, members: [pick(r, pool)] });
    for (const b of out) if (b.kind !== "member" && b.members.length === 0) b.members = [pick(r, pool)];
    return { resources: out };
}

/** What IAM and the stack's state hold, each as `parent role member`. */
interface World {
    iam: Set<string>;
    held: Set<string>;
}

/** The trial's parents. */
interface Parents {
    service: string;
    consumer: string;
    policyConsumer: string;
}

function parentName(ps: Parents, which: Res["parent"]): string {
    return which === "service" ? `services/${ps.service}` : `services/${ps.service}/consumers/${which === "consumer" ? ps.consumer : ps.policyConsumer}`;
}

/** Every grant the program declares, as `parent role member`. */
function declared(ps: Parents, p: Program): Set<string> {
    const out = new Set<string>();
    for (const res of p.resources) {
        const role = res.kind === "member" ? MEMBER_ROLE : res.kind === "binding" ? BINDING_ROLE : MEMBER_ROLE;
        for (const m of res.members) out.add(`${parentName(ps, res.parent)} ${role} ${m}`);
    }
    return out;
}

/**
 * The program as Pulumi YAML. `version`: the plugin release every resource (and the explicit provider) asks for, as a
 * user pins one and later bumps it; the default provider's URN then carries it (`default_8_38_0`).
 */
function yamlOf(ps: Parents, p: Program, endpoint: string, token: string, version?: string): string {
    const pin = version ? `      version: ${version}\n` : "";
    const parts = [yaml.resource("prov", "pulumi:providers:cloud", { serviceManagementCustomEndpoint: endpoint, accessToken: token }, pin)];
    for (const res of p.resources) {
        const options = `${res.explicit ? "      provider: ${prov}\n" : ""}${res.deleteFirst ? "      deleteBeforeReplace: true\n" : ""}${pin}`;
        const where: Record<string, string> = res.parent === "service" ? { serviceName: ps.service }
            : { serviceName: ps.service, consumerProject: res.parent === "consumer" ? ps.consumer : ps.policyConsumer };
        const prefix = res.parent === "service" ? "Service" : "Consumers";
        if (res.kind === "member") {
            parts.push(yaml.resource(res.name, `cloud:endpoints:${prefix}IamMember`, { ...where, role: MEMBER_ROLE, member: res.members[0] }, options));
        } else if (res.kind === "binding") {
            parts.push(yaml.resource(res.name, `cloud:endpoints:${prefix}IamBinding`, { ...where, role: BINDING_ROLE, members: `[${res.members.join(", ")}]` }, options));
        } else {
            const data = { bindings: [{ role: MEMBER_ROLE, members: res.members }] };
            parts.push(yaml.resource(res.name, "cloud:endpoints:ConsumersIamPolicy", { ...where, policyData: `'${JSON.stringify(data)}'` }, options));
        }
    }
    return parts.join("");
}

export interface CampaignContext {
    sb: PulumiSandbox;
    emu: Emulator;
    token: string;
    /** Progress lines for a person. */
    say(line: string): void;
    /** Every trial's fault, instead of a random one (to explore one kind). */
    fault?: Fault;
    /** A folder for each trial's trace (`<trial>.json`, see sim/trace.ts), as `npm run sim -- --conform` reads them. */
    traces?: string;
}

/** One command of a trial, as run: its arguments, the fault that struck it, and where its RPCs were recorded. */
export interface TracedCommand {
    args: string[];
    fault?: Fault;
    file: string;
    /** The checkpoint (the file backend's JSON) as the command started. */
    before?: string;
    /** How the CLI exited (absent where the campaign struck it). */
    code?: number;
    /** What IAM held as the command started, as `parent-kind role member` (sim/trace.ts). */
    iam?: string[];
    /** The stack's crash journal as the command started: each file's name and text. */
    journal?: Record<string, string>;
    /** When the command started (ms since the epoch): the clock the journal's lines were written by. */
    startedAt?: number;
    /** Each parent's policy etag as the command started (what a write journaled before it was sent against). */
    etags?: Record<string, string>;
    /** The journal's writers still running as the command started (a plugin finishing its writes after its CLI died). */
    alive?: string[];
    /** The journal's notes the command printed, as `+|- parent-kind role member`. */
    said?: string[];
}

/** One trial of `seed`: see the top of this file. */
export async function trial(ctx: CampaignContext, seed: number, index: number): Promise<TrialResult> {
    const { sb, emu, token } = ctx;
    const started = Date.now();
    const r = random(seed * 1000 + index);
    const label = `s${seed}t${index}`;
    const ps: Parents = campaignParents(label);
    emu.createService(ps.service, "campaign-project");
    // Grants made outside Pulumi, on the parents no Policy owns.
    for (const which of ["service", "consumer"] as const) {
        const [role, member] = FOREIGN.split(" ");
        emu.setPolicy(parentName(ps, which), { bindings: [{ role, members: [member] }] });
    }
    const dir = sb.project(label, { "Pulumi.yaml": yaml.program(label, { resources: "" }) });
    await sb.initStack(dir, emu.url, token);
    let version: string | undefined;
    const write = (p: Program) => fs.writeFileSync(path.join(dir, "Pulumi.yaml"), yaml.program(label, { resources: yamlOf(ps, p, emu.url, token, version) }));
    let stack = "dev";
    // Each command's RPCs, recorded by the CLI itself (one JSON line per call, on both sides of the engine).
    const traced: TracedCommand[] = [];
    const checkpointFile = () => path.join(sb.dir, "state", ".pulumi", "stacks", label, `${stack}.json`);
    const checkpointNow = () => (fs.existsSync(checkpointFile()) ? fs.readFileSync(checkpointFile(), "utf8") : undefined);
    const tracing = (args: string[], fault?: Fault) => {
        const file = path.join(sb.dir, "rpcs", label, `${String(traced.length + 1).padStart(2, "0")}.jsonl`);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        sb.env.PULUMI_DEBUG_GRPC = file;
        // The engine's checkpoint as the command starts (the file backend's own file), so a model can start there;
        // what IAM and the stack's journal held then, so that the journal's core can be fed what the plugin read.
        const before = checkpointNow();
        const iam = [...iamOf(emu, ps)].map((g) => kindOf(ps, g));
        const journal = journalOf(sb, `urn:pulumi:${stack}::${label}::`);
        const running = new Set(processes().map((p) => `${p.pid} ${p.start}`));
        const alive = Object.values(journal).flatMap((text) => {
            const w = writerOf(text);
            return w && running.has(`${w.pid} ${w.start}`) ? [w.id] : [];
        });
        traced.push({ args, file, ...(fault ? { fault } : {}), ...(before !== undefined ? { before } : {}), iam, journal, alive, startedAt: Date.now(),
            etags: Object.fromEntries((["service", "consumer", "policyConsumer"] as const).map((w) => [w, emu.getPolicy(parentName(ps, w)).etag ?? ""])) });
    };
    /** The last traced command's exit code and the journal's notes it printed. */
    const endedWith = (code: number | null, output?: string) => {
        if (traced.length && code !== null) traced[traced.length - 1].code = code;
        if (traced.length && output !== undefined) traced[traced.length - 1].said = notesOf(output).map((n) => `${n.sign} ${kindOf(ps, `${n.parent} ${n.grant}`)}`);
    };

    const a = generate(r, "");
    const b = mutate(r, a, "");
    const drawn = pick(r, FAULTS);
    const fault = ctx.fault ?? drawn;
    const reverted = r() < 0.5;
    const latency = int(r, 20, 150);
    const strikeAfterWrites = int(r, 0, 6);
    const holdAnswer = r() < 0.7;
    const userRunsUpFirst = r() < 0.5;
    const operations = [
        ...(r() < 0.4 ? ["preview --refresh"] : []),
        ...(r() < 0.2 ? ["refresh --preview-only"] : []),
        ...(r() < 0.3 ? ["up --target"] : []),
    ];
    // Drawn after the above, so a seed's programs and faults stay what they were before these were added.
    const roll = r();
    const struck: "up" | "destroy" | "refresh" = roll < 0.7 ? "up" : roll < 0.85 ? "destroy" : "refresh";
    // Google's side, while the struck command runs: 429s, 503s, resets, answers lost after the write was applied;
    // and a writer outside Pulumi changing the same policies (every write of ours on a stale etag gets a 409).
    const googleKinds = (["429", "503", "reset", "lost"] as const).filter(() => r() < 0.5);
    const googleRate = googleKinds.length && r() < 0.6 ? 0.08 + r() * 0.17 : 0;
    const otherWriter = r() < 0.35;
    for (const res of b.resources) if (res.kind === "member" && r() < 0.25) res.deleteFirst = true;
    for (const res of a.resources) res.deleteFirst = b.resources.find((x) => x.name === res.name)?.deleteFirst;
    if (r() < 0.2) operations.push("destroy --target");
    const importPreviewFirst = r() < 0.4;
    // A plugin upgrade: the program pins this release until the crash, and the user bumps it as they recover (the
    // default provider's URN changes with it, and the new release's processes read what the old one's left).
    const upgrade = r() < 0.2;
    // `pulumi stack rename`: before the struck command (the journal then lives under the new name), or between the
    // warnings and the commands they give (which still clear them under the new name).
    const renameRoll = r();
    const rename = renameRoll < 0.1 ? "before the crash" : renameRoll < 0.2 ? "before the notes' commands" : undefined;
    // Commands run as many users run them, without `--skip-preview`: the engine previews each first.
    const previewsFirst = r() < 0.4;
    const yes = previewsFirst ? ["--yes"] : ["--yes", "--skip-preview"];
    if (previewsFirst) operations.push("without --skip-preview");
    // A plain `pulumi preview` as the user looks before recovering (of the reverted program, when reverted).
    if (r() < 0.4) operations.push("preview");
    if (upgrade) operations.push("plugin upgrade");
    if (rename) operations.push(`stack rename ${rename}`);
    if (struck !== "up") operations.push(`struck ${struck}`);
    if (googleRate) operations.push(...googleKinds.map((k) => `Google ${k}`));
    if (otherWriter) operations.push("another writer (409)");
    if ([a, b].some((p) => p.resources.some((x) => x.deleteFirst))) operations.push("deleteBeforeReplace");
    if ([a, b].some(sharesGrant)) operations.push("two Members of one grant");

    if (upgrade) {
        await installed(sb, UPGRADE);
        version = VERSION;
    }
    write(a);
    tracing(["up", "--yes", "--skip-preview"]);
    await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
    if (rename === "before the crash") {
        stack = "prod";
        tracing(["stack", "rename", stack]);
        await sb.pulumi(["stack", "rename", stack], dir);
    }

    // With CAMPAIGN_DEBUG, for a trial that fails: when each grant came and went in IAM (every state the emulator
    // stored), against the commands run.
    const debug = Boolean(process.env.CAMPAIGN_DEBUG);
    const timeline: string[] = [];
    const mark = (what: () => string) => {
        if (debug) timeline.push(`${String(Date.now() - started).padStart(7)} ms  ${what()}`);
    };
    const unwatch = debug ? (() => {
        let seen = iamOf(emu, ps);
        const watched = new Set((["service", "consumer", "policyConsumer"] as const).map((w) => parentName(ps, w)));
        return emu.watchPolicies((parent) => {
            if (!watched.has(parent)) return;
            const now = iamOf(emu, ps);
            for (const g of now) if (!seen.has(g)) mark(() => `+ ${g}`);
            for (const g of seen) if (!now.has(g)) mark(() => `- ${g}`);
            seen = now;
        });
    })() : () => undefined;
    if (struck === "up") write(b);
    emu.setFaults({ latencyMs: latency, minLatencyMs: latency, ...(googleRate ? { rate: googleRate, kinds: [...googleKinds] } : {}) });
    const writerGrants: string[] = [];
    const writer = otherWriter ? setInterval(() => {
        // A grant outside Pulumi's, added with the emulator's own hand: the policy's etag moves under our writes.
        const which = writerGrants.length % 2 === 0 ? "service" : "consumer";
        const member = `user:writer${writerGrants.length}@example.com`;
        const policy = emu.getPolicy(parentName(ps, which));
        emu.setPolicy(parentName(ps, which), { ...policy, bindings: [...(policy.bindings ?? []), { role: "roles/viewer", members: [member] }] });
        writerGrants.push(`${parentName(ps, which)} roles/viewer ${member}`);
    }, int(r, 40, 200)) : undefined;
    // setIamPolicy calls since the second up began, counted as the emulator's request log grows.
    let seenUpTo = emu.requests.length;
    const struckFrom = seenUpTo;
    let written = 0;
    const writes = () => {
        if (emu.requests.length < seenUpTo) seenUpTo = 0; // the log was trimmed
        for (; seenUpTo < emu.requests.length; seenUpTo++) if (emu.requests[seenUpTo].path.endsWith(":setIamPolicy")) written++;
        return written;
    };
    const command = struck === "up" ? ["up"] : struck === "destroy" ? ["destroy"] : ["refresh"];
    tracing([...command, ...yes], fault);
    const cli = spawn(path.join(sb.bin, "pulumi"), [...command, ...yes, "--non-interactive", "--color", "never"],
        { cwd: dir, env: sb.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    cli.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    cli.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => cli.once("exit", () => resolve()));
    const deadline = Date.now() + 30_000;
    let done = false;
    void exited.then(() => (done = true));
    while (!done && writes() < strikeAfterWrites && Date.now() < deadline) await sleep(10);
    if (!done && holdAnswer) {
        // The next write lands and its answer is held: the fault strikes mid-write.
        const at = writes();
        emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 1, delayMs: 5000 } });
        while (!done && writes() === at && Date.now() < deadline) await sleep(5);
    }
    // The language host of a CLI killed with -9 lives on (Pulumi starts it in a process group of its own): what the
    // trial started, it ends.
    const hosts = fault === "kill -9 of the CLI" ? childrenOf(cli.pid!, "pulumi-language-") : [];
    if (!done) {
        mark(() => `strike: ${fault}`);
        strike(cli, fault, sb, r);
    }
    await Promise.race([exited, sleep(60_000)]);
    if (!done) cli.kill("SIGKILL");
    sb.transcript.push(out);
    endedWith(null, out);
    // What Google's side answered during the struck command, beyond 200s (0: a connection reset, or an answer lost).
    const answers: Record<string, number> = {};
    for (const req of emu.requests.slice(struckFrom)) if (req.status !== 200) answers[req.status] = (answers[req.status] ?? 0) + 1;
    // The plugins end by themselves once their engine is gone.
    const waitStart = Date.now();
    for (let i = 0; i < 100 && pidsWith(sb.pluginDirOf("")).length > 0; i++) await sleep(100);
    const lingered = pidsWith(sb.pluginDirOf("")).length;
    const running = processes();
    for (const h of hosts) if (running.some((p) => p.pid === h.pid && p.start === h.start)) process.kill(h.pid, "SIGKILL");
    const gone = Date.now() - waitStart;
    mark(() => `the struck command ended; plugins gone after ${gone} ms (${lingered} still running)`);
    if (writer) clearInterval(writer);
    emu.setFaults({ latencyMs: 0, minLatencyMs: 0, rate: 0, kinds: ["429", "503", "reset"], slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });

    // Recovery, as a user does it.
    const final = reverted ? a : b;
    if (upgrade) version = UPGRADE;
    write(final);
    const said: RunResult[] = [];
    let repairs = 0;
    let restores = 0;
    // Pulumi's file backend (gocloud's fileblob) writes a checkpoint's attributes beside it in place: a kill -9 of the
    // CLI mid-write can leave them empty, and every command then fails with `failed to load checkpoint: EOF`. The
    // user restores the checkpoint from the `.bak` the backend keeps (Pulumi's advice in pulumi/pulumi#2801), a step
    // older than the one lost: what the journal says must still hold.
    const unloadable = (res: RunResult) => /failed to load checkpoint/.test(res.stdout + res.stderr);
    const restore = () => {
        const checkpoint = path.join(sb.dir, "state", ".pulumi", "stacks", label, `${stack}.json`);
        restores++;
        mark(() => `restored ${path.basename(checkpoint)} from its .bak`);
        fs.copyFileSync(`${checkpoint}.bak`, checkpoint);
        if (fs.existsSync(`${checkpoint}.bak.attrs`)) fs.copyFileSync(`${checkpoint}.bak.attrs`, `${checkpoint}.attrs`);
        else fs.rmSync(`${checkpoint}.attrs`, { force: true });
    };
    /** `pulumi ARGS`, run again once the checkpoint is restored where the backend could not load it. */
    const loaded = async (args: string[]): Promise<RunResult> => {
        tracing(args);
        const res = await sb.tryPulumi(args, dir);
        endedWith(res.code, res.stdout);
        if (!unloadable(res) || restores >= 2) return res;
        restore();
        tracing(args);
        const again = await sb.tryPulumi(args, dir);
        endedWith(again.code, again.stdout);
        return again;
    };
    const tryRun = async (args: string[]): Promise<RunResult> => {
        mark(() => `$ pulumi ${args.join(" ")} (${pidsWith(sb.pluginDirOf("")).length} plugins running)`);
        const res = await loaded(args);
        mark(() => `exit ${res.code}`);
        said.push(res);
        // Pulumi's engine (3.248) can save a snapshot it then refuses (a `--target` run that creates the default
        // provider puts it after the resources that use it): the user runs what its error recommends, then the
        // command again. Counted, so a campaign shows how often Pulumi's own bug struck.
        if (/snapshot integrity error/.test(res.stdout + res.stderr) && repairs < 3) {
            repairs++;
            tracing(["state", "repair", "--yes"]);
            const repaired = await sb.tryPulumi(["state", "repair", "--yes"], dir);
            said.push(repaired);
            if (repaired.code === 0) return tryRun(args);
        }
        return res;
    };
    const locked = (res: RunResult) => /locked|lock file/i.test(res.stdout + res.stderr);
    const problems: string[] = [];
    // What IAM and the state hold: a note said as a run starts is true of that moment (and that very run may then
    // settle it: an `up` whose Create records the grant), one said as it ends of that one.
    const world = async (): Promise<World> => {
        await emu.quiet();
        const iam = iamOf(emu, ps);
        return { iam, held: heldByState(await loaded(["stack", "export"])) };
    };
    // No false alarm: each grant a command names is what the note says — in IAM and in no state (written for a
    // resource Pulumi did not record), or gone from IAM while a state holds it — as the command started or as it ended.
    const falseAlarms = (which: string, res: RunResult, before: World, after: World) => {
        for (const note of notesOf(res.stdout)) {
            const key = `${note.parent} ${note.grant}`;
            const wrong = (at: World) => note.sign === "+"
                ? (!at.iam.has(key) ? "not in IAM" : at.held.has(key) ? "held by a resource's state" : "")
                : (at.iam.has(key) ? "in IAM" : !at.held.has(key) ? "held by no state" : "");
            if (wrong(before) && wrong(after)) {
                problems.push(`false alarm: ${which} says ${note.grant} on ${note.parent} ${note.sign === "+" ? "is in no state" : "was removed"}, ` +
                    `but as it started it was ${wrong(before)}, and as it ended ${wrong(after)}`);
            }
        }
    };
    /** A command of the recovery, every note it says judged against IAM and the state around it. */
    const judged = async (args: string[]): Promise<RunResult> => {
        const before = await world();
        const res = await tryRun(args);
        falseAlarms(`\`pulumi ${args.join(" ")}\``, res, before, await world());
        return res;
    };
    if (userRunsUpFirst) {
        const first = await judged(["up", ...yes]);
        if (locked(first)) await tryRun(["cancel", "--yes"]);
    } else {
        await tryRun(["cancel", "--yes"]);
    }
    // A preview that fails shows the user nothing: each is a problem.
    const looked: RunResult[] = [];
    if (operations.includes("preview")) looked.push(await judged(["preview"]));
    if (operations.includes("preview --refresh")) looked.push(await judged(["preview", "--refresh"]));
    if (operations.includes("refresh --preview-only")) looked.push(await judged(["refresh", "--preview-only"]));
    await judged(["refresh", ...yes, "--clear-pending-creates"]);
    if (operations.includes("up --target") && final.resources.length) {
        const res = pick(r, final.resources);
        await judged(["up", ...yes, "--target", urnOf(stack, label, res)]);
    }
    if (operations.includes("destroy --target") && final.resources.length) {
        const res = pick(r, final.resources);
        await judged(["destroy", ...yes, "--target", urnOf(stack, label, res)]);
    }
    const last = await judged(["up", ...yes]);

    for (const res of looked) if (res.code !== 0) problems.push(`a preview failed: ${failure(res)}`);
    if (last.code !== 0) problems.push(`the last \`pulumi up\` failed: ${failure(last)}`);
    const converged = await judged(["preview", "--expect-no-changes"]);
    if (converged.code !== 0) problems.push(`not converged: \`pulumi preview --expect-no-changes\` exited ${converged.code}: ${converged.stdout.slice(-600)}`);
    const inIam = iamOf(emu, ps);
    const want = declared(ps, final);
    for (const g of want) if (!inIam.has(g)) problems.push(`lost: ${g} is declared and not in IAM`);
    for (const which of ["service", "consumer"] as const) {
        if (!inIam.has(`${parentName(ps, which)} ${FOREIGN}`)) problems.push(`foreign removed: ${FOREIGN} on ${parentName(ps, which)}`);
    }
    for (const g of writerGrants) if (!inIam.has(g)) problems.push(`foreign removed: ${g}, added by another writer during the struck command`);
    const foreign = (g: string) => g.endsWith(FOREIGN) || writerGrants.includes(g);
    const leftovers = [...inIam].filter((g) => !want.has(g) && !foreign(g));
    for (const g of leftovers) {
        const [, role, member] = g.split(" ");
        if (!last.stdout.includes(`${role} ${member}`)) problems.push(`unnamed: ${g} is in IAM, declared by nothing, and the last \`pulumi up\` does not name it`);
    }
    // Each note's command, run as the user would; then `pulumi up`; then the next `pulumi up` must say nothing.
    if (problems.length === 0) {
        if (rename === "before the notes' commands") {
            stack = "prod";
            await tryRun(["stack", "rename", stack]);
        }
        for (const m of last.stdout.matchAll(/`pulumi import --protect=false (\S+) (\S+) '([^']+)'`/g)) {
            // A user who looks first: the preview of the import records nothing, and changes nothing of what follows.
            if (importPreviewFirst) {
                if (!operations.includes("import --preview-only")) operations.push("import --preview-only");
                const preview = await judged(["import", "--preview-only", "--protect=false", m[1], m[2], m[3]]);
                if (preview.code !== 0) problems.push(`a preview failed: ${failure(preview)}`);
            }
            const imported = await judged(["import", "--yes", "--protect=false", m[1], m[2], m[3]]);
            if (imported.code !== 0) problems.push(`the command a note gives failed: pulumi import ${m[2]} '${m[3]}': ${(imported.stdout + imported.stderr).slice(-400)}`);
        }
        await judged(["up", ...yes]);
        const quiet = await tryRun(["up", ...yes]);
        if (quiet.stdout.includes("crash journal")) problems.push(`a warning survived its command: ${quiet.stdout.slice(quiet.stdout.indexOf("crash journal") - 80).slice(0, 800)}`);
        const settled = iamOf(emu, ps);
        for (const g of settled) if (!want.has(g) && !foreign(g)) problems.push(`left after the notes' commands: ${g}`);
        for (const g of want) if (!settled.has(g)) problems.push(`lost after the notes' commands: ${g}`);
    }
    // The engine model held to what this trial's engine did (sim/conform.ts): a divergence is the model's bug, or the
    // engine's flow the simulator does not draw.
    delete sb.env.PULUMI_DEBUG_GRPC;
    const recorded = traceOf({ label, commands: traced, after: checkpointNow() }, (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined));
    if (ctx.traces) {
        fs.mkdirSync(ctx.traces, { recursive: true });
        fs.writeFileSync(path.join(ctx.traces, `${label}.json`), formatTrace(recorded));
    }
    const conformance = await conform(recorded);
    if (conformance.divergence) problems.push(`the engine model diverges from the engine: ${conformance.divergence}`);
    if (conformance.notesDiffer) problems.push(`the journal's core, fed the trace, says otherwise than the plugin: ${conformance.notesDiffer}`);
    fs.rmSync(path.join(sb.dir, "rpcs", label), { recursive: true, force: true });
    const result: TrialResult = { seed, trial: index, fault, reverted, operations, problems, leftovers: leftovers.length, repairs, restores, answers, seconds: (Date.now() - started) / 1000, traces: traced };
    ctx.say(`seed ${seed} trial ${index}: ${fault}${holdAnswer ? " mid-write" : ""} after ${strikeAfterWrites} writes, ` +
        `${reverted ? "program reverted" : "program kept"}${operations.length ? `, ${operations.join(", ")}` : ""}: ${problems.length ? `${problems.length} PROBLEMS` : "ok"}, ` +
        `${leftovers.length} left and named${repairs ? `, ${repairs} snapshot${repairs > 1 ? "s" : ""} Pulumi could not read repaired` : ""}` +
        `${restores ? ", the checkpoint restored from its .bak" : ""}, ${result.seconds.toFixed(1)} s`);
    for (const p of problems) ctx.say(`    ${p}`);
    unwatch();
    if (problems.length) for (const line of timeline) ctx.say(`    | ${line}`);
    if (problems.length) {
        // What every command printed, and the crash journal's files, for the person replaying it.
        // In PULUMI_HOME, and beside the state (the sandbox's file:// backend).
        const files = [path.join(sb.dir, "home", "plugins-state"), path.join(sb.dir, "state", ".pulumi", "plugins-state")]
            .flatMap((journal) => fs.existsSync(journal) ? fs.readdirSync(journal, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()) : []);
        const file = path.join(os.tmpdir(), `campaign-transcript-${label}-${Date.now()}.txt`);
        fs.writeFileSync(file, [...sb.transcript, ...files.map((e) => `--- ${e.name}\n${fs.readFileSync(path.join(e.parentPath, e.name), "utf8")}`)].join("\n"));
        ctx.say(`    transcript: ${file}`);
    }
    return result;
}

/** What a failed command said: from its first error or panic line (a stack trace after it is long), else its last lines. */
function failure(res: RunResult): string {
    const text = res.stdout + res.stderr;
    const at = text.search(/^\s*(panic|error): /m);
    return at >= 0 ? text.slice(at, at + 1500) : text.slice(-600);
}

/** The children of `pid` whose command line mentions `text`, each with its start time. */
function childrenOf(pid: number, text: string): { pid: number; start: string }[] {
    return processes().filter((p) => p.ppid === pid && p.cmdline.includes(text)).map(({ pid: child, start }) => ({ pid: child, start }));
}

/** Every grant in IAM on the trial's parents, as `parent role member`. */
function iamOf(emu: Emulator, ps: Parents): Set<string> {
    const out = new Set<string>();
    for (const which of ["service", "consumer", "policyConsumer"] as const) {
        for (const g of listGrants(emu.getPolicy(parentName(ps, which)))) out.add(`${parentName(ps, which)} ${g}`);
    }
    return out;
}

/** `parent role member` with the parent as its kind (`service`, `consumer`, `policyConsumer`): a trace names no project. */
function kindOf(ps: Parents, grant: string): string {
    const [parent, ...rest] = grant.split(" ");
    const kind = (["service", "consumer", "policyConsumer"] as const).find((w) => parentName(ps, w) === parent);
    return `${kind ?? parent} ${rest.join(" ")}`;
}

/** The writer a journal file's first line (its `hello`) names; undefined if that line is torn. */
function writerOf(text: string): { id: string; pid: number; start?: string } | undefined {
    try {
        return (JSON.parse(text.split("\n", 1)[0]) as { writer?: { id: string; pid: number; start?: string } }).writer;
    } catch {
        return undefined;
    }
}

/**
 * The crash journal of the stack whose URNs start with `prefix`, as the plugin left it in the file backend's folder
 * (BACKEND_PREFIX): each `.jsonl` file's name and text, of the one stack folder that mentions that prefix.
 */
function journalOf(sb: PulumiSandbox, prefix: string): Record<string, string> {
    const root = path.join(sb.dir, "state", BACKEND_PREFIX, "stacks");
    const out: Record<string, string> = {};
    for (const key of fs.existsSync(root) ? fs.readdirSync(root) : []) {
        const folder = path.join(root, key);
        const files = fs.readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
        const texts = files.map((f) => { try { return fs.readFileSync(path.join(folder, f), "utf8"); } catch { return ""; } });
        if (!texts.some((t) => t.includes(prefix))) continue;
        files.forEach((f, i) => (out[f] = texts[i]));
    }
    return out;
}

/** Whether two Members of a program declare one grant. */
function sharesGrant(p: Program): boolean {
    const grants = p.resources.filter((x) => x.kind === "member").map((x) => `${x.parent} ${x.members[0]}`);
    return new Set(grants).size < grants.length;
}

/** The crash journal's notes in what a command printed: each grant, its parent, and whether it was added or removed. */
const notesOf = reportNotesIn;

/** Every grant the stack's state holds (`pulumi stack export`), as `parent role member`. */
function heldByState(exported: RunResult): Set<string> {
    const out = new Set<string>();
    if (exported.code !== 0) return out;
    type State = { type: string; outputs?: Record<string, unknown>; delete?: boolean };
    const resources = (JSON.parse(exported.stdout) as { deployment?: { resources?: State[] } }).deployment?.resources ?? [];
    for (const res of resources) {
        const o = res.outputs ?? {};
        if (!res.type.startsWith("cloud:endpoints/") || typeof o.serviceName !== "string") continue;
        const parent = `services/${o.serviceName}${typeof o.consumerProject === "string" ? `/consumers/${o.consumerProject}` : ""}`;
        if (typeof o.member === "string") out.add(`${parent} ${String(o.role)} ${o.member}`);
        if (Array.isArray(o.members)) for (const m of o.members) out.add(`${parent} ${String(o.role)} ${String(m)}`);
        if (typeof o.policyData === "string") {
            for (const b of (JSON.parse(o.policyData) as { bindings?: { role: string; members: string[] }[] }).bindings ?? []) {
                for (const m of b.members) out.add(`${parent} ${b.role} ${m}`);
            }
        }
    }
    return out;
}

/** The URN of a resource of the trial's program (project `label`). */
function urnOf(stack: string, label: string, res: Res): string {
    const type = `${res.parent === "service" ? "Service" : "Consumers"}Iam${res.kind === "member" ? "Member" : res.kind === "binding" ? "Binding" : "Policy"}`;
    return `urn:pulumi:${stack}::${label}::cloud:endpoints/${type[0].toLowerCase()}${type.slice(1)}:${type}::${res.name}`;
}

/** Brings `fault` down on the running `pulumi up`. */
function strike(cli: ChildProcess, fault: Fault, sb: PulumiSandbox, r: Rand): void {
    const group = -cli.pid!;
    switch (fault) {
        case "kill -9 of a plugin": {
            const pids = pidsWith(sb.pluginDirOf(""));
            if (pids.length) process.kill(pick(r, pids), "SIGKILL");
            return;
        }
        case "kill -9 of the CLI":
            cli.kill("SIGKILL");
            return;
        case "Ctrl-C once":
            process.kill(group, "SIGINT");
            return;
        case "Ctrl-C twice":
            process.kill(group, "SIGINT");
            setTimeout(() => {
                try {
                    process.kill(group, "SIGINT");
                } catch {
                    // already gone
                }
            }, 20);
            return;
    }
}
