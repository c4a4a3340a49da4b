// `npm run bench`: measures the plugin against its floors and peers in one run, interleaved, several
// repetitions, medians reported; prints a table and writes it, with a short analysis generated from the same
// figures, to build/benchmarks.md (BENCHMARKS.md only when asked). Loopback only, bounded in time.
//
// The plugin is measured as users install it, from the tarballs `npm run dist` (scripts/dist.ts) makes from this
// checkout: the self-contained linux-amd64 executable (Node with the plugin injected, needing no `node` on PATH),
// and beside it the folder packaging of the macOS tarballs, a `#!/bin/sh` launcher running `node lib/boot.js` with
// the `node` on PATH: today's Node-on-PATH launcher (it runs on Linux too).
//
//   npm run bench                          # full counts (several minutes); with the tools built, the real engine too
//   npm run bench -- --write               # the same, and rewrite BENCHMARKS.md from this run
//   npm run bench -- --quick               # tiny counts, no engine, quota or dist (smoke test)
//   npm run bench -- --only start,memory   # some sections only: start, memory, reads, invoke, engine, quota, scale, dist
//   npm run bench -- --only scale --scale 1000   # engine at scale, some sizes only (default 250,1000,2000: about an hour)
//   npm run bench -- --only scale --refreshes    # engine at scale, only the settings that run refresh, preview --refresh and up --refresh
//   npm run bench -- --only journal --journal-members 300   # the journal rows at fewer Members, one run each (about 2 minutes)
//   npm run bench -- --out FILE            # write the document to FILE instead

import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import * as esbuild from "esbuild";
import minimist from "minimist";
import { spawnEmulator, startEmulator as emulatorInProcess } from "../emulator";
import { CONSUMER_MEMBER, CONSUMERS_FN, FOLDER_PLATFORM, HOST_PLATFORM, Plugin, ROLE, unpackPlugin } from "../tests/support/plugin";
import { toolsMissing } from "../tests/e2e/support";
import { nodeFile } from "../scripts/dist";
import { assetName, CHECKSUMS, NODE_VERSION, Platform, platformKey, PLATFORMS } from "../scripts/platforms";
import { PACKAGE_VERSION } from "../provider/package/version";
import { consumersAnswered, EngineRun, engineRuns, lookupConsumer, lookupRun, Lookups, ScaleSetting, scaleRuns, seedConsumers } from "./engine";
import { FAKE_GCS } from "../tests/support/gcs";
import { ClientFigures, DistFigures, document, EngineFigures, JournalFigures, ScaleFigures, median, missingFigures, Missing, QuotaFigures, QuotaRun, ReadsFigures, Results, rowsFor, StartFigures, table } from "./report";

const ROOT = path.join(__dirname, "..", "..");
/** The dev launcher: runs this checkout's compiled build/ tree (what the tests run). */
const DEV_LAUNCHER = path.join(ROOT, "bin", "pulumi-resource-cloud");
/** The bench's own files: the installed plugins, the launcher's user cache, the dist runs' output. */
const BENCH_DIR = path.join(ROOT, "build", "bench");
/** Where each platform's tarball is extracted, afresh each run (build/bench/plugin/<os>-<arch>). */
const INSTALL_DIR = path.join(BENCH_DIR, "plugin");
/** XDG_CACHE_HOME of the folder packaging (today's launcher): where it writes its code cache on its first start. */
const LAUNCHER_CACHE = path.join(BENCH_DIR, "launcher-cache");
const FIXTURES = path.join(ROOT, "bench", "fixtures");
const TOKEN = "ya29.bench-token";
const SERVICE = "bench.endpoints.bench-project.cloud.goog";

const SECTIONS = ["start", "memory", "reads", "invoke", "engine", "quota", "scale", "journal", "dist"] as const;
type Section = (typeof SECTIONS)[number];

const args = minimist(process.argv.slice(2), { boolean: ["quick", "write", "refreshes"], string: ["out", "only", "scale", "journal-members"] });
const quick = args.quick === true;
const only: string[] | undefined = typeof args.only === "string" ? args.only.split(",").map((s) => s.trim()).filter((s) => s !== "") : undefined;
const N = {
    startReps: quick ? 3 : 15,
    invokes: quick ? 200 : 2000,
    memoryInvokes: quick ? 500 : 10_000,
    /** How long the memory section leaves the plugin idle after its last invoke before the last RSS (V8's memory reducer). */
    settleSeconds: quick ? 1 : 30,
    warmup: quick ? 100 : 2000,
    coalesce: quick ? 100 : 1000,
    capacitySeconds: quick ? 0.5 : 3,
    /** Reads of many policies: consumer policies, members in each, Reads at once (the engine's default parallelism). */
    readPolicies: quick ? 100 : 1000,
    readMembers: quick ? 100 : 1000,
    readParallel: 4 * os.cpus().length,
    throughputReps: quick ? 1 : 3,
    concurrency: 32,
    /** ServiceIamMembers in the engine figures. */
    members: 100,
    /**
     * Repetitions of each engine latency, interleaved. Five: a single `up` of 100 Members at 100 ms varies by
     * ±0.3 s here (the engine's checkpoints), which three runs' median does not steady against a 10% goal.
     */
    engineReps: 5,
    engineLatencies: [0, 100],
    /** Google's Service Management quota, calls per minute, for the quota section. */
    quotaPerMinute: 120,
    /** Distinct consumer lookups under the quota: 2.5 minutes' worth. */
    quotaLookups: 300,
    /** Engine at scale: Members per stack (`--scale 250,1000`), and the policies they are spread over besides one. */
    scaleMembers: typeof args.scale === "string" ? args.scale.split(",").map(Number) : [250, 1000, 2000],
    scaleSpread: 4,
    /**
     * The journal section: Members, runs of each storage. `--journal-members` is a quicker look while working on the
     * journal (one run each); the table's rows are 1,000, two each.
     */
    journalMembers: args["journal-members"] === undefined ? 1000 : Number(args["journal-members"]),
    journalReps: args["journal-members"] === undefined ? 2 : 1,
};

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const now = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Spawn → first line of stdout (which must be a number: a port), in ms. Resolves once the process is gone, so
 * that one measurement does not overlap the next.
 */
