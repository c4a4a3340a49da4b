// What `npm run bench` prints and writes, from one run's figures: the table, and the document (build/benchmarks.md,
// or BENCHMARKS.md with --write) with the run's date, commit and machine, an analysis generated from the same
// figures, and how each figure is measured. Pure functions: bench.ts measures, this module only formats.

import { REFRESH_RUNS, type Refresh, type ScalePhase, type ScaleRun, type ScaleSetting } from "./engine";

/** The Go peer's figure (from the issue): the Terraform google-beta provider prints its handshake 63 ms after spawn. */
const GO_PEER_MS = 63;
/** Issue 19: `npm run dist` of every platform within this many seconds on this 2-core machine. */
const DIST_GOAL_S = 180;
/**
 * The nearest published size found of Pulumi GCP's linux-amd64 plugin tarball (a Go provider), for scale: no
 * figure for v8.38.0 (`pulumi-resource-gcp-v8.38.0-linux-amd64.tar.gz`), or any v8.x, was found in the sources
 * searched (GitHub issues, code and web pages). The figure is v6.52.0's: `pulumi up` on WSL2 (linux/amd64)
 * printing "Downloading plugin: 47.96 MiB / 47.96 MiB … [resource plugin gcp-6.52.0] installing", in the Future
 * tech blog post "Pulumiで始めるIaC入門" (2023-04-26, github.com/future-architect/tech-blog, post 20230426a).
 */
const GCP_TARBALL = { version: "6.52.0", bytes: 47.96 * 2 ** 20, source: "Future tech blog, \"Pulumiで始めるIaC入門\", 2023-04-26 (a `pulumi up` log: 47.96 MiB)" };
/**
 * Memory (issue 43, restating issue 19's 80 MB): the plugin's own (anonymous) RSS after 12,000 lookups (warm-up and the
 * rest) at most this; the whole RSS, its file's mapped pages included, under the Go peer's (GO_PEER_RSS_MIB).
 */
const ANON_GOAL_MB = 50;
/** `pulumi up` at the slow latency over its floor (EngineRatio.floorMs). */
const ENGINE_FLOOR_GOAL = 1.1;
const ENGINE_CALLS_GOAL = 30;
/**
 * Invoke throughput through the plugin, called by the engine's own grpc-go client, over the googleapis client's
 * (issue 30, restated by issue 43: the engine is the plugin's one client, so its client is the one judged).
 */
const GOOGLEAPIS_GOAL = 1.5;
/** Wall time of a run under the API's rate quota over its quota floor (calls ÷ the quota per minute). */
const QUOTA_FLOOR_GOAL = 1.2;
/** Engine at scale (issue 35): calls per command ≤ this × ⌈N / parallelism⌉ on one policy, and the quota's run ≤ SCALE_QUOTA_GOAL × the run without it. */
const SCALE_CALLS_GOAL = 1.5;
const SCALE_QUOTA_GOAL = 1.1;
/** Issue 43: a refresh, `preview --refresh` or `up --refresh` of N Members on K policies costs ≤ this × K getIamPolicy calls. */
const REFRESH_READS_GOAL = 2;
/** The plugin's CPU per resource from the smallest stack to the largest, at most this much growth; peak RSS under the Go peer's. */
const SCALE_CPU_GROWTH_GOAL = 1.5;
/** The Go peer's (Pulumi GCP's plugin) RSS, from issue 35: what the plugin's whole RSS is judged against. */
const GO_PEER_RSS_MIB = 127;
/** Issue 51: RSS after one Read of each of 1,000 policies of 1,000 members, at most this above the plugin's start. */
const READS_RSS_GOAL_MIB = 40;

export interface Row {
    figure: string;
    value: string;
    ratio: string;
    goal: string;
    met?: boolean;
}

/** A figure that could not be measured, and why. */
export interface Missing {
    missing: string;
}

/** Medians of spawn → first line of stdout, in ms. */
export interface StartFigures {
    reps: number;
    /** The self-contained linux-amd64 executable (Node with the plugin injected), with the bench's environment. */
    executable: number;
    /** The same with an empty environment (`env -i`), as a user without Node runs it. */
    executableBare: number;
    /** The folder packaging's `#!/bin/sh` launcher: today's Node-on-PATH launcher, with its user code cache. */
    launcher: number;
    /** The Node version the executable embeds, and the `node` on PATH the launcher ran (without the "v"). */
    embeddedNode: string;
    pathNode: string;
    /** bin/pulumi-resource-cloud, running the compiled build/ tree. */
    dev: number;
    /** `node` printing a line. */
    node: number;
    /** The executable's own Node (the same binary, without the plugin) with an empty environment (`env -i`): the floor the executable's `env -i` start is judged by. */
    nodeBare?: number;
    /**
     * A bare @grpc/grpc-js server bundled into one file as the plugin is, on the executable's Node with an empty
     * environment and Node's compile cache: the least any plugin serving gRPC with @grpc/grpc-js can take.
     */
    grpcJsBare?: number;
    /** The same with NODE_EXTRA_CA_CERTS unset, when the environment sets it. */
    nodeNoCa?: number;
    /** A bare @grpc/grpc-js server. */
    grpcJs: number;
    /** A toy provider on the stock @pulumi/pulumi provider.main. */
    stock: number;
    /** A bare grpc-go server. */
    go: number | Missing;
}

export interface MemoryFigures {
    warmup: number;
    invokes: number;
    /** RSS of the self-contained executable, MB. */
    idleMb: number;
    warmMb: number;
    afterMb: number;
    /** Idle RSS of today's launcher (the folder packaging on the `node` on PATH), MB. */
    launcherIdleMb: number;
    /** Idle RSS of the dev launcher, MB. */
    devIdleMb: number;
    /**
     * The anonymous part of the executable's three figures, MB: the plugin's own memory. The rest is the
     * executable's pages mapped from the page cache (shared with it, and given back under memory pressure).
     */
    anon?: { idleMb: number; warmMb: number; afterMb: number };
    /** The executable's RSS and its anonymous part, MB, `seconds` after the last invoke, left idle. */
    settled?: { seconds: number; mb: number; anonMb: number };
    /** The executable's Node alone, idle (an empty timer loop, `env -i`): RSS and its anonymous part, MB. */
    nodeIdle?: { mb: number; anonMb: number };
}

/** One client's invoke figures (medians over the repetitions); CPU per call in ms. */
export interface ClientFigures {
    rps: number;
    p50: number;
    p99: number;
    cpuClient: number;
    cpuEmulator: number;
    /** CPU of the plugin, when the calls go through it. */
    cpuPlugin?: number;
}

export interface InvokeFigures {
    invokes: number;
    reps: number;
    concurrency: number;
    plugin: ClientFigures;
    raw: ClientFigures;
    googleapis: ClientFigures;
    /** The plugin called by the engine's grpc-go client (invoke-load). */
    go: ClientFigures | Missing;
    coalesce: { lookups: number; identical: number; distinct: number };
    /** The emulator's own getIamPolicy capacity, req/s. */
    capacity: number;
}

/** Every run of one latency and parallelism, in run order. */
export interface EngineLatency {
    latencyMs: number;
    /** `--parallel`; undefined: the engine's default. */
    parallel?: number;
    upMs: number[];
    destroyMs: number[];
    upCalls: number[];
    destroyCalls: number[];
}

export interface EngineFigures {
    members: number;
    reps: number;
    /** The engine's default parallelism on this machine (4 × CPUs). */
    defaultParallel: number;
    latencies: EngineLatency[];
    lookups: { count: number; upMs: number; calls: number };
}

/** One run against the emulator with Google's rate quota. */
export interface QuotaRun {
    /** What ran, e.g. "300 distinct consumer lookups, real engine (YAML, 300 fn::invoke)". */
    what: string;
    /** Undefined when the run failed before it could be timed: then nothing else of it was counted either. */
    wallMs?: number;
    /** Calls the quota counted: those the emulator answered, less its quota refusals. */
    calls?: number;
    /** 429s the emulator answered for the quota. */
    refusals?: number;
    /** Lookups, or operations, that did not succeed. */
    failures: number;
    /** The first failure's message. */
    failure?: string;
}

export interface QuotaFigures {
    /** The emulator's quota, calls per rolling minute (Google's: 120). */
    perMinute: number;
    /** The ServiceIamMembers of the engine's up / destroy runs. */
    members: number;
    runs: QuotaRun[];
    /** Why the engine's up / destroy runs are not there, when they are not. */
    engineMissing?: string;
}

/** The release build (`npm run dist`, every platform), run twice. */
export interface DistFigures {
    /** Wall time of the first and the second run, ms. */
    firstMs: number;
    secondMs: number;
    /** Whether the two runs' SHA256SUMS are identical. */
    reproducible: boolean;
    /** The tarballs whose checksums differ between the runs. */
    differing: string[];
    /** The first run's tarballs. */
    tarballs: { platform: string; packaging: "self-contained" | "folder"; bytes: number }[];
}

/** Engine at scale: up, a no-change preview and destroy of hundreds to thousands of Members (bench/engine.ts scaleRuns). */
export interface ScaleFigures {
    /** The engine's default parallelism on this machine (4 × CPUs): ⌈N / parallelism⌉ writes is the floor of any batching. */
    defaultParallel: number;
    runs: ScaleRun[];
    /** The settings whose commands failed, each with its first error line. */
    failed: string[];
}

/** Resource Reads of many policies, one Read each (issue 51): the plugin's memory as Reads of policies come and go. */
export interface ReadsFigures {
    policies: number;
    /** Members in each policy. */
    members: number;
    /** Reads sent at once (the engine's default parallelism). */
    parallel: number;
    /** The dev launcher's RSS after Configure, after the Reads and its peak over them (`VmHWM`), MiB. */
    startMiB: number;
    endMiB: number;
    peakMiB: number;
    /** getIamPolicy calls the emulator answered, the plugin's CPU and the wall time over the Reads. */
    calls: number;
    cpuMs: number;
    wallMs: number;
    /** Reads that did not find their Member. */
    notFound: number;
}

export interface Results {
    start?: StartFigures;
    memory?: MemoryFigures;
    reads?: ReadsFigures;
    invoke?: InvokeFigures;
    engine?: EngineFigures | Missing;
    quota?: QuotaFigures | Missing;
    dist?: DistFigures | Missing;
    scale?: ScaleFigures | Missing;
    journal?: JournalFigures | Missing;
}

/** `pulumi up` / `destroy` of many Members on one policy, the crash journal in a bucket (at a latency) and on local disk. */
export interface JournalFigures {
    members: number;
    apiLatencyMs: number;
    bucketLatencyMs: number;
    local: { upMs: number[]; destroyMs: number[] };
    bucket: { upMs: number[]; destroyMs: number[] };
}

/** The issue's goal: the journal in a bucket costs an up or destroy at most a tenth more than on local disk. */
export const JOURNAL_GOAL = 1.1;

export const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const isMissing = <T extends object>(x: T | Missing): x is Missing => "missing" in x;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mb = (x: number) => `${x.toFixed(1)} MB`;
const sec = (x: number) => `${(x / 1000).toFixed(1)} s`;
const mib = (x: number) => `${x.toFixed(1)} MiB`;
const readsMet = (x: ReadsFigures) => x.notFound === 0 && x.endMiB - x.startMiB <= READS_RSS_GOAL_MIB;
const times = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const signed = (pct: number) => `${pct >= 0 ? "+" : ""}${pct.toFixed(1)}%`;
const span = (xs: number[]) => (Math.min(...xs) === Math.max(...xs) ? String(xs[0]) : `${Math.min(...xs)}–${Math.max(...xs)}`);
const metWord = (met: boolean) => (met ? "met" : "not met");

const growthPct = (m: MemoryFigures) => (m.afterMb / m.warmMb - 1) * 100;

/**
 * The start goal (issue 43, restating issues 19 and 31): the executable, with the bench's environment and with an empty
 * one, no slower than the grpc-js floor of the same run — a bare @grpc/grpc-js server bundled into one file and run
 * by the executable's own Node (StartFigures.grpcJsBare), the least any plugin built on @grpc/grpc-js pays.
 */
const START_GOAL = "≤ the grpc-js floor measured in this run (issue 43)";
const startMet = (s: StartFigures, x: number) => s.grpcJsBare !== undefined && x <= s.grpcJsBare;
/** The memory goal (ANON_GOAL_MB, GO_PEER_RSS_MIB) of one figure: whole RSS and, when measured, its anonymous part. */
const MEMORY_GOAL = `anonymous ≤ ${ANON_GOAL_MB} MB, RSS < the Go peer's ${GO_PEER_RSS_MIB} MiB (issue 43)`;
const memoryMet = (rssMb: number, anonMb: number | undefined) => rssMb < (GO_PEER_RSS_MIB * 2 ** 20) / 1e6 && anonMb !== undefined && anonMb <= ANON_GOAL_MB;
/** Bytes in MB (10^6 bytes, as `npm run dist` reports them). */
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** The invoke goal (GOOGLEAPIS_GOAL), through the engine's grpc-go client; the raw-HTTP ratio is reported only. */
const googleapisMet = (v: InvokeFigures) => !isMissing(v.go) && v.go.rps >= GOOGLEAPIS_GOAL * v.googleapis.rps;

/** A run that was timed, with what it cost. */
type TimedRun = QuotaRun & Required<Pick<QuotaRun, "wallMs" | "calls" | "refusals">>;
const timed = (run: QuotaRun): run is TimedRun => run.wallMs !== undefined && run.calls !== undefined && run.refusals !== undefined;
/** The least time `run.calls` can take under the quota, in ms: calls ÷ the quota per minute. */
const quotaFloorMs = (q: QuotaFigures, run: TimedRun) => (run.calls / q.perMinute) * 60_000;
/**
 * Whether the floor bounds the run: calls within one minute's quota are all admitted at once, so such a run
 * owes the quota nothing and its floor is no bound on it.
 */
const quotaBinds = (q: QuotaFigures, run: TimedRun) => run.calls > q.perMinute;
/** A run's goal: no failures, and where the floor binds, wall time ≤ QUOTA_FLOOR_GOAL × the floor. */
const quotaMet = (q: QuotaFigures, run: QuotaRun) =>
    run.failures === 0 && timed(run) && (!quotaBinds(q, run) || run.wallMs <= QUOTA_FLOOR_GOAL * quotaFloorMs(q, run));
const failedWords = (run: QuotaRun) => `${run.failures} failed` + (run.failure ? ` (first: ${run.failure})` : "");

interface EngineRatio {
    slow: EngineLatency;
    fast: EngineLatency;
    /** The parallelism in effect. */
    parallel: number;
    ratio: number;
    /**
     * The least `up` can take at the slow latency: each Create holds one of the engine's `parallel` slots until
     * its write is answered, so ⌈members / parallel⌉ writes come one after another, each a full API latency,
     * on top of what the 0 ms run took.
     */
    floorMs: number;
}

/** Median `pulumi up` at the slow latency over the least it can take (EngineRatio.floorMs). */
const floorRatio = (er: EngineRatio) => median(er.slow.upMs) / er.floorMs;

/** The up ratio at one parallelism (undefined: the default): median wall time at the highest latency over 0 ms. */
function engineRatio(e: EngineFigures, parallel?: number): EngineRatio | undefined {
    const at = e.latencies.filter((l) => l.parallel === parallel);
    const fast = at.find((l) => l.latencyMs === 0);
    const slow = [...at].sort((a, b) => b.latencyMs - a.latencyMs)[0];
    if (!fast || !slow || slow === fast) return undefined;
    const p = parallel ?? e.defaultParallel;
    return { fast, slow, parallel: p, ratio: median(slow.upMs) / median(fast.upMs), floorMs: median(fast.upMs) + Math.ceil(e.members / p) * slow.latencyMs };
}

/** The parallelism settings measured, the default first. */
const parallelisms = (e: EngineFigures) => [...new Set(e.latencies.map((l) => l.parallel))];
const parallelWords = (e: EngineFigures, parallel: number | undefined) =>
    parallel === undefined ? `the engine's default parallelism (${e.defaultParallel})` : `--parallel ${parallel}`;

const scaleWords = (x: ScaleSetting) => `${x.members} Members over ${x.services === 1 ? "one policy" : `${x.services} policies`}, ` +
    `${x.latencyMs} ms latency${x.quotaPerMinute ? `, quota ${x.quotaPerMinute}/min` : ""}${x.skipCheckpoints ? ", PULUMI_SKIP_CHECKPOINTS=true (the engine's own pace)" : ""}`;