function timeToPort(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
    return new Promise((resolve, reject) => {
        const started = now();
        const child = spawn(cmd, argv, { env, stdio: ["ignore", "pipe", "ignore"] });
        let out = "";
        let ms: number | undefined;
        child.stdout!.on("data", (d: Buffer) => {
            if (ms !== undefined) return;
            out += d.toString();
            const nl = out.indexOf("\n");
            if (nl < 0) return;
            ms = now() - started;
            child.kill("SIGKILL");
            if (!/^\d+$/.test(out.slice(0, nl).trim())) reject(new Error(`${cmd} printed ${JSON.stringify(out.slice(0, nl))}, not a port`));
        });
        child.once("error", reject);
        child.once("close", () => (ms === undefined ? reject(new Error(`${cmd} exited before printing a line`)) : resolve(ms)));
    });
}

/**
 * The plugin as users install it: `platform`'s tarball contents as `npm run dist -- --unpacked` builds them from this
 * checkout (into build/test-dist when stale, see tests/support/plugin.ts), copied afresh; returns the executable the engine runs.
 */
function installPlugin(platform: Platform): string {
    const dir = path.join(INSTALL_DIR, platformKey(platform));
    fs.rmSync(dir, { recursive: true, force: true });
    const exe = unpackPlugin(dir, platform);
    fs.accessSync(exe, fs.constants.X_OK);
    return exe;
}

/** The two packagings measured: the self-contained executable, and the folder run by today's launcher. */
interface Installed {
    /** linux-amd64's executable: Node and the plugin in one file. */
    executable: string;
    /** The folder packaging's `#!/bin/sh` launcher (`exec node lib/boot.js` with the `node` on PATH). */
    launcher: string;
}

/** The environment today's launcher runs with: the bench's own, with a user cache directory of its own. */
const launcherEnv = (): NodeJS.ProcessEnv => ({ ...process.env, XDG_CACHE_HOME: LAUNCHER_CACHE });

/** The launcher's user code cache files (it writes one on its first start, for this bundle and this `node`). */
function launcherCaches(): string[] {
    const dir = path.join(LAUNCHER_CACHE, "pulumi-resource-cloud");
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".cache")) : [];
}

/**
 * Starts today's launcher once with an empty user cache and lets it write its code cache, as a user's first start
 * does. It writes the cache just after printing its port, so a start killed at the port (as the start figures
 * kill each process) would never leave one: this start is waited on until the cache is there.
 */
async function primeLauncherCache(launcher: string, log: Log): Promise<void> {
    fs.rmSync(LAUNCHER_CACHE, { recursive: true, force: true });
    fs.mkdirSync(LAUNCHER_CACHE, { recursive: true });
    const child = spawn(launcher, [], { env: launcherEnv(), stdio: ["ignore", "ignore", "ignore"] });
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    try {
        const until = now() + 30_000;
        while (launcherCaches().length === 0 && child.exitCode === null && now() < until) await sleep(50);
    } finally {
        child.kill("SIGKILL");
        await exited;
    }
    const caches = launcherCaches();
    if (caches.length === 0) throw new Error(`today's launcher (${path.relative(ROOT, launcher)}) wrote no code cache under ${path.relative(ROOT, LAUNCHER_CACHE)} in 30 s`);
    log(`today's launcher wrote its user code cache (${caches.join(", ")}) under ${path.relative(ROOT, LAUNCHER_CACHE)}`);
}

let toolsDir: { dir: string } | Missing | undefined;
/** A Go tool built by `npm run tools` (scripts/tools.sh; never builds), or why it is not there. */
function goTool(name: string): { bin: string } | Missing {
    toolsDir ??= (() => {
        try {
            const out = execFileSync("bash", [path.join(ROOT, "scripts", "tools.sh"), "--check"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
            return { dir: out.trim().split("\n").pop()! };
        } catch (e) {
            const why = String((e as { stderr?: unknown }).stderr ?? e).trim().split("\n").pop() ?? "";
            return { missing: why.replace(/^tools\.sh: /, "").replace(/ \(in [^)]*\)/, "") || "the tools are not built: run `npm run tools`" };
        }
    })();
    if ("missing" in toolsDir) return toolsDir;
    const bin = path.join(toolsDir.dir, name);
    return fs.existsSync(bin) ? { bin } : { missing: `${name} is not built: run \`npm run tools\`` };
}

/** CPU time (user + system) a process has used, in ms. */
function cpuMs(pid: number): number {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
}

/** A process's RSS and its anonymous part (the rest is mapped from files, shared with the page cache), in kB. */
function rssOf(pid: number): { kb: number; anonKb: number } {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)![1]);
    return { kb: field("VmRSS"), anonKb: field("RssAnon") };
}

/**
 * The Node the executable embeds (the pinned, checked binary: scripts/dist.ts), as a plain executable under
 * build/bench: the Node floors are measured on it, not on whatever `node` is on PATH.
 */
function embeddedNode(): string {
    if (!HOST_PLATFORM.node) throw new Error("scripts/platforms.ts: linux-amd64 pins no Node");
    // A folder per version: nodeFile writes the binary once into the folder it is given.
    const dir = path.join(BENCH_DIR, `node-${NODE_VERSION}`);
    fs.mkdirSync(dir, { recursive: true });
    return nodeFile(HOST_PLATFORM, HOST_PLATFORM.node, dir);
}