/** The table's rows, from the figures. */
export function rowsFor(r: Results): Row[] {
    const rows: Row[] = [];
    if (r.start) {
        const s = r.start;
        const go = typeof s.go === "number" ? s.go : undefined;
        const vsGoPeer = (x: number) => `${times(x, GO_PEER_MS)} the Go peer's ${GO_PEER_MS} ms`;
        rows.push({
            figure: `start: self-contained executable (linux-amd64, Node ${s.embeddedNode} inside), spawn → port`,
            value: ms(s.executable),
            ratio: `${s.grpcJsBare !== undefined ? `${times(s.executable, s.grpcJsBare)} the grpc-js floor, ` : ""}${times(s.executable, s.launcher)} today's launcher, ${vsGoPeer(s.executable)}`,
            ...(s.grpcJsBare !== undefined ? { goal: START_GOAL, met: startMet(s, s.executable) } : { goal: "" }),
        });
        rows.push({ figure: "start: self-contained executable, empty environment (`env -i`: a user without Node)", value: ms(s.executableBare),
            ratio: `${s.nodeBare !== undefined ? `${times(s.executableBare, s.nodeBare)} the Node floor in an empty environment, ` : ""}${times(s.executableBare, s.launcher)} today's launcher, ${times(s.executableBare, s.executable)} with the environment`,
            ...(s.grpcJsBare !== undefined ? { goal: START_GOAL, met: startMet(s, s.executableBare) } : { goal: "" }) });
        rows.push({ figure: `start: today's Node-on-PATH launcher (folder packaging, \`node\` ${s.pathNode} from PATH, its user code cache written), spawn → port`,
            value: ms(s.launcher), ratio: vsGoPeer(s.launcher), goal: "" });
        if (go !== undefined) rows.push({ figure: "start: bare grpc-go server (Go floor)", value: ms(go), ratio: "1.00×", goal: "" });
        rows.push({ figure: "start: node printing a line (Node floor)", value: ms(s.node), ratio: go === undefined ? "1.00×" : `${times(s.node, go)} Go floor`, goal: "" });
        if (s.nodeBare !== undefined) {
            rows.push({ figure: `start: the executable's Node ${s.embeddedNode} printing a line, empty environment (\`env -i\`; Node floor of the executable's \`env -i\` start)`, value: ms(s.nodeBare),
                ratio: `${times(s.nodeBare, s.node)} node floor`, goal: "" });
        }
        if (s.nodeNoCa !== undefined) {
            rows.push({ figure: "start: node printing a line, NODE_EXTRA_CA_CERTS unset (reference)", value: ms(s.nodeNoCa), ratio: `${times(s.nodeNoCa, s.node)} node floor`, goal: "" });
        }
        rows.push({ figure: "start: bare @grpc/grpc-js server (floor)", value: ms(s.grpcJs), ratio: `${times(s.grpcJs, s.node)} node floor`, goal: "" });
        if (s.grpcJsBare !== undefined) {
            rows.push({ figure: `start: bare @grpc/grpc-js server bundled into one file, on the executable's Node ${s.embeddedNode}, empty environment, Node's compile cache (the grpc-js floor)`,
                value: ms(s.grpcJsBare), ratio: `${s.nodeBare !== undefined ? `${times(s.grpcJsBare, s.nodeBare)} the Node floor in an empty environment; ` : ""}the executable takes ${times(s.executableBare, s.grpcJsBare)} it`, goal: "" });
        }
        rows.push({ figure: "start: toy provider on stock provider.main (peer)", value: ms(s.stock), ratio: `${times(s.stock, s.node)} node floor`, goal: "" });
        rows.push({ figure: "start: dev launcher bin/pulumi-resource-cloud (build/ tree, not installed), spawn → port", value: ms(s.dev),
            ratio: `${times(s.dev, s.executable)} the executable`, goal: "" });
    }
    if (r.memory) {
        const m = r.memory;
        const growth = growthPct(m);
        const anon = (x: number | undefined) => (x === undefined ? "" : ` (anonymous ${mb(x)})`);
        rows.push({ figure: "memory: RSS idle after Configure (self-contained executable)", value: mb(m.idleMb) + anon(m.anon?.idleMb), ratio: "", goal: "" });
        rows.push({ figure: `memory: RSS after ${m.warmup} warm-up invokes (libraries loaded, code optimized)`, value: mb(m.warmMb) + anon(m.anon?.warmMb), ratio: "", goal: "" });
        // The goal is judged after every lookup made: the warm-up's and the rest.
        rows.push({ figure: `memory: RSS after ${m.invokes} more invokes (${m.warmup + m.invokes} in all)`, value: mb(m.afterMb) + anon(m.anon?.afterMb),
            ratio: `${signed(growth)} vs warm, ${signed((m.afterMb / m.idleMb - 1) * 100)} vs idle`,
            goal: MEMORY_GOAL, met: memoryMet(m.afterMb, m.anon?.afterMb) });
        rows.push({ figure: "memory: RSS idle after Configure (today's Node-on-PATH launcher)", value: mb(m.launcherIdleMb),
            ratio: `${times(m.launcherIdleMb, m.idleMb)} the executable`, goal: "" });
        rows.push({ figure: "memory: RSS idle after Configure (dev launcher)", value: mb(m.devIdleMb), ratio: `${times(m.devIdleMb, m.idleMb)} the executable`, goal: "" });
        if (m.settled) {
            rows.push({ figure: `memory: RSS ${m.settled.seconds} s after the last invoke, idle (V8 shrinks its heap on its own timers)`, value: mb(m.settled.mb) + anon(m.settled.anonMb),
                ratio: `${signed((m.settled.mb / m.afterMb - 1) * 100)} vs the end of the invokes`, goal: "" });
        }
        if (m.nodeIdle) {
            rows.push({ figure: "memory: RSS of the executable's Node alone, idle (`env -i`, an empty timer loop: the Node floor)", value: mb(m.nodeIdle.mb) + anon(m.nodeIdle.anonMb),
                ratio: `the executable idle: ${times(m.idleMb, m.nodeIdle.mb)} it`, goal: "" });
        }
    }
    if (r.reads) {
        const x = r.reads;
        rows.push({ figure: `reads: RSS after one Read (a refresh) of each of ${x.policies} consumer policies of ${x.members} members, ${x.parallel} at once (dev launcher)`,
            value: `+${mib(x.endMiB - x.startMiB)} (${mib(x.startMiB)} → ${mib(x.endMiB)}; peak ${mib(x.peakMiB)})`,
            ratio: `${x.calls} getIamPolicy; plugin ${(x.cpuMs / 1000).toFixed(1)} CPU s over ${sec(x.wallMs)}${x.notFound ? `; ${x.notFound} Members not found` : ""}`,
            goal: `≤ ${READS_RSS_GOAL_MIB} MiB above the start, every Member found (issue 51)`, met: readsMet(x) });
    }
    if (r.invoke) {
        const v = r.invoke;
        const fmt = (c: ClientFigures) => `${c.rps.toFixed(0)} req/s, p50 ${c.p50.toFixed(1)} ms, p99 ${c.p99.toFixed(1)} ms; CPU per call: ` +
            `${c.cpuPlugin === undefined ? "" : `plugin ${c.cpuPlugin.toFixed(2)} ms, `}client ${c.cpuClient.toFixed(2)} ms, emulator ${c.cpuEmulator.toFixed(2)} ms`;
        rows.push({ figure: "invoke: plugin over gRPC", value: fmt(v.plugin), ratio: `${times(v.plugin.rps, v.raw.rps)} raw, ${times(v.plugin.rps, v.googleapis.rps)} googleapis`,
            goal: "(a JavaScript client: reported; the engine's client is judged)" });
        rows.push({ figure: "invoke: raw keep-alive HTTP (floor)", value: fmt(v.raw), ratio: "1.00×", goal: "" });
        if (!isMissing(v.go)) {
            rows.push({ figure: "invoke: plugin, called by the engine's grpc-go client", value: fmt(v.go),
                ratio: `${times(v.go.rps, v.raw.rps)} raw, ${times(v.go.rps, v.googleapis.rps)} googleapis`,
                goal: `≥ ${GOOGLEAPIS_GOAL}× googleapis (issue 43; the raw ratio is reported, not judged)`, met: googleapisMet(v) });
        }
        rows.push({ figure: "invoke: googleapis servicemanagement (peer)", value: fmt(v.googleapis), ratio: `${times(v.googleapis.rps, v.raw.rps)} raw`, goal: "" });
        const c = v.coalesce;
        rows.push({ figure: `coalescing: ${c.lookups} identical concurrent lookups`, value: `${c.identical} upstream`, ratio: "", goal: "1", met: c.identical === 1 });
        rows.push({ figure: `coalescing: ${c.lookups} distinct concurrent lookups`, value: `${c.distinct} upstream`, ratio: "", goal: String(c.lookups), met: c.distinct === c.lookups });
        rows.push({ figure: "emulator: getIamPolicy capacity", value: `${v.capacity.toFixed(0)} req/s`, ratio: `${(v.capacity / v.plugin.rps).toFixed(1)}× plugin`,
            goal: "≥ 5000 req/s", met: v.capacity >= 5000 });
    }
    if (r.engine) {
        const e = r.engine;
        if (isMissing(e)) {
            rows.push({ figure: "engine: pulumi up / destroy of 100 ServiceIamMembers", value: "skipped", ratio: e.missing, goal: "" });
        } else {
            const value = (xs: number[]) => `${sec(median(xs))} (${(Math.min(...xs) / 1000).toFixed(1)}–${sec(Math.max(...xs))})`;
            for (const l of e.latencies) {
                const what = `${e.members} ServiceIamMembers, ${l.latencyMs} ms API latency, ${parallelWords(e, l.parallel)}, median of ${l.upMs.length}`;
                rows.push({ figure: `engine: pulumi up, ${what}`, value: value(l.upMs), ratio: `${span(l.upCalls)} API calls`,
                    goal: `≤ ${ENGINE_CALLS_GOAL} calls`, met: Math.max(...l.upCalls) <= ENGINE_CALLS_GOAL });
                rows.push({ figure: `engine: pulumi destroy, ${what}`, value: value(l.destroyMs), ratio: `${span(l.destroyCalls)} API calls`,
                    goal: `≤ ${ENGINE_CALLS_GOAL} calls`, met: Math.max(...l.destroyCalls) <= ENGINE_CALLS_GOAL });
            }
            for (const parallel of parallelisms(e)) {
                const er = engineRatio(e, parallel);
                if (!er) continue;
                const at = parallelWords(e, parallel);
                // Reported only: the latency's cost is set by the engine's parallelism, which the floor below accounts for.
                rows.push({ figure: `engine: pulumi up at ${er.slow.latencyMs} ms latency vs 0 ms, ${at} (medians)`, value: `${er.ratio.toFixed(2)}×`, ratio: "", goal: "" });
                rows.push({ figure: `engine: least pulumi up can take at ${er.slow.latencyMs} ms, ${at}: the 0 ms run + ⌈${e.members}/${er.parallel}⌉ writes in a row`,
                    value: sec(er.floorMs), ratio: `measured ${times(median(er.slow.upMs), er.floorMs)} this; ${times(er.floorMs, median(er.fast.upMs))} the 0 ms run`,
                    goal: `up at ${er.slow.latencyMs} ms ≤ ${ENGINE_FLOOR_GOAL}× this`, met: floorRatio(er) <= ENGINE_FLOOR_GOAL });
            }
            rows.push({ figure: `engine: ${e.lookups.count} distinct consumer lookups, TypeScript program (Automation API up)`,
                value: sec(e.lookups.upMs), ratio: `${e.lookups.calls} API calls`, goal: "" });
        }
    }
    if (r.journal) {
        const j = r.journal;
        if ("missing" in j) {
            rows.push({ figure: "journal: pulumi up / destroy of 1,000 ServiceIamMembers on one policy, crash journal in gs:// vs local disk", value: "skipped", ratio: j.missing, goal: "" });
        } else {
            for (const op of ["up", "destroy"] as const) {
                const there = median(j.bucket[`${op}Ms`]);
                const here = median(j.local[`${op}Ms`]);
                rows.push({
                    figure: `journal: pulumi ${op} of ${j.members.toLocaleString("en-US")} ServiceIamMembers on one policy (API ${j.apiLatencyMs} ms), ` +
                        `crash journal in gs:// (${j.bucketLatencyMs} ms a request) vs local disk (medians of ${j.bucket[`${op}Ms`].length})`,
                    value: ms(there), ratio: `${(there / here).toFixed(2)}× local disk's ${ms(here)}`, goal: `≤ ${JOURNAL_GOAL}×`, met: there / here <= JOURNAL_GOAL,
                });
            }
        }
    }
    if (r.quota) {
        const q = r.quota;
        if (isMissing(q)) {
            rows.push({ figure: "quota: runs under Google's rate quota", value: "not measured", ratio: q.missing, goal: "" });
        } else {
            for (const run of q.runs) {
                const figure = `quota (${q.perMinute} calls/min): ${run.what}`;
                const failed = failedWords({ ...run, failure: run.failure?.replace(/\|/g, "\\|") });
                if (!timed(run)) {
                    rows.push({ figure, value: `not timed, ${failed}`, ratio: "", goal: "0 failed", met: quotaMet(q, run) });
                    continue;
                }
                const floor = quotaFloorMs(q, run);
                rows.push({
                    figure,
                    value: `${sec(run.wallMs)}; ${run.calls} API calls, ${run.refusals} answered 429 for quota, ${failed}`,
                    ratio: quotaBinds(q, run)
                        ? `${times(run.wallMs, floor)} the quota floor (${sec(floor)} = ${run.calls} calls ÷ ${q.perMinute}/min)`
                        : `${times(run.wallMs, floor)} the quota floor (${sec(floor)}); the calls fit in one minute's quota, so the floor is not a bound`,
                    goal: quotaBinds(q, run) ? `0 failed, ≤ ${QUOTA_FLOOR_GOAL}× the floor` : "0 failed (the floor is not a bound)",
                    met: quotaMet(q, run),
                });
            }
            if (q.engineMissing !== undefined) {
                rows.push({ figure: `quota (${q.perMinute} calls/min): pulumi up / destroy of ${q.members} ServiceIamMembers`, value: "skipped", ratio: q.engineMissing, goal: "" });
            }
        }
    }
    if (r.dist) {
        const d = r.dist;
        if (isMissing(d)) {
            rows.push({ figure: "dist: npm run dist, every platform", value: "not measured", ratio: d.missing, goal: "" });
        } else {
            rows.push({ figure: `dist: npm run dist, every platform (${d.tarballs.length} tarballs and SHA256SUMS), first run`, value: sec(d.firstMs),
                ratio: `second run ${sec(d.secondMs)}`, goal: `≤ ${DIST_GOAL_S} s (this 2-core machine)`, met: d.firstMs <= DIST_GOAL_S * 1000 });
            rows.push({ figure: "dist: the two runs' SHA256SUMS", value: d.reproducible ? "identical" : `differ (${d.differing.join(", ") || "in their lines"})`,
                ratio: "", goal: "identical (reproducible)", met: d.reproducible });
            for (const t of d.tarballs) {
                rows.push({ figure: `dist: tarball ${t.platform} (${t.packaging === "self-contained" ? "self-contained executable" : "folder for the node on PATH"})`,
                    value: megabytes(t.bytes), ratio: `${times(t.bytes, GCP_TARBALL.bytes)} Pulumi GCP's linux-amd64 tarball`, goal: "" });
            }
            rows.push({ figure: `dist: Pulumi GCP's linux-amd64 plugin tarball, a Go provider (published size, v${GCP_TARBALL.version}: no v8.x figure found)`,
                value: megabytes(GCP_TARBALL.bytes), ratio: GCP_TARBALL.source, goal: "" });
        }
    }
    if (r.scale) {
        const sc = r.scale;
        if (isMissing(sc)) rows.push({ figure: "scale: pulumi up / preview / destroy of 250 to 2,000 Members", value: "skipped", ratio: sc.missing, goal: "" });
        else {
            const phaseRow = (op: string, run: ScaleRun, ph: ScalePhase, goal: string, met?: boolean): Row => ({
                figure: `scale: pulumi ${op}, ${scaleWords(run)}`,
                value: `${sec(ph.ms)}; ${ph.calls} API calls${ph.refusals ? ` (${ph.refusals} answered 429)` : ""}`,
                ratio: `plugin ${ph.cpuS.toFixed(1)} CPU s (${((ph.cpuS / run.members) * 1000).toFixed(2)} ms per Member), peak RSS ${ph.peakRssMiB.toFixed(0)} MiB` +
                    (ph.failures ? `; ${ph.failures} grants wrong` : ""),
                goal,
                ...(met === undefined ? {} : { met: met && ph.failures === 0 }),
            });
            for (const run of sc.runs) {
                for (const op of ["up", "preview", "destroy"] as const) {
                    const ph = run[op];
                    const floor = Math.ceil(run.members / sc.defaultParallel);
                    const judged = op !== "preview" && run.services === 1 && !run.skipCheckpoints;
                    rows.push(phaseRow(op, run, ph, judged ? `≤ ${Math.floor(SCALE_CALLS_GOAL * floor)} calls (${SCALE_CALLS_GOAL} × ⌈${run.members}/${sc.defaultParallel}⌉)` : "",
                        judged ? ph.calls <= SCALE_CALLS_GOAL * floor : undefined));
                }
                // Issue 43: a refreshing command reads each policy once per plugin process (up --refresh runs two: its
                // preview and its update), and Google's quota, which that many calls never reach, costs it no time.
                const refreshes = run.refreshes;
                if (!refreshes || run.refreshQuotaPerMinute === undefined) continue;
                const calls = REFRESH_READS_GOAL * run.services;
                for (const op of Object.keys(refreshes.without) as Refresh[]) {
                    const [free, paced] = [refreshes.without[op], refreshes.quota[op]];
                    rows.push(phaseRow(op, run, free, `≤ ${calls} calls (${REFRESH_READS_GOAL} × ${run.services} ${run.services === 1 ? "policy" : "policies"})`, free.calls <= calls));
                    // The median of the quota runs' ratios (each to the runs without it around it), where the run measured them.
                    const each = refreshes.ratios?.[op];
                    const ratio = each?.length ? [...each].sort((x, y) => x - y)[Math.floor((each.length - 1) / 2)] : paced.ms / free.ms;
                    const how = each && each.length > 1 ? `the median of ${each.length} runs' ratios to the runs around them (${each.map((x) => x.toFixed(2)).join(", ")})` : "";
                    rows.push({
                        ...phaseRow(op, { ...run, quotaPerMinute: run.refreshQuotaPerMinute }, paced,
                            `≤ ${calls} calls, ≤ ${SCALE_QUOTA_GOAL}× the wall without the quota`, paced.calls <= calls && ratio <= SCALE_QUOTA_GOAL),
                        ratio: `${ratio.toFixed(2)}× the wall without the quota${how ? `, ${how}` : ""}; ${phaseRow(op, run, paced, "").ratio}`,
                    });
                }
            }
            for (const q of sc.runs.filter((x) => x.quotaPerMinute)) {
                const without = sc.runs.find((x) => x.members === q.members && x.services === q.services && x.latencyMs === q.latencyMs && !x.quotaPerMinute && !x.skipCheckpoints);
                if (!without) continue;
                for (const op of ["up", "destroy"] as const) {
                    const ratio = q[op].ms / without[op].ms;
                    rows.push({ figure: `scale: pulumi ${op} with the quota vs without, ${scaleWords({ ...q, quotaPerMinute: undefined })}`, value: `${ratio.toFixed(2)}×`,
                        ratio: `${sec(q[op].ms)} vs ${sec(without[op].ms)}`, goal: `≤ ${SCALE_QUOTA_GOAL}×`, met: ratio <= SCALE_QUOTA_GOAL });
                }
            }
            // Per layout (one policy; spread over several), from the smallest stack to the largest.
            for (const spread of [false, true]) {
                const plain = sc.runs.filter((x) => (x.services > 1) === spread && !x.quotaPerMinute && !x.skipCheckpoints).sort((a, b) => a.members - b.members);
                if (plain.length < 2) continue;
                const [small, large] = [plain[0], plain[plain.length - 1]];
                const perMember = (x: ScaleRun) => (x.up.cpuS + x.destroy.cpuS) / x.members;
                const growth = perMember(large) / perMember(small);
                rows.push({ figure: `scale: plugin CPU per Member (up + destroy), ${large.members} vs ${small.members} Members over ${spread ? `${large.services} policies` : "one policy"}`,
                    value: `${growth.toFixed(2)}×`, ratio: `${(perMember(large) * 1000).toFixed(2)} vs ${(perMember(small) * 1000).toFixed(2)} ms`,
                    goal: `≤ ${SCALE_CPU_GROWTH_GOAL}×`, met: growth <= SCALE_CPU_GROWTH_GOAL });
            }
            for (const f of sc.failed) rows.push({ figure: "scale: a run failed", value: f, ratio: "", goal: "runs", met: false });
            const peak = Math.max(...sc.runs.flatMap((x) => [x.up, x.preview, x.destroy].map((ph) => ph.peakRssMiB)));
            rows.push({ figure: "scale: the plugin's peak RSS over every run", value: `${peak.toFixed(0)} MiB`, ratio: "",
                goal: `< the Go peer's ${GO_PEER_RSS_MIB} MiB`, met: peak < GO_PEER_RSS_MIB });
        }
    }
    return rows;
}