/** bench/fixtures/floor.js bundled into one file by esbuild, as the plugin's bundle is made. */
function bundledGrpcFloor(): string {
    const out = path.join(BENCH_DIR, "floor-bundled.js");
    esbuild.buildSync({ entryPoints: [path.join(FIXTURES, "floor.js")], bundle: true, platform: "node", target: "node20", format: "cjs",
        outfile: out, absWorkingDir: ROOT, logLevel: "warning" });
    return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `total` calls of `fn` with `concurrency` workers; returns per-call latencies and wall time. */
async function pool(total: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<{ latencies: number[]; wallMs: number }> {
    const latencies: number[] = [];
    let next = 0;
    const started = now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < total) {
            const i = next++;
            const t = now();
            await fn(i);
            latencies.push(now() - t);
        }
    }));
    return { latencies, wallMs: now() - started };
}

interface Emu {
    url: string;
    origin: string;
    child: ChildProcess;
    admin(pathname: string, body?: object): Promise<{ count?: number }>;
}

async function startEmulator(): Promise<Emu> {
    const { url, child } = await spawnEmulator(["--access-token", TOKEN]);
    const origin = new URL(url).origin;
    const admin = async (pathname: string, body?: object) => {
        const res = await fetch(`${origin}${pathname}`, body ? { method: "POST", body: JSON.stringify(body) } : {});
        return (await res.json()) as { count?: number };
    };
    const res = await fetch(`${url}services`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ serviceName: SERVICE, producerProjectId: "bench-project" }),
    });
    if (!res.ok) throw new Error(`seeding the emulator: HTTP ${res.status}`);
    return { url, origin, child, admin };
}

const consumer = (i: number) => `consumer-${String(i % 5000).padStart(5, "0")}`;
const consumerPath = (i: number) => `services/${SERVICE}/consumers/${consumer(i)}`;

/** The floor for invokes: a raw keep-alive HTTP client doing the same POSTs straight to the emulator. */
function rawClient(emu: Emu): (i: number) => Promise<void> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: N.concurrency });
    const body = JSON.stringify({ options: { requestedPolicyVersion: 3 } });
    const once = (i: number) => new Promise<void>((resolve, reject) => {
        const req = http.request(`${emu.url}${consumerPath(i)}:getIamPolicy`, {
            method: "POST",
            agent,
            headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
                if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
                else {
                    JSON.parse(Buffer.concat(chunks).toString());
                    resolve();
                }
            });
        });
        // A kept-alive socket the server closed while idle fails at once (Node's documented race): that one is retried.
        req.on("error", (e: NodeJS.ErrnoException) => reject(Object.assign(e, { reused: req.reusedSocket })));
        req.end(body);
    });
    return (i) => once(i).catch((e: NodeJS.ErrnoException & { reused?: boolean }) => {
        if (e.reused && e.code === "ECONNRESET") return once(i);
        throw e;
    });
}

/**
 * The peer for invokes: the googleapis client's servicemanagement calls. Imported from the package's own
 * servicemanagement module (what `google.servicemanagement` returns), so the compile reads that API's types
 * only, not the 400-odd other APIs `googleapis` declares.
 */
async function googleapisClient(emu: Emu): Promise<(i: number) => Promise<void>> {
    const { auth, servicemanagement } = await import("googleapis/build/src/apis/servicemanagement");
    const client = new auth.OAuth2();
    client.setCredentials({ access_token: TOKEN });
    const sm = servicemanagement({ version: "v1", auth: client, rootUrl: `${emu.origin}/` });
    return async (i) => {
        await sm.services.consumers.getIamPolicy({ resource: consumerPath(i), requestBody: { options: { requestedPolicyVersion: 3 } } });
    };
}

interface GoRun { rps: number; p50Ms: number; p99Ms: number; cpuMs: number; errors: number }

function runGoClient(bin: string, plugin: Plugin, calls: number): Promise<GoRun> {
    return new Promise((resolve, reject) => {
        const argv = ["-addr", `127.0.0.1:${plugin.port}`, "-token", CONSUMERS_FN, "-n", String(calls), "-c", String(N.concurrency),
            "-args", JSON.stringify({ serviceName: SERVICE, consumerProject: "consumer-%05d" })];
        const child = spawn(bin, argv, { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
        child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as GoRun) : reject(new Error(`invoke-load exited ${code}`))));
    });
}

function pluginClient(plugin: Plugin): (i: number) => Promise<void> {
    return async (i) => {
        const res = await plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: consumer(i) });
        if (res.failures.length || !res.return) throw new Error(JSON.stringify(res.failures));
    };
}


/** A plugin started with the bench's environment (as the engine passes its own) or `env`, configured against the emulator. */
async function startPlugin(emu: { url: string }, launcher: string, env: NodeJS.ProcessEnv = process.env): Promise<Plugin> {
    const plugin = await Plugin.start({ command: [launcher], env });
    await plugin.configure(undefined, {
        "cloud:config:serviceManagementCustomEndpoint": emu.url,
        "cloud:config:accessToken": TOKEN,
    });
    return plugin;
}

type Log = (m: string) => void;

/** 1. Start time: interleaved repetitions of both packagings, their floors and peers. */
async function measureStart(installed: Installed, log: Log): Promise<StartFigures> {
    const go = goTool("grpc-floor");
    if ("missing" in go) log(`the Go floor is not measured (${go.missing}): no Go row`);
    const nodeLine = ["-e", 'process.stdout.write("0\\n")'];
    let noCa: NodeJS.ProcessEnv | undefined;
    if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
        noCa = { ...process.env };
        delete noCa.NODE_EXTRA_CA_CERTS;
    }
    await primeLauncherCache(installed.launcher, log);
    type Key = "executable" | "executableBare" | "launcher" | "go" | "node" | "nodeBare" | "nodeNoCa" | "grpcJs" | "grpcJsBare" | "stock" | "dev";
    const node22 = embeddedNode();
    // Node's compile cache for the bundled floor, made in the warm-up round (the executable has its code cache).
    const compileCache = path.join(BENCH_DIR, "floor-compile-cache");
    fs.rmSync(compileCache, { recursive: true, force: true });
    const subjects: { key: Key; cmd: string; argv: string[]; env?: NodeJS.ProcessEnv }[] = [
        { key: "executable", cmd: installed.executable, argv: [] },
        // As a user without Node runs it: nothing in the environment at all (`env -i`).
        { key: "executableBare", cmd: installed.executable, argv: [], env: {} },
        { key: "launcher", cmd: installed.launcher, argv: [], env: launcherEnv() },
        ...("bin" in go ? [{ key: "go" as const, cmd: go.bin, argv: [] }] : []),
        // `node` from PATH, as the launcher finds it.
        { key: "node", cmd: "node", argv: nodeLine },
        // The floor of the executable's `env -i` start: its own Node starting with no environment either.
        { key: "nodeBare", cmd: node22, argv: nodeLine, env: {} },
        { key: "grpcJsBare", cmd: node22, argv: [bundledGrpcFloor()], env: { NODE_COMPILE_CACHE: compileCache } },
        ...(noCa ? [{ key: "nodeNoCa" as const, cmd: "node", argv: nodeLine, env: noCa }] : []),
        { key: "grpcJs", cmd: process.execPath, argv: [path.join(FIXTURES, "floor.js")] },
        { key: "stock", cmd: process.execPath, argv: [path.join(FIXTURES, "stock-provider.js")] },
        { key: "dev", cmd: DEV_LAUNCHER, argv: [] },
    ];
    log(`start time, ${N.startReps} interleaved repetitions of ${subjects.map((s) => s.key).join(", ")} (plus one warm-up round)`);
    const samples = new Map<Key, number[]>(subjects.map((s) => [s.key, []]));
    for (let round = 0; round <= N.startReps; round++) {
        for (let i = 0; i < subjects.length; i++) {
            const s = subjects[(i + round) % subjects.length];
            const ms = await timeToPort(s.cmd, s.argv, s.env);
            if (round > 0) samples.get(s.key)!.push(ms); // round 0 warms the page cache
        }
    }
    const m = (key: Key) => median(samples.get(key)!);
    return {
        reps: N.startReps,
        executable: m("executable"),
        executableBare: m("executableBare"),
        launcher: m("launcher"),
        embeddedNode: NODE_VERSION,
        pathNode: execFileSync("node", ["--version"], { encoding: "utf8" }).trim().replace(/^v/, ""),
        dev: m("dev"),
        node: m("node"),
        nodeBare: m("nodeBare"),
        nodeNoCa: noCa ? m("nodeNoCa") : undefined,
        grpcJs: m("grpcJs"),
        grpcJsBare: m("grpcJsBare"),
        stock: m("stock"),
        go: "bin" in go ? m("go") : go,
    };
}

/** RSS of a plugin configured against the emulator, `settle` ms after Configure, in MB; the plugin is stopped. */
async function idleRssMb(emu: Emu, launcher: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
    const plugin = await startPlugin(emu, launcher, env);
    try {
        await sleep(300);
        return rssOf(plugin.child.pid!).kb / 1024;
    } finally {
        await plugin.stop();
    }
}

/**
 * 2. Memory of the self-contained executable: idle after Configure, after warm-up, after many invokes; beside it
 * the idle RSS of today's launcher (with its user code cache, written in the start section or here) and of the
 * dev launcher.
 */
async function measureMemory(emu: Emu, installed: Installed, log: Log): Promise<Results["memory"]> {
    log(`memory, ${N.memoryInvokes} invokes`);
    const mem = await startPlugin(emu, installed.executable);
    let idle: { kb: number; anonKb: number }, warm: { kb: number; anonKb: number }, after: { kb: number; anonKb: number }, settled: { kb: number; anonKb: number };
    try {
        await sleep(300);
        idle = rssOf(mem.child.pid!);
        await pool(N.warmup, N.concurrency, pluginClient(mem));
        await sleep(300);
        warm = rssOf(mem.child.pid!);
        await pool(N.memoryInvokes, N.concurrency, pluginClient(mem));
        await sleep(500);
        after = rssOf(mem.child.pid!);
        // Idle, as a plugin is between a deployment's bursts: V8 shrinks its heap on its own timers.
        await sleep(N.settleSeconds * 1000 - 500);
        settled = rssOf(mem.child.pid!);
    } finally {
        await mem.stop();
    }
    // The executable's Node alone, as idle as a process can be.
    const node = spawn(embeddedNode(), ["-e", "setInterval(() => undefined, 1e6)"], { env: {}, stdio: "ignore" });
    let nodeIdle: { kb: number; anonKb: number };
    try {
        await sleep(500);
        nodeIdle = rssOf(node.pid!);
    } finally {
        node.kill("SIGKILL");
    }
    if (launcherCaches().length === 0) await primeLauncherCache(installed.launcher, log);
    const launcherIdleMb = await idleRssMb(emu, installed.launcher, launcherEnv());
    const devIdleMb = await idleRssMb(emu, DEV_LAUNCHER);
    const mbOf = (kb: number) => kb / 1024;
    return {
        warmup: N.warmup, invokes: N.memoryInvokes, idleMb: mbOf(idle.kb), warmMb: mbOf(warm.kb), afterMb: mbOf(after.kb), launcherIdleMb, devIdleMb,
        anon: { idleMb: mbOf(idle.anonKb), warmMb: mbOf(warm.anonKb), afterMb: mbOf(after.anonKb) },
        settled: { seconds: N.settleSeconds, mb: mbOf(settled.kb), anonMb: mbOf(settled.anonKb) },
        nodeIdle: { mb: mbOf(nodeIdle.kb), anonMb: mbOf(nodeIdle.anonKb) },
    };
}

/**
 * Reads of many policies (issue 51): the dev launcher's RSS after Configure and after one Read of each of many consumer
 * policies of many members (distinct in each), the engine's default parallelism at once, and its peak over them.
 */