/**
 * The figures each section prints whenever it runs, whatever the counts: a row whose figure matches each pattern.
 * bench.ts checks its own run against this (missingFigures), so `npm run bench -- --quick` is the smoke test of
 * every section; the tests run the invoke section only (the whole `--quick` run takes half a minute).
 */
export const FIGURES: Readonly<Record<"start" | "memory" | "reads" | "invoke" | "journal", readonly RegExp[]>> = {
    journal: [/^journal: pulumi up/],
    start: [/^start: self-contained executable \(linux-amd64/, /^start: self-contained executable, empty environment/, /^start: today's Node-on-PATH launcher/,
        /^start: node printing a line \(Node floor\)/, /^start: the executable's Node .* printing a line, empty environment/, /^start: bare @grpc\/grpc-js server \(floor\)/,
        /^start: bare @grpc\/grpc-js server bundled/, /^start: toy provider/, /^start: dev launcher/],
    memory: [/^memory: RSS idle after Configure \(self-contained executable\)/, /^memory: RSS idle after Configure \(today's Node-on-PATH launcher\)/,
        /^memory: RSS idle after Configure \(dev launcher\)/, /^memory: RSS \d+ s after the last invoke/, /^memory: RSS of the executable's Node alone/],
    reads: [/^reads: RSS after one Read/],
    invoke: [/^invoke: plugin over gRPC/, /^invoke: raw keep-alive HTTP/, /^invoke: googleapis/, /^coalescing: \d+ identical/, /^coalescing: \d+ distinct/,
        /^emulator: getIamPolicy capacity/],
};

/** The figures of FIGURES that `rows` lack, for the sections that ran (as "section: pattern"). */
export function missingFigures(rows: Row[], sections: readonly string[]): string[] {
    return Object.entries(FIGURES).filter(([section]) => sections.includes(section))
        .flatMap(([section, patterns]) => patterns.filter((p) => !rows.some((r) => p.test(r.figure))).map((p) => `${section}: ${p.source}`));
}

export function table(rows: Row[]): string {
    return [
        "| figure | value | ratio | goal | met |",
        "|---|---|---|---|---|",
        ...rows.map((r) => `| ${r.figure} | ${r.value} | ${r.ratio} | ${r.goal} | ${r.met === undefined ? "" : r.met ? "yes" : "no"} |`),
    ].join("\n");
}

/** Sentences computed from the figures: which goals are met, and what the start time is made of. */
export function analysis(r: Results, rows: Row[] = rowsFor(r)): string[] {
    const out: string[] = [];
    const judged = rows.filter((row) => row.met !== undefined);
    const notMet = judged.filter((row) => row.met === false);
    out.push(`**Goals**: ${judged.length - notMet.length} of ${judged.length} met` +
        (notMet.length ? `; not met: ${notMet.map((row) => `${row.figure} — ${row.value.split(";")[0]}${row.ratio ? `, ${row.ratio}` : ""}, goal ${row.goal}`).join("; ")}.` : "."));

    if (r.start) {
        const s = r.start;
        const x = s.executable;
        const diff = (a: number, b: number, what: string) => (a <= b ? `${ms(b - a)} under ${what}` : `${ms(a - b)} over ${what}`);
        let t = `**Start**: the self-contained executable (linux-amd64, Node ${s.embeddedNode} inside) prints its port ${ms(x)} after spawn ` +
            `(median of ${s.reps}); today's Node-on-PATH launcher (the folder packaging, on \`node\` ${s.pathNode} from PATH, with its user code ` +
            `cache) ${ms(s.launcher)} in the same rounds (${diff(x, s.launcher, "the launcher")}). ` +
            (s.grpcJsBare !== undefined ? `The goal, no slower than the grpc-js floor of this run (${ms(s.grpcJsBare)}), is ${metWord(startMet(s, x))}: ` +
                `${diff(x, s.grpcJsBare, "it")}. ` : "") +
            `Started with an empty environment (\`env -i\`, as by a user without Node) it takes ${ms(s.executableBare)}. Against the Go peer's ` +
            `${GO_PEER_MS} ms the executable takes ${times(x, GO_PEER_MS)}, the launcher ${times(s.launcher, GO_PEER_MS)}`;
        t += typeof s.go === "number"
            ? `; a bare grpc-go server prints its port in ${ms(s.go)} in this run (the Go floor: the executable takes ${times(x, s.go)} it).`
            : ` (the Go floor was not measured: ${s.go.missing}).`;
        out.push(t);
        // The launcher keeps Node from loading NODE_EXTRA_CA_CERTS at start (the plugin loads it on its first TLS
        // connection), so Node's share of its start is the floor without that variable, when it is set.
        const node = s.nodeNoCa ?? s.node;
        const own = s.launcher - node;
        let split = `**Where the start time goes**: of the launcher's ${ms(s.launcher)}, ${ms(node)} (${((node / s.launcher) * 100).toFixed(0)}%) ` +
            `is Node starting and printing a line (the Node floor${s.nodeNoCa === undefined ? "" : ", as the launcher starts Node: without NODE_EXTRA_CA_CERTS"}); ` +
            `the other ${ms(own)} is the shell script and the plugin's own start (loading its bundle with its code cache, starting its gRPC server). ` +
            `The executable has no such split to measure: its Node starts inside it and reads the plugin and the code cache the build made from ` +
            `its own file, with no shell and no \`node\` looked up on PATH. For comparison, a bare @grpc/grpc-js server takes ` +
            `${ms(s.grpcJs - s.node)} over the Node floor and a toy provider on the stock provider.main ${ms(s.stock - s.node)} (both started by ` +
            "plain `node`, with the environment as it is).";
        if (s.nodeNoCa !== undefined) {
            split += ` With NODE_EXTRA_CA_CERTS as this environment sets it (and the engine passes on), \`node\` takes ${ms(s.node)}: Node reads ` +
                `that file and builds its whole certificate store before any code runs, ${ms(s.node - s.nodeNoCa)} that the launcher defers ` +
                "to the plugin's first TLS connection. The executable gets the environment as it is (nothing runs before it to change it): " +
                `with none at all it takes ${ms(s.executableBare)}, ${s.executableBare <= x ? `${ms(x - s.executableBare)} less` : `${ms(s.executableBare - x)} more`} ` +
                "than with this environment.";
        }
        out.push(split);
        if (s.grpcJsBare !== undefined && s.nodeBare !== undefined) {
            out.push(`**The grpc-js floor**: in an empty environment the executable's Node prints a line in ${ms(s.nodeBare)}. A bare ` +
                `@grpc/grpc-js server, bundled into one file as the plugin is and run by the same Node with its compile cache, takes ` +
                `${ms(s.grpcJsBare)} (${times(s.grpcJsBare, s.nodeBare)} the Node floor): what serving gRPC with @grpc/grpc-js costs before any ` +
                `provider code runs, and the start goal. The executable, which serves the provider, takes ${times(s.executableBare, s.grpcJsBare)} that floor.`);
        }
        out.push(`**Dev launcher**: \`bin/pulumi-resource-cloud\` (the compiled build/ tree) takes ${ms(s.dev)}, ` +
            `${s.dev >= x ? `${ms(s.dev - x)} more` : `${ms(x - s.dev)} less`} than the self-contained executable.`);
    }

    if (r.memory) {
        const m = r.memory;
        const growth = growthPct(m);
        const vs = (x: number) => (x >= m.idleMb ? `${mb(x - m.idleMb)} more` : `${mb(m.idleMb - x)} less`);
        out.push(`**Memory** (self-contained executable): ${mb(m.idleMb)} idle after Configure, ${mb(m.warmMb)} after ${m.warmup} warm-up invokes, ` +
            `${mb(m.afterMb)} after ${m.invokes} more (${signed(growth)} from warm). The goal after ${m.warmup + m.invokes} lookups (${MEMORY_GOAL}) is ` +
            `${metWord(memoryMet(m.afterMb, m.anon?.afterMb))}. Idle after Configure, today's Node-on-PATH launcher takes ` +
            `${mb(m.launcherIdleMb)} (${vs(m.launcherIdleMb)} than the executable) and the dev launcher ${mb(m.devIdleMb)} (${vs(m.devIdleMb)}).` +
            (m.anon ? ` Of the executable's RSS, ${mb(m.anon.idleMb)} idle and ${mb(m.anon.afterMb)} at the end is its own (anonymous) memory; the rest ` +
                `(${mb(m.idleMb - m.anon.idleMb)} to ${mb(m.afterMb - m.anon.afterMb)}) is its file's pages mapped from the page cache.` : "") +
            (m.settled ? ` Left idle, ${m.settled.seconds} s after its last invoke it holds ${mb(m.settled.mb)} (anonymous ${mb(m.settled.anonMb)}).` : "") +
            (m.nodeIdle ? ` The executable's Node alone, idle, holds ${mb(m.nodeIdle.mb)} (anonymous ${mb(m.nodeIdle.anonMb)}).` : ""));
    }

    if (r.reads) {
        const x = r.reads;
        out.push(`**Reads of many policies**: one Read of each of ${x.policies} consumer policies of ${x.members} members leaves the plugin's RSS ` +
            `${mib(x.endMiB - x.startMiB)} above its start (peak ${mib(x.peakMiB - x.startMiB)} above it), ${x.calls} getIamPolicy calls; the goal ` +
            `(≤ ${READS_RSS_GOAL_MIB} MiB above the start) is ${metWord(readsMet(x))}.`);
    }

    if (r.invoke) {
        const v = r.invoke;
        const total = (c: ClientFigures) => c.cpuClient + c.cpuEmulator + (c.cpuPlugin ?? 0);
        let t = `**Invoke**: through the plugin with a JavaScript gRPC client, ${v.plugin.rps.toFixed(0)} req/s: ${times(v.plugin.rps, v.raw.rps)} ` +
            `the raw HTTP floor (reported, not a goal: the engine, not the plugin, bounds lookups) and ${times(v.plugin.rps, v.googleapis.rps)} ` +
            `googleapis (reported). CPU per call, all processes: ` +
            `${total(v.raw).toFixed(2)} ms on the raw path, ${total(v.googleapis).toFixed(2)} ms with googleapis, ${total(v.plugin).toFixed(2)} ms ` +
            `through the plugin (of which the plugin ${(v.plugin.cpuPlugin ?? 0).toFixed(2)} ms).`;
        if (!isMissing(v.go)) {
            t += ` With the engine's grpc-go client the plugin answers ${v.go.rps.toFixed(0)} req/s (${times(v.go.rps, v.raw.rps)} raw, ` +
                `${times(v.go.rps, v.googleapis.rps)} googleapis, goal ≥ ${GOOGLEAPIS_GOAL}×: ${metWord(googleapisMet(v))}; ${total(v.go).toFixed(2)} ms of CPU per call in all).`;
        } else {
            t += ` The engine's grpc-go client was not measured (${v.go.missing}).`;
        }
        // Two cores run the client, the plugin and the emulator: throughput follows the CPU all of them spend per call.
        const ceiling = total(v.googleapis) / (v.plugin.cpuClient + v.plugin.cpuEmulator);
        t += ` With all three processes sharing this machine's cores, even a plugin that cost nothing would leave the JavaScript client's ` +
            `${v.plugin.cpuClient.toFixed(2)} ms and the emulator's ${v.plugin.cpuEmulator.toFixed(2)} ms per call: at most ${ceiling.toFixed(2)}× googleapis ` +
            `(its ${total(v.googleapis).toFixed(2)} ms per call) on this path.`;
        out.push(t);
        out.push(`**Coalescing**: ${v.coalesce.lookups} identical concurrent lookups made ${v.coalesce.identical} upstream request(s); ` +
            `${v.coalesce.lookups} distinct ones made ${v.coalesce.distinct}. The emulator serves ${v.capacity.toFixed(0)} req/s on its own, ` +
            `${(v.capacity / v.plugin.rps).toFixed(1)}× the plugin's rate` +
            (v.capacity >= 2 * v.plugin.rps ? ": it does not limit the invoke figures." : ": close enough that it may limit the invoke figures."));
    }

    if (r.engine) {
        const e = r.engine;
        if (isMissing(e)) {
            out.push(`**Engine**: not measured (${e.missing}).`);
        } else {
            let t = `**Engine**: \`pulumi up\` of ${e.members} ServiceIamMembers (medians of ${e.reps}, interleaved)`;
            for (const parallel of parallelisms(e)) {
                const er = engineRatio(e, parallel);
                const perLatency = e.latencies.filter((l) => l.parallel === parallel).map((l) => `${sec(median(l.upMs))} at ${l.latencyMs} ms`).join(", ");
                t += ` — at ${parallelWords(e, parallel)}: ${perLatency} of API latency` + (er ? `, ${er.ratio.toFixed(2)}× the 0 ms run` : "");
            }
            t += ".";
            // The goal is the engine's floor at each parallelism: the latency's cost beyond it would be the plugin's.
            for (const [i, parallel] of parallelisms(e).entries()) {
                const er = engineRatio(e, parallel);
                if (!er) continue;
                const writes = Math.ceil(e.members / er.parallel);
                t += i === 0
                    ? ` A Create holds one of the engine's ${er.parallel} slots until its write is answered, so ${e.members} Creates need ` +
                        `${writes} writes one after another: at ${er.slow.latencyMs} ms that is ${sec(writes * er.slow.latencyMs)} on top of the 0 ms ` +
                        `run, so up cannot take less than ${sec(er.floorMs)} (${times(er.floorMs, median(er.fast.upMs))} the 0 ms run)`
                    : `; at ${parallelWords(e, parallel)}, ${writes} write${writes === 1 ? "" : "s"} in a row: a floor of ${sec(er.floorMs)}`;
                t += `; measured ${times(median(er.slow.upMs), er.floorMs)} that floor (goal ≤ ${ENGINE_FLOOR_GOAL}×: ${metWord(floorRatio(er) <= ENGINE_FLOOR_GOAL)})`;
            }
            if (parallelisms(e).some((parallel) => engineRatio(e, parallel))) t += ".";
            const allCalls = e.latencies.flatMap((l) => [...l.upCalls, ...l.destroyCalls]);
            t += ` \`pulumi destroy\`: ${parallelisms(e).map((parallel) => `at ${parallelWords(e, parallel)}, ` +
                e.latencies.filter((l) => l.parallel === parallel).map((l) => `${sec(median(l.destroyMs))} at ${l.latencyMs} ms`).join(", ")).join("; ")}. API calls per run: ` +
                `up ${span(e.latencies.flatMap((l) => l.upCalls))}, destroy ${span(e.latencies.flatMap((l) => l.destroyCalls))} ` +
                `(goal ≤ ${ENGINE_CALLS_GOAL} each: ${metWord(Math.max(...allCalls) <= ENGINE_CALLS_GOAL)}).`;
            out.push(t);
        }
    }

    if (r.quota) {
        const q = r.quota;
        if (isMissing(q)) {
            out.push(`**Quota**: not measured (${q.missing}).`);
        } else {
            const each = q.runs.map((run) => {
                const goal = ` (goal: ${metWord(quotaMet(q, run))})`;
                if (!timed(run)) return `${run.what}: not timed, ${failedWords(run)}${goal}`;
                const floor = quotaFloorMs(q, run);
                return `${run.what}: ${sec(run.wallMs)} for ${run.calls} API calls, ` +
                    (quotaBinds(q, run)
                        ? `${times(run.wallMs, floor)} the quota floor of ${sec(floor)}`
                        : `within one minute's quota (its floor, ${sec(floor)}, is not a bound)`) +
                    `, ${run.refusals} answered 429 for quota, ${failedWords(run)}${goal}`;
            });
            out.push(`**Quota**: with the emulator refusing calls past ${q.perMinute} per rolling minute (Google's quota) — ${each.join("; ")}.` +
                (q.engineMissing === undefined ? "" : ` The engine's up / destroy runs were not measured (${q.engineMissing}).`) +
                ` The goal per run is no failure and, where the calls exceed one minute's quota, a wall time ≤ ${QUOTA_FLOOR_GOAL}× the quota ` +
                "floor (calls ÷ the quota per minute); the first minute's quota is spent at once, so a run can finish under its floor.");
        }
    }
    if (r.scale && !isMissing(r.scale)) {
        const sc = r.scale;
        const scaleRows = rows.filter((row) => row.figure.startsWith("scale:") && row.met !== undefined);
        out.push(`**Engine at scale** (file backend, the engine's default parallelism ${sc.defaultParallel}): ` +
            sc.runs.map((x) => `${scaleWords(x)}: up ${sec(x.up.ms)} / ${x.up.calls} calls, preview ${sec(x.preview.ms)} / ${x.preview.calls}, ` +
                `destroy ${sec(x.destroy.ms)} / ${x.destroy.calls}` + (x.refreshes ? Object.entries(x.refreshes.without).map(([op, ph]) =>
                `, ${op} ${sec(ph.ms)} / ${ph.calls} (with the quota ${sec(x.refreshes!.quota[op as Refresh].ms)} / ${x.refreshes!.quota[op as Refresh].calls})`).join("") : "")).join("; ") +
            `. Goals met: ${scaleRows.filter((row) => row.met).length} of ${scaleRows.length}.`);
    }
    if (r.dist) {
        const d = r.dist;
        if (isMissing(d)) {
            out.push(`**Dist**: not measured (${d.missing}).`);
        } else {
            const sizes = d.tarballs.map((t) => `${t.platform} ${megabytes(t.bytes)}`).join(", ");
            const host = d.tarballs.find((t) => t.platform === "linux-amd64");
            out.push(`**Dist**: \`npm run dist\` built every platform's tarball (${d.tarballs.length}) and SHA256SUMS in ${sec(d.firstMs)} ` +
                `(goal ≤ ${DIST_GOAL_S} s on this 2-core machine: ${metWord(d.firstMs <= DIST_GOAL_S * 1000)}), and again in ${sec(d.secondMs)}; ` +
                (d.reproducible
                    ? "the two runs' SHA256SUMS are identical: the build is reproducible (goal met). "
                    : `the two runs' SHA256SUMS differ${d.differing.length ? ` (${d.differing.join(", ")})` : ""}: the build is not reproducible (goal not met). `) +
                `Sizes: ${sizes}. For scale, Pulumi GCP's linux-amd64 plugin tarball (a Go provider) was ${megabytes(GCP_TARBALL.bytes)} at ` +
                `v${GCP_TARBALL.version}, the nearest published size found (none was found for v8.x)` +
                (host ? `: the linux-amd64 executable's tarball is ${times(host.bytes, GCP_TARBALL.bytes)} that.` : "."));
        }
    }
    return out;
}

/** How each figure is measured. Method only: no figures here, so nothing in it can go stale. */
const METHOD = [
    "- **Start** is spawn → first line of stdout (the port), the median of interleaved repetitions (one warm-up round not counted; the order " +
    "rotates each round; each process is killed and reaped before the next spawn). Every process gets the bench's own environment (but for " +
    "the two differences said below), as the engine passes its environment to plugins, so variables such as `NODE_EXTRA_CA_CERTS` count as " +
    "they do for users. The plugin gets no " +
    "arguments (the engine also passes its own address, which the plugin keeps for log messages).",
    "  - *self-contained executable*: linux-amd64's tarball contents as `npm run dist -- --unpacked` (`scripts/dist.ts`) builds them from this checkout (built into " +
    "`build/test-dist` when older than the compiled code), copied afresh under `build/bench/plugin` each run: one executable, " +
    "`pulumi-resource-cloud`, the pinned Node with the plugin injected as a single executable application, its V8 code cache inside; it " +
    "needs no `node` on PATH. Measured with the bench's environment, and once per round with an empty one (`env -i`), as a user without " +
    "Node starts it. Both are judged against the grpc-js floor of the same run (below).",
    "  - *today's Node-on-PATH launcher*: the folder packaging of the macOS tarballs (darwin-amd64's, built the same way; its launcher is " +
    "`sh` and `node`, so it runs here too): `pulumi-resource-cloud` is a `#!/bin/sh` launcher running `node lib/boot.js` with the `node` " +
    "on PATH. It writes a V8 code cache to the user's cache directory on its first start and uses it afterwards: it gets an " +
    "`XDG_CACHE_HOME` of its own under `build/bench`, emptied each run, and is started once before the rounds and left running until " +
    "that cache is written (it writes it just after printing its port, so a start killed at the port would never leave one).",
    "  - *Go floor*: `grpc-floor` (`tools/pulumi/cmd/grpc-floor`, built by `npm run tools`), a bare grpc-go server that prints its port; " +
    `without the tools, its row is left out. The Go peer's figure, ${GO_PEER_MS} ms, is from the issue (the Terraform google-beta ` +
    "provider, a Go binary, printing its handshake; median of 9 on this kind of machine), shown as a ratio beside both packagings; the Go " +
    "floor shows what a Go gRPC server costs in the same run.",
    "  - *Node floor*: `node -e` printing a line, what any plugin started with `node` pays before its own code runs; when the environment " +
    "sets `NODE_EXTRA_CA_CERTS`, the same without it, for reference; and the executable's own Node (the pinned binary, extracted " +
    "under `build/bench`) with an empty environment (reported).",
    "  - *@grpc/grpc-js floor* and *stock provider peer*: `bench/fixtures/floor.js` and `bench/fixtures/stock-provider.js`, run by `node` " +
    "from `node_modules`. *The grpc-js floor*: `floor.js` bundled into one file by esbuild (as the plugin's bundle is), run by the " +
    "executable's Node with an empty environment but for `NODE_COMPILE_CACHE` (Node's own code cache, written in the warm-up round): what " +
    "serving gRPC with @grpc/grpc-js costs before any provider code runs: the floor both of the executable's starts are judged by.",
    "  - *dev launcher*: `bin/pulumi-resource-cloud`, the compiled `build/` tree the tests run; not what users install.",
    "- **Memory**: RSS of the self-contained executable configured against the emulator: idle right after Configure (before any API call " +
    "loads the credential libraries), after warm-up invokes (libraries loaded, hot code optimized), and after many more. Growth is reported " +
    "from the warmed-up figure, and the goal judged after the last invoke (the plugin's own memory, and its whole RSS against the Go peer's); the plugin is then left idle and measured once more (V8's memory reducer runs on its own timers, some " +
    "seconds after the allocation stops). Each figure's anonymous part (`RssAnon` in `/proc/PID/status`) is the plugin's own memory; the rest is " +
    "its executable's pages mapped from the page cache. The executable is copied afresh each run, as `pulumi plugin install` unpacks it, so " +
    "its whole file is in the page cache and each page fault maps its cached neighbours too: the file part is as a fresh install sees it, " +
    "and less once the system has evicted the file (its pages are shared with the cache and given back under memory pressure). The idle " +
    "RSS of today's launcher (with its user code cache), of the dev launcher and of the executable's Node alone (`env -i`, an empty timer " +
    "loop) are shown beside it.",
    "- **Reads of many policies**: the dev launcher configured against an in-process emulator holding that many consumer policies of " +
    "that many distinct members each, then one ConsumersIamMember Read (what a refresh sends) of each policy over the provider protocol, " +
    "at the engine's default parallelism. RSS (`VmRSS`) right after Configure and half a second after the last Read, and the peak " +
    "(`VmHWM`); getIamPolicy calls counted at the emulator. Goal (issue 51): RSS after the Reads at most 40 MiB above the start, every " +
    "Member found.",
    "- **Invoke**: lookups at a fixed concurrency, repeated and interleaved: through the plugin (dev launcher) with a JavaScript gRPC client " +
    "and with the engine's own grpc-go client (`invoke-load`, built by `npm run tools`; left out without the tools), a raw keep-alive HTTP " +
    "client straight to the emulator (floor), and the googleapis client (peer). CPU per call is each process's CPU time over a run divided " +
    "by its calls. The JavaScript client's ceiling divides googleapis's CPU per call (client and emulator) by the JavaScript client's and " +
    "the emulator's on the plugin path: the ratio a plugin costing nothing would reach while all processes share the cores.",
    "- **Coalescing** holds the emulator's answer for 200 ms so that the lookups are really in flight together, and counts upstream requests " +
    "at the emulator. **Emulator capacity** is the raw client at concurrency 64, to show whether the emulator limits the invoke figures.",
    "- **Engine**: the real `pulumi` CLI and YAML host (built by `npm run tools`) with the plugin installed from linux-amd64's tarball (the " +
    "self-contained executable): `pulumi up` then " +
    "`pulumi destroy` of 100 ServiceIamMembers on one service, at 0 and 100 ms API latency alternately, each repetition on a fresh stack and " +
    "a fresh emulator; medians and ranges reported, API calls counted at the emulator. Once at the engine's default parallelism (4 × the " +
    "CPUs, Pulumi's default), once with `--parallel` at the number of Members. Skipped with `--quick` or without the tools.",
    "- **Quota**: the emulator (in process) refusing Service Management calls past Google's quota, 120 per rolling minute, with Google's " +
    "429 RESOURCE_EXHAUSTED. Lookups of distinct consumers (each seeded with a policy first, outside the API): with the tools built, " +
    "`pulumi up` of a Pulumi YAML program of one `fn::invoke` per consumer; without them, the plugin called over its protocol at the " +
    "bench's concurrency. A lookup counts as failed unless the emulator answered its getIamPolicy 200. With the tools, also `pulumi up` " +
    "and `pulumi destroy` of 100 ServiceIamMembers (the engine runs above, one run, at the engine's default parallelism). Calls are " +
    "those the emulator answered, less its quota refusals; the quota floor is calls ÷ the quota per minute. Skipped with `--quick` " +
    "(it waits for quota minutes).",
    "- **Engine at scale**: the real `pulumi` CLI and YAML host, the plugin installed from linux-amd64's tarball, on the file backend " +
    "(the default for anyone not on Pulumi Cloud), each setting on a fresh stack against a fresh in-process emulator at a fixed 100 ms " +
    "API latency: `pulumi up --skip-preview`, `pulumi preview --expect-no-changes`, then `pulumi destroy --skip-preview` of N " +
    "ServiceIamMembers, on one service's policy, spread round robin over several services, with the emulator's quota of 120 calls a " +
    "minute, and with `PULUMI_SKIP_CHECKPOINTS=true` (the engine without saving its checkpoint around every step: its own pace); one " +
    "policy holds at most 1,500 principals (Google's limit, which the emulator enforces), so larger stacks run spread only. API " +
    "calls are the emulator's count; the plugin's CPU seconds (user + system) and peak RSS (`VmHWM`) are read from `/proc` every 100 ms " +
    "for every process whose command line is the installed plugin's, summed (CPU) and maxed (RSS) over the command. Goals (issue 35): " +
    "on one policy, `up` and `destroy` each ≤ 1.5 × ⌈N / the engine's default parallelism⌉ calls; with the quota, ≤ 1.1× the same " +
    "run's wall time without it; the plugin's CPU per Member (up + destroy) from the smallest N to the largest grows ≤ 1.5×; peak " +
    "RSS under the Go peer's 127 MiB. On one policy (on 4 past 1,500 Members), once `up` and the preview have run: `pulumi refresh " +
    "--yes`, `pulumi preview --refresh` and `pulumi up --refresh --yes` (its preview included), each `--expect-no-changes`, without a quota " +
    `and with the emulator's quota of 120 calls a minute set for them alone (the stack was made without it), in turns: ${REFRESH_RUNS + 1} runs ` +
    `without it around ${REFRESH_RUNS} with it; each shows the run with the median wall. Goals (issue 43): each ≤ 2 × K getIamPolicy calls for K policies, and with the ` +
    `quota ≤ 1.1× its wall time without it, judged by the median of the ${REFRESH_RUNS} ratios of a run with it to the mean of the runs without it just before and ` +
    "after (a machine's drift over the minutes weighs on both sides alike). Every other setting runs once (minutes " +
    "each): those figures are single runs, not medians.",
    "- **Journal**: `pulumi up` and `pulumi destroy` of 1,000 ServiceIamMembers on one policy at 100 ms API latency, the real CLI and YAML " +
    "host, the crash journal on local disk and in a `gs://` bucket (`PULUMI_CLOUD_JOURNAL_URL`: fake-gcs-server, built by `npm run tools`, " +
    "behind a loopback proxy holding each request 30 ms, near GCS's latency), the two interleaved, medians; goal ≤ 1.1× local disk.",
    "- **Dist**: `node build/scripts/dist.js --out DIR` (what `npm run dist` runs, after compiling) for every platform, into a fresh folder " +
    "under `build/bench`, timed from spawn to exit, after every other section (it keeps both cores busy); then again into another fresh " +
    "folder, and the two `SHA256SUMS` compared byte for byte (identical: reproducible). Sizes are the first run's tarballs, in MB of 10^6 " +
    "bytes. The Go provider's size beside them is a published figure, not measured here (its source is in `bench/report.ts`). Both " +
    "folders are removed afterwards. Skipped with `--quick`.",
    "- **Profiles behind the changes** (made by hand, not by this script; the figures they gave are in the commits that cite them). " +
    "*Start*: the executable rebuilt with `--cpu-prof` in its fixed execArgv (a Node option: the code cache still fits), started with " +
    "`env -i`, and marks (`performance.now()`) at the boot script, after compiling the bundle with its cache, after running it and at the " +
    "port line. Node itself takes the time to the boot script; then compiling the bundle from its cache, running its modules (most of it " +
    "loading Node's own http2, http, tls, https, zlib and dns modules for @grpc/grpc-js and the API transport, and the @pulumi/pulumi " +
    "protobuf stubs) and binding the port (where @grpc/grpc-js's first `net.isIPv6` compiles Node's large IPv6 regular expression). " +
    "Started with an engine address (as the engine starts every plugin), the engine's Log client was also made before the port line: it is " +
    "now made on the first message for the engine. A V8 startup snapshot (`useSnapshot`) cannot hold the bundle: Node 22 refuses to " +
    "serialize the http and http2 bindings its modules create at load. *Invoke CPU*: the folder packaging on the pinned Node with " +
    "`--cpu-prof` under this bench's invoke load (2,000 warm-up and then thousands of lookups at concurrency 32): with `--optimize-for-size` " +
    "set at run time, about a fifth of the plugin's busy time was the garbage collector and its CPU per call was twice that without the " +
    "flag (for ~5 MB less RSS), so the flag was dropped; the rest is the upstream HTTP request (Node's http client, the socket writes), " +
    "google-auth-library's request headers, and decoding and encoding the protobuf messages (google-protobuf's Struct). *Memory*: RSS " +
    "idle, after warm-up and after more lookups for each heap flag set at run time, side by side. A later round (the folder packaging on " +
    "the pinned Node, `--cpu-prof` at start and under 4,000 lookups at concurrency 32, and `v8.getHeapSpaceStatistics()` through a " +
    "`-r` preload): loading `node:crypto` was about a tenth of the start, for ids and hashes first needed at the first resource request, " +
    "so it loads then; a bare access token went through google-auth-library, whose bundle and per-call request headers cost about 4 MB of " +
    "heap and a twentieth of the CPU per lookup, so it is sent as it is; the boot script kept the bundle's source twice (read and " +
    "wrapped: 1.7 MB each in the large-object space), so it keeps the wrapped one only; Node's per-request abort signal (listeners and " +
    "stream tracking, 3% of the CPU) became one listener per shared signal. Left as they are: a young generation that may grow (a " +
    "about 6% less CPU per lookup for 25 MB more RSS), and the garbage collector's share, about a tenth of the plugin's busy time. What " +
    "remains of the start is Node's http2 module (loaded by @grpc/grpc-js, a sixth of the plugin's own start), deserializing the code " +
    "cache, running the bundle's modules and binding the port: the grpc-js floor above measures that part any such plugin pays.",
    "- Loopback only; for memory and invoke the emulator runs as its own process (for the engine and quota runs, in the bench's process). These machines are noisy and shared: compare figures within one run.",
];

export interface RunInfo {
    /** When the run started. */
    at: Date;
    /** The commit measured, with a note when the tree had changes. */
    commit: string;
    machine: string;
    counts: string;
    quick: boolean;
    /** The sections run, when not all of them. */
    only?: string[];
}

/** The whole document: nothing in it is written by hand, so all of it describes the run it names. */
export function document(r: Results, run: RunInfo): string {
    const rows = rowsFor(r);
    const kind = run.quick ? "`--quick` counts (a smoke test: not figures to quote)" : "full counts";
    return [
        "# Benchmarks",
        "",
        "Written by `npm run bench` (`npm run bench -- --write` rewrites this file): the table and the analysis are generated from the one run",
        "named below; the method section holds no figures. Not edited by hand: re-run to refresh.",
        "",
        `Run: ${run.at.toISOString()} (UTC), commit ${run.commit}, ${kind}${run.only ? `, sections: ${run.only.join(", ")}` : ""}.`,
        `Machine: ${run.machine}.`,
        `Counts: ${run.counts}.`,
        "",
        table(rows),
        "",
        `## Analysis (generated from the run of ${run.at.toISOString()})`,
        "",
        ...analysis(r, rows).map((s) => `- ${s}`),
        "",
        "## Method",
        "",
        ...METHOD,
        "",
    ].join("\n");
}