async function measureReads(log: Log): Promise<ReadsFigures> {
    const { readPolicies: policies, readMembers: members, readParallel: parallel } = N;
    log(`reads: one Read of each of ${policies} consumer policies of ${members} members, ${parallel} at once`);
    const emu = await emulatorInProcess({ accessTokens: [TOKEN] });
    const member = (i: number, j: number) => `user:m${String(j).padStart(4, "0")}-of-${consumer(i)}@example.com`;
    try {
        emu.createService(SERVICE, "bench-project");
        for (let i = 0; i < policies; i++) {
            emu.setPolicy(consumerPath(i), { bindings: [{ role: ROLE, members: Array.from({ length: members }, (_, j) => member(i, j)) }] });
        }
        const plugin = await startPlugin(emu, DEV_LAUNCHER);
        try {
            const pid = plugin.child.pid!;
            await sleep(300);
            const start = rssOf(pid).kb;
            const cpu = cpuMs(pid);
            emu.resetRequests();
            let notFound = 0;
            const { wallMs } = await pool(policies, parallel, async (i) => {
                const props = { serviceName: SERVICE, consumerProject: consumer(i), role: ROLE, member: member(i, 0) };
                const read = await plugin.read(CONSUMER_MEMBER, `${consumerPath(i)} ${ROLE} ${member(i, 0)}`, props, props, `m${i}`);
                if (read.id === "") notFound++;
            });
            await sleep(500);
            const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
            const peak = Number(/VmHWM:\s+(\d+)/.exec(status)![1]);
            const calls = emu.requests.filter((r) => r.status === 200 && r.path.endsWith(":getIamPolicy")).length;
            return { policies, members, parallel, startMiB: start / 1024, endMiB: rssOf(pid).kb / 1024, peakMiB: peak / 1024,
                calls, cpuMs: cpuMs(pid) - cpu, wallMs, notFound };
        } finally {
            await plugin.stop();
        }
    } finally {
        await emu.close();
    }
}

/** 3. Invoke throughput and latency (interleaved repetitions of the clients), coalescing, the emulator's capacity. */
async function measureInvoke(emu: Emu, log: Log): Promise<Results["invoke"]> {
    log(`throughput, ${N.invokes} calls × ${N.throughputReps} repetitions at concurrency ${N.concurrency}`);
    const plugin = await startPlugin(emu, DEV_LAUNCHER);
    try {
        const clients = {
            plugin: pluginClient(plugin),
            raw: rawClient(emu),
            googleapis: await googleapisClient(emu),
        };
        for (const c of Object.values(clients)) await pool(100, N.concurrency, c); // warm-up
        const runs: Record<keyof typeof clients, ClientFigures[]> = { plugin: [], raw: [], googleapis: [] };
        // The plugin as the engine calls it: grpc-go has a fraction of a JavaScript gRPC client's cost.
        const go = goTool("invoke-load");
        const goRuns: ClientFigures[] = [];
        if ("bin" in go) await runGoClient(go.bin, plugin, 200); // warm-up
        else log(`the engine's grpc-go client is not measured (${go.missing})`);
        for (let r = 0; r < N.throughputReps; r++) {
            if ("bin" in go) {
                const before = { plugin: cpuMs(plugin.child.pid!), emulator: cpuMs(emu.child.pid!) };
                const run = await runGoClient(go.bin, plugin, N.invokes);
                if (run.errors) throw new Error(`invoke-load: ${run.errors} calls failed`);
                goRuns.push({
                    rps: run.rps, p50: run.p50Ms, p99: run.p99Ms, cpuClient: run.cpuMs / N.invokes,
                    cpuPlugin: (cpuMs(plugin.child.pid!) - before.plugin) / N.invokes, cpuEmulator: (cpuMs(emu.child.pid!) - before.emulator) / N.invokes,
                });
            }
            for (const name of Object.keys(clients) as (keyof typeof clients)[]) {
                // CPU per call of each process, to see where the time goes on these 2 cores.
                const before = { plugin: cpuMs(plugin.child.pid!), emulator: cpuMs(emu.child.pid!), client: process.cpuUsage() };
                const { latencies, wallMs } = await pool(N.invokes, N.concurrency, clients[name]);
                const client = process.cpuUsage(before.client);
                runs[name].push({
                    rps: (N.invokes / wallMs) * 1000, p50: percentile(latencies, 50), p99: percentile(latencies, 99),
                    cpuPlugin: name === "plugin" ? (cpuMs(plugin.child.pid!) - before.plugin) / N.invokes : undefined,
                    cpuEmulator: (cpuMs(emu.child.pid!) - before.emulator) / N.invokes,
                    cpuClient: (client.user + client.system) / 1000 / N.invokes,
                });
            }
        }
        const stat = (xs: ClientFigures[]): ClientFigures => {
            const m = (f: (x: ClientFigures) => number | undefined) => median(xs.map((x) => f(x) ?? 0));
            return { rps: m((x) => x.rps), p50: m((x) => x.p50), p99: m((x) => x.p99), cpuClient: m((x) => x.cpuClient), cpuEmulator: m((x) => x.cpuEmulator),
                cpuPlugin: xs[0].cpuPlugin === undefined ? undefined : m((x) => x.cpuPlugin) };
        };

        // Coalescing: identical lookups in flight together share one upstream request.
        log(`coalescing, ${N.coalesce} identical and ${N.coalesce} distinct lookups`);
        await emu.admin("/__emulator/faults", { latencyMs: 200, minLatencyMs: 200 });
        await emu.admin("/__emulator/requests:reset", {});
        await Promise.all(Array.from({ length: N.coalesce }, () => clients.plugin(0)));
        const identical = (await emu.admin("/__emulator/requests")).count!;
        await emu.admin("/__emulator/requests:reset", {});
        await Promise.all(Array.from({ length: N.coalesce }, (_, i) => clients.plugin(i + 1)));
        const distinct = (await emu.admin("/__emulator/requests")).count!;
        await emu.admin("/__emulator/faults", { latencyMs: 0, minLatencyMs: 0 });
        await plugin.stop();

        // The emulator's own capacity under the raw client, to show it is not the bottleneck of the figures above.
        log(`emulator capacity, ${N.capacitySeconds}s at concurrency 64`);
        const raw64 = rawClient(emu);
        let done = 0;
        const until = now() + N.capacitySeconds * 1000;
        const started = now();
        await Promise.all(Array.from({ length: 64 }, async () => {
            while (now() < until) await raw64(done++);
        }));
        const capacity = (done / (now() - started)) * 1000;
        return {
            invokes: N.invokes, reps: N.throughputReps, concurrency: N.concurrency,
            plugin: stat(runs.plugin), raw: stat(runs.raw), googleapis: stat(runs.googleapis),
            go: "bin" in go ? stat(goRuns) : go,
            coalesce: { lookups: N.coalesce, identical, distinct },
            capacity,
        };
    } finally {
        await plugin.stop();
    }
}

/** 4. What users wait for: `pulumi up` / `pulumi destroy` of many Members on one service, with the real engine. */
async function measureEngine(log: Log): Promise<EngineFigures | Missing> {
    const missing = quick ? "--quick" : toolsMissing();
    if (missing) {
        log(`engine figures skipped: ${missing}`);
        return { missing };
    }
    // At the engine's default parallelism, and with every Member in flight at once (`--parallel N`).
    const settings = [undefined, N.members].flatMap((parallel) => N.engineLatencies.map((latencyMs) => ({ latencyMs, parallel })));
    const schedule = Array.from({ length: N.engineReps }, () => settings).flat();
    const runs = await engineRuns(N.members, schedule, log);
    const wrong = runs.find((r) => r.upFailures || r.destroyFailures);
    if (wrong) throw new Error(`engine run at ${wrong.latencyMs} ms: ${grantsLeftWrong(wrong)}`);
    const lookups = await lookupRun(100, { program: "typescript" }, log);
    if (lookups.failures) throw new Error(`engine lookups: ${lookups.failures} of ${lookups.count} failed (first: ${lookups.failure})`);
    return {
        members: N.members,
        reps: N.engineReps,
        // Pulumi's default (pkg/cmd/pulumi/operations/up.go): 4 × GOMAXPROCS, the CPUs the process may use.
        defaultParallel: 4 * os.availableParallelism(),
        latencies: settings.map(({ latencyMs, parallel }) => {
            const at = runs.filter((r) => r.latencyMs === latencyMs && r.parallel === parallel);
            return { latencyMs, parallel, upMs: at.map((r) => r.upMs), destroyMs: at.map((r) => r.destroyMs), upCalls: at.map((r) => r.upCalls),
                destroyCalls: at.map((r) => r.destroyCalls) };
        }),
        lookups: { count: lookups.count, upMs: lookups.wallMs, calls: lookups.requests },
    };
}

/** What an engine run's up and destroy left wrong, in words. */
function grantsLeftWrong(run: EngineRun): string {
    return `${run.upFailures} of ${run.members} Members not granted after up, ${run.destroyFailures} still granted after destroy`;
}

/**
 * The quota lookups through the plugin's protocol (when the engine cannot run), at the bench's concurrency,
 * against an in-process emulator with the quota; each failure is counted, not thrown.
 */
async function protocolLookups(count: number, log: Log): Promise<Lookups> {
    const emu = await emulatorInProcess({ accessTokens: [TOKEN], quotaPerMinute: N.quotaPerMinute });
    try {
        seedConsumers(emu, SERVICE, count);
        const plugin = await startPlugin(emu, DEV_LAUNCHER);
        try {
            log(`quota: ${count} consumer lookups through the plugin's protocol at concurrency ${N.concurrency}`);
            emu.resetRequests();
            const errors: string[] = [];
            const { wallMs } = await pool(count, N.concurrency, async (i) => {
                try {
                    const res = await plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: lookupConsumer(i) });
                    if (res.failures.length || !res.return) errors.push(JSON.stringify(res.failures));
                } catch (e) {
                    errors.push(e instanceof Error ? e.message : String(e));
                }
            });
            const failures = Math.max(errors.length, count - consumersAnswered(emu.requests, SERVICE).size);
            return { count, wallMs, requests: emu.requestCount, refusals: emu.quotaRefusals, failures, failure: errors[0] };
        } finally {
            await plugin.stop();
        }
    } finally {
        await emu.close();
    }
}

/**
 * 6. Engine at scale: up, a no-change preview and destroy of each size of N.scaleMembers at 100 ms latency, on one
 * policy with and without Google's quota, spread over N.scaleSpread policies, and with PULUMI_SKIP_CHECKPOINTS=true
 * (the engine's own pace) beside them.
 */
async function measureScale(log: Log): Promise<ScaleFigures | Missing> {
    const missing = quick ? "--quick" : toolsMissing();
    if (missing) {
        log(`engine at scale skipped: ${missing}`);
        return { missing };
    }
    // One policy holds at most 1,500 principals (Google refuses more, and so does the emulator): larger stacks are
    // measured spread over several policies only. The quota's runs up to 1,000 Members (the issue's goal is judged
    // there): beyond, the engine's own pace is slower than the quota's floor, and each run takes a quarter of an hour.
    // The refreshing commands (issue 43) run on one policy, or spread where one policy cannot hold the stack.
    const refreshes = { refreshQuotaPerMinute: N.quotaPerMinute };
    const all: ScaleSetting[] = N.scaleMembers.flatMap((members) => [
        ...(members <= MAX_PRINCIPALS ? [{ members, services: 1, latencyMs: 100, ...refreshes }] : []),
        ...(members <= 1000 ? [{ members, services: 1, latencyMs: 100, quotaPerMinute: N.quotaPerMinute }] : []),
        { members, services: N.scaleSpread, latencyMs: 100, ...(members > MAX_PRINCIPALS ? refreshes : {}) },
        { members, services: members <= MAX_PRINCIPALS ? 1 : N.scaleSpread, latencyMs: 100, skipCheckpoints: true },
    ]);
    const settings = args.refreshes === true ? all.filter((s) => s.refreshQuotaPerMinute !== undefined) : all;
    return { defaultParallel: 4 * os.availableParallelism(), ...await scaleRuns(settings, log) };
}

/**
 * The crash journal in a `gs://` bucket against local disk: up / destroy of 1,000 Members on one policy at 100 ms
 * API latency, the bucket a GCS emulator behind a proxy adding GCS's ~30 ms a request; the two interleaved.
 */
async function measureJournal(log: Log): Promise<JournalFigures | Missing> {
    const missing = quick ? "--quick" : toolsMissing(["pulumi", "pulumi-language-yaml", FAKE_GCS]);
    if (missing) {
        log(`journal figures skipped: ${missing}`);
        return { missing };
    }
    const members = N.journalMembers, apiLatencyMs = 100, bucketLatencyMs = 30, reps = N.journalReps;
    const schedule = Array.from({ length: reps }, () => [{ latencyMs: apiLatencyMs }, { latencyMs: apiLatencyMs, journalBucketMs: bucketLatencyMs }]).flat();
    const runs = await engineRuns(members, schedule, log);
    const wrong = runs.find((r) => r.upFailures || r.destroyFailures);
    if (wrong) throw new Error(`journal run: ${grantsLeftWrong(wrong)}`);
    const of = (inBucket: boolean) => {
        const at = runs.filter((r) => (r.journalBucketMs !== undefined) === inBucket);
        return { upMs: at.map((r) => r.upMs), destroyMs: at.map((r) => r.destroyMs) };
    };
    return { members, apiLatencyMs, bucketLatencyMs, local: of(false), bucket: of(true) };
}

/** Google's limit of principals in one policy. */
const MAX_PRINCIPALS = 1500;

/** 5. Under Google's rate quota: many distinct lookups, and up / destroy of many Members, against the quota floor. */
async function measureQuota(log: Log): Promise<QuotaFigures | Missing> {
    // Each quota run waits out whole quota minutes: too long for a smoke test.
    if (quick) {
        log("quota figures skipped: --quick (the lookups wait for quota minutes)");
        return { missing: `--quick: ${N.quotaLookups} lookups at ${N.quotaPerMinute} calls per minute wait for quota minutes` };
    }
    const missing = toolsMissing();
    const lookups = missing ? await protocolLookups(N.quotaLookups, log)
        : await lookupRun(N.quotaLookups, { program: "yaml", emulator: { quotaPerMinute: N.quotaPerMinute } }, log);
    const runs: QuotaRun[] = [{
        what: `${lookups.count} distinct consumer lookups, ` +
            (missing ? `plugin over its protocol at concurrency ${N.concurrency} (without the engine)` : `real engine (Pulumi YAML, ${lookups.count} fn::invoke)`),
        wallMs: lookups.wallMs,
        calls: lookups.requests - lookups.refusals,
        refusals: lookups.refusals,
        failures: lookups.failures,
        failure: lookups.failure,
    }];
    if (missing) {
        log(`quota: the engine's up / destroy skipped: ${missing}`);
        return { perMinute: N.quotaPerMinute, members: N.members, runs, engineMissing: missing };
    }
    log(`quota: up / destroy of ${N.members} members`);
    try {
        const [run] = await engineRuns(N.members, [{ latencyMs: 0 }], log, { quotaPerMinute: N.quotaPerMinute });
        const what = (op: string) => `pulumi ${op} of ${run.members} ServiceIamMembers, real engine (default parallelism)`;
        // A failure is a grant of the program that the operation left wrong: missing after up, still there after destroy.
        const failure = run.upFailures || run.destroyFailures ? grantsLeftWrong(run) : undefined;
        runs.push({ what: what("up"), wallMs: run.upMs, calls: run.upCalls - run.upRefusals, refusals: run.upRefusals,
            failures: run.upFailures, failure: run.upFailures ? failure : undefined });
        runs.push({ what: what("destroy"), wallMs: run.destroyMs, calls: run.destroyCalls - run.destroyRefusals, refusals: run.destroyRefusals,
            failures: run.destroyFailures, failure: run.destroyFailures ? failure : undefined });
    } catch (e) {
        // engineRuns stops at the first failed command: report it as this row's failure rather than lose the section.
        const message = (e instanceof Error ? e.message : String(e)).split("\n").find((l) => /error/i.test(l) && !/exited/.test(l)) ?? String(e).split("\n")[0];
        runs.push({ what: `pulumi up + destroy of ${N.members} ServiceIamMembers, real engine (default parallelism)`, failures: 1, failure: message.trim() });
    }
    return { perMinute: N.quotaPerMinute, members: N.members, runs };
}

/** Runs `node build/scripts/dist.js` with `args` (its log lines go to the bench's stderr); resolves with its wall time in ms. */
function runDist(args: string[], log: Log): Promise<number> {
    return new Promise((resolve, reject) => {
        const started = now();
        const child = spawn(process.execPath, [path.join(ROOT, "build", "scripts", "dist.js"), ...args], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
            err += d.toString();
            const lines = err.split("\n");
            err = lines.pop()!;
            for (const line of lines) if (line.trim()) log(`  ${line}`);
        });
        // The build's own steps time out well before this; a build that hangs must not hold the bench forever.
        const timer = setTimeout(() => child.kill("SIGKILL"), 30 * 60_000);
        child.once("error", reject);
        child.once("close", (code, signal) => {
            clearTimeout(timer);
            if (err.trim()) log(`  ${err.trim()}`);
            if (code === 0) resolve(now() - started);
            else reject(new Error(`node build/scripts/dist.js ${args.join(" ")} failed (${signal ?? `exit ${code}`})`));
        });
    });
}

/**
 * 6. The release build: `npm run dist` for every platform into a fresh folder, timed; again into another, and the
 * two SHA256SUMS compared (identical: the build is reproducible); the first run's tarball sizes.
 */
async function measureDist(log: Log): Promise<DistFigures | Missing> {
    if (quick) {
        log("dist figures skipped: --quick (two release builds take minutes)");
        return { missing: "--quick: two builds of every platform's tarball take minutes" };
    }
    fs.mkdirSync(BENCH_DIR, { recursive: true });
    const dirs = [fs.mkdtempSync(path.join(BENCH_DIR, "dist-")), fs.mkdtempSync(path.join(BENCH_DIR, "dist-"))];
    try {
        const ms: number[] = [];
        for (const [i, dir] of dirs.entries()) {
            log(`dist: run ${i + 1} of 2, every platform (${PLATFORMS.map(platformKey).join(", ")}) into ${path.relative(ROOT, dir)}`);
            ms.push(await runDist(["--out", dir], log));
        }
        const sums = dirs.map((dir) => fs.readFileSync(path.join(dir, CHECKSUMS), "utf8"));
        const lines = sums.map((text) => new Set(text.split("\n").filter((l) => l !== "")));
        const differing = [...lines[0]].filter((l) => !lines[1].has(l)).map((l) => l.split(/\s+/).pop()!);
        return {
            firstMs: ms[0],
            secondMs: ms[1],
            reproducible: sums[0] === sums[1],
            differing,
            tarballs: PLATFORMS.map((p) => ({
                platform: platformKey(p),
                packaging: p.node ? "self-contained" as const : "folder" as const,
                bytes: fs.statSync(path.join(dirs[0], assetName(p, PACKAGE_VERSION))).size,
            })),
        };
    } finally {
        for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** The commit measured, and whether tracked files had changes. */
function commit(): string {
    try {
        const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
        const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
        return dirty ? `${head} with uncommitted changes` : head;
    } catch {
        return "unknown (not a git checkout)";
    }
}

async function main(): Promise<void> {
    const runs = (s: Section) => !only || only.includes(s);
    const log: Log = (m) => process.stderr.write(`bench: ${m}\n`);
    const at = new Date();
    const measured = commit();
    const results: Results = {};

    let installed: Installed | undefined;
    if (runs("start") || runs("memory")) {
        log("building the plugins when stale (scripts/dist.ts --unpacked, into build/test-dist): the self-contained linux-amd64 " +
            `executable and the ${platformKey(FOLDER_PLATFORM)} folder (today's launcher); copying them under ${path.relative(ROOT, INSTALL_DIR)}`);
        installed = { executable: installPlugin(HOST_PLATFORM), launcher: installPlugin(FOLDER_PLATFORM) };
    }
    if (runs("start")) results.start = await measureStart(installed!, log);
    if (runs("memory") || runs("invoke")) {
        const emu = await startEmulator();
        try {
            if (runs("memory")) results.memory = await measureMemory(emu, installed!, log);
            if (runs("invoke")) results.invoke = await measureInvoke(emu, log);
        } finally {
            emu.child.kill("SIGINT");
        }
    }
    if (runs("reads")) results.reads = await measureReads(log);
    if (runs("engine")) results.engine = await measureEngine(log);
    if (runs("quota")) results.quota = await measureQuota(log);
    if (runs("scale")) results.scale = await measureScale(log);
    if (runs("journal")) results.journal = await measureJournal(log);
    // Last: two release builds keep both cores busy for minutes, which must not overlap any timed figure above.
    if (runs("dist")) results.dist = await measureDist(log);

    const rows = rowsFor(results);
    process.stdout.write(`${table(rows)}\n`);
    // Every section run printed each of its figures: what makes `npm run bench -- --quick` a smoke test of the script.
    const missing = missingFigures(rows, SECTIONS.filter(runs));
    if (missing.length) throw new Error(`the run printed no figure for ${missing.join("; ")}`);
    const cpu = os.cpus()[0]?.model ?? "unknown CPU";
    const doc = document(results, {
        at,
        commit: measured,
        machine: `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`,
        counts: `start ${N.startReps} repetitions; memory ${N.warmup} warm-up + ${N.memoryInvokes} invokes; ` +
            `reads ${N.readPolicies} policies of ${N.readMembers} members, ${N.readParallel} at once; invokes ${N.invokes} × ${N.throughputReps} at ` +
            `concurrency ${N.concurrency}; coalescing ${N.coalesce}; engine ${N.members} Members, ${N.engineReps} repetitions per latency; ` +
            `quota ${N.quotaPerMinute} calls per minute, ${N.quotaLookups} lookups and ${N.members} Members, once each; ` +
            `scale ${N.scaleMembers.join(", ")} Members at 100 ms (one policy up to 1,500; ${N.scaleSpread} policies; PULUMI_SKIP_CHECKPOINTS; the quota up to 1,000; ` +
            `refresh, preview --refresh and up --refresh on one policy, or ${N.scaleSpread} past 1,500, without and with the quota), once each; ` +
            `dist every platform's tarball (${PLATFORMS.length}), twice`,
        quick,
        only,
    });
    const out = typeof args.out === "string" ? path.resolve(args.out) : args.write ? path.join(ROOT, "BENCHMARKS.md") : path.join(ROOT, "build", "benchmarks.md");
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, doc);
    log(`wrote ${path.relative(process.cwd(), out)}`);
}

/** What is wrong with the command line, if anything. */
function usageError(): string | undefined {
    const unknown = (only ?? []).filter((s) => !(SECTIONS as readonly string[]).includes(s));
    if (unknown.length) return `--only: unknown section(s) ${unknown.join(", ")}; the sections are ${SECTIONS.join(", ")}`;
    if (args.write && (quick || only)) return "--write records a full run in BENCHMARKS.md: not with --quick or --only";
    if (args["journal-members"] !== undefined) {
        if (!only?.includes("journal")) return "--journal-members sizes the journal section: give it with --only journal";
        if (!(Number.isInteger(N.journalMembers) && N.journalMembers > 0)) return `--journal-members: a whole number above 0, not ${String(args["journal-members"])}`;
    }
    return undefined;
}

const usage = usageError();
if (usage) {
    process.stderr.write(`bench: ${usage}\n`);
    process.exit(2);
}
main().then(() => process.exit(0), (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
});
