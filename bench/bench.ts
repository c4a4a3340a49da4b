// `npm run bench`: measures the plugin against its floors and peers in one run, interleaved, several
// repetitions, medians reported; prints a table and writes it to build/benchmarks.md (BENCHMARKS.md only when
// asked). Loopback only, bounded in time.
//
//   npm run bench               # full counts (a few minutes); with the tools built, the real engine too
//   npm run bench -- --write    # the same, and rewrite BENCHMARKS.md
//   npm run bench -- --quick    # tiny counts, no engine (smoke test)

import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import minimist from "minimist";
import { execFileSync } from "child_process";
import { spawnEmulator } from "../emulator";
import { CONSUMERS_FN, Plugin } from "../tests/support/plugin";
import { toolsMissing } from "../tests/e2e/support";
import { engineRuns, lookupRun } from "./engine";

const ROOT = path.join(__dirname, "..", "..");
const PLUGIN = path.join(ROOT, "bin", "pulumi-resource-cloud");
const FIXTURES = path.join(ROOT, "bench", "fixtures");
const TOKEN = "ya29.bench-token";
const SERVICE = "bench.endpoints.bench-project.cloud.goog";

const args = minimist(process.argv.slice(2), { boolean: ["quick", "write"], string: ["out"] });
const quick = args.quick === true;
const N = {
    startReps: quick ? 3 : 15,
    invokes: quick ? 200 : 2000,
    memoryInvokes: quick ? 500 : 10_000,
    warmup: quick ? 100 : 2000,
    coalesce: quick ? 100 : 1000,
    capacitySeconds: quick ? 0.5 : 3,
    throughputReps: quick ? 1 : 3,
    concurrency: 32,
    /** ServiceIamMembers in the engine figures. */
    members: 100,
};

const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** Spawn → first stdout line, in ms. */
function timeToPort(cmd: string, argv: string[]): Promise<number> {
    return new Promise((resolve, reject) => {
        const started = now();
        const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "ignore"] });
        child.stdout!.once("data", () => {
            const ms = now() - started;
            child.kill("SIGKILL");
            resolve(ms);
        });
        child.once("error", reject);
    });
}

/** CPU time (user + system) a process has used, in ms. */
function cpuMs(pid: number): number {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
}

function rssKb(pid: number): number {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
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
    return (i) => new Promise<void>((resolve, reject) => {
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
        req.on("error", reject);
        req.end(body);
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

async function startPlugin(emu: Emu): Promise<Plugin> {
    const plugin = await Plugin.start();
    await plugin.configure(undefined, {
        "cloud:config:serviceManagementCustomEndpoint": emu.url,
        "cloud:config:accessToken": TOKEN,
    });
    return plugin;
}

/** The engine's own client (grpc-go, pulumirpc stubs) from `npm run tools`, when it is built. */
function goClient(): string | undefined {
    try {
        const bin = execFileSync("bash", [path.join(ROOT, "scripts", "tools.sh"), "--check"], { stdio: ["ignore", "pipe", "ignore"] })
            .toString().trim().split("\n").pop()!;
        return fs.existsSync(path.join(bin, "invoke-load")) ? path.join(bin, "invoke-load") : undefined;
    } catch {
        return undefined;
    }
}

interface GoRun { rps: number; p50Ms: number; p99Ms: number; cpuMs: number; errors: number }

function runGoClient(bin: string, plugin: Plugin, calls: number): Promise<GoRun> {
    return new Promise((resolve, reject) => {
        const args = ["-addr", `127.0.0.1:${plugin.port}`, "-token", CONSUMERS_FN, "-n", String(calls), "-c", String(N.concurrency),
            "-args", JSON.stringify({ serviceName: SERVICE, consumerProject: "consumer-%05d" })];
        const child = spawn(bin, args, { stdio: ["ignore", "pipe", "inherit"] });
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

interface Row {
    figure: string;
    value: string;
    ratio: string;
    goal: string;
    met?: boolean;
}

async function main(): Promise<void> {
    const rows: Row[] = [];
    const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

    // 1. Start time: interleaved repetitions of the three processes.
    log(`start time, ${N.startReps} interleaved repetitions`);
    const starts = { plugin: [] as number[], floor: [] as number[], stock: [] as number[] };
    for (let r = 0; r < N.startReps; r++) {
        starts.plugin.push(await timeToPort(PLUGIN, []));
        starts.floor.push(await timeToPort(process.execPath, [path.join(FIXTURES, "floor.js")]));
        starts.stock.push(await timeToPort(process.execPath, [path.join(FIXTURES, "stock-provider.js")]));
    }
    const [sp, sf, ss] = [median(starts.plugin), median(starts.floor), median(starts.stock)];
    rows.push({ figure: "start: plugin, spawn → port", value: `${sp.toFixed(0)} ms`, ratio: `${(sp / sf).toFixed(2)}× floor, ${(sp / ss).toFixed(2)}× stock`,
        goal: "≤ 1.3× floor, < stock", met: sp <= 1.3 * sf && sp < ss });
    rows.push({ figure: "start: bare @grpc/grpc-js server (floor)", value: `${sf.toFixed(0)} ms`, ratio: "1.00×", goal: "" });
    rows.push({ figure: "start: toy provider on stock provider.main (peer)", value: `${ss.toFixed(0)} ms`, ratio: `${(ss / sf).toFixed(2)}× floor`, goal: "" });

    const emu = await startEmulator();
    try {
        // 2. Memory: idle after Configure, after warm-up, after many invokes.
        log(`memory, ${N.memoryInvokes} invokes`);
        const mem = await startPlugin(emu);
        await sleep(300);
        const idle = rssKb(mem.child.pid!);
        await pool(N.warmup, N.concurrency, pluginClient(mem));
        await sleep(300);
        const warm = rssKb(mem.child.pid!);
        await pool(N.memoryInvokes, N.concurrency, pluginClient(mem));
        await sleep(500);
        const after = rssKb(mem.child.pid!);
        await mem.stop();
        const growth = (after / warm - 1) * 100;
        rows.push({ figure: "memory: RSS idle after Configure", value: `${(idle / 1024).toFixed(1)} MB`, ratio: "", goal: "≤ 80 MB", met: idle / 1024 <= 80 });
        rows.push({ figure: `memory: RSS after ${N.warmup} warm-up invokes (libraries loaded, code optimized)`, value: `${(warm / 1024).toFixed(1)} MB`, ratio: "", goal: "≤ 80 MB", met: warm / 1024 <= 80 });
        rows.push({ figure: `memory: RSS after ${N.memoryInvokes} more invokes`, value: `${(after / 1024).toFixed(1)} MB`,
            ratio: `${growth >= 0 ? "+" : ""}${growth.toFixed(1)}% vs warm, +${((after / idle - 1) * 100).toFixed(1)}% vs idle`,
            goal: "≤ 80 MB, growth ≤ 10%", met: growth <= 10 && after / 1024 <= 80 });

        // 3. Invoke throughput and latency, interleaved repetitions of the three clients.
        log(`throughput, ${N.invokes} calls × ${N.throughputReps} repetitions at concurrency ${N.concurrency}`);
        const plugin = await startPlugin(emu);
        const clients = {
            plugin: pluginClient(plugin),
            raw: rawClient(emu),
            googleapis: await googleapisClient(emu),
        };
        for (const c of Object.values(clients)) await pool(100, N.concurrency, c); // warm-up
        type Run = { rps: number; p50: number; p99: number; cpuPlugin: number; cpuClient: number; cpuEmulator: number };
        const runs: Record<keyof typeof clients, Run[]> = { plugin: [], raw: [], googleapis: [] };
        // The plugin as the engine calls it: grpc-go has a fraction of a JavaScript gRPC client's cost.
        const go = goClient();
        const goRuns: (GoRun & { cpuPlugin: number; cpuEmulator: number })[] = [];
        if (go) await runGoClient(go, plugin, 200); // warm-up
        for (let r = 0; r < N.throughputReps; r++) {
            if (go) {
                const before = { plugin: cpuMs(plugin.child.pid!), emulator: cpuMs(emu.child.pid!) };
                const run = await runGoClient(go, plugin, N.invokes);
                if (run.errors) throw new Error(`invoke-load: ${run.errors} calls failed`);
                goRuns.push({ ...run, cpuPlugin: (cpuMs(plugin.child.pid!) - before.plugin) / N.invokes, cpuEmulator: (cpuMs(emu.child.pid!) - before.emulator) / N.invokes });
            }
            for (const name of Object.keys(clients) as (keyof typeof clients)[]) {
                // CPU per call of each process, to see where the time goes on these 2 cores.
                const before = { plugin: cpuMs(plugin.child.pid!), emulator: cpuMs(emu.child.pid!), client: process.cpuUsage() };
                const { latencies, wallMs } = await pool(N.invokes, N.concurrency, clients[name]);
                const client = process.cpuUsage(before.client);
                runs[name].push({
                    rps: (N.invokes / wallMs) * 1000, p50: percentile(latencies, 50), p99: percentile(latencies, 99),
                    cpuPlugin: (cpuMs(plugin.child.pid!) - before.plugin) / N.invokes,
                    cpuEmulator: (cpuMs(emu.child.pid!) - before.emulator) / N.invokes,
                    cpuClient: (client.user + client.system) / 1000 / N.invokes,
                });
            }
        }
        const stat = (name: keyof typeof clients) => {
            const m = (f: (x: Run) => number) => median(runs[name].map(f));
            return { rps: m((x) => x.rps), p50: m((x) => x.p50), p99: m((x) => x.p99), cpuPlugin: m((x) => x.cpuPlugin), cpuClient: m((x) => x.cpuClient), cpuEmulator: m((x) => x.cpuEmulator) };
        };
        const [tp, tr, tg] = [stat("plugin"), stat("raw"), stat("googleapis")];
        const fmt = (s: ReturnType<typeof stat>, withPlugin = false) => `${s.rps.toFixed(0)} req/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms; ` +
            `CPU per call: ${withPlugin ? `plugin ${s.cpuPlugin.toFixed(2)} ms, ` : ""}client ${s.cpuClient.toFixed(2)} ms, emulator ${s.cpuEmulator.toFixed(2)} ms`;
        rows.push({ figure: "invoke: plugin over gRPC", value: fmt(tp, true), ratio: `${(tp.rps / tr.rps).toFixed(2)}× raw, ${(tp.rps / tg.rps).toFixed(2)}× googleapis`,
            goal: "≥ 0.6× raw, ≥ 2× googleapis", met: tp.rps >= 0.6 * tr.rps && tp.rps >= 2 * tg.rps });
        rows.push({ figure: "invoke: raw keep-alive HTTP (floor)", value: fmt(tr), ratio: "1.00×", goal: "" });
        if (go) {
            const m = (f: (x: (typeof goRuns)[number]) => number) => median(goRuns.map(f));
            const rps = m((x) => x.rps);
            rows.push({
                figure: "invoke: plugin, called by the engine's grpc-go client",
                value: `${rps.toFixed(0)} req/s, p50 ${m((x) => x.p50Ms).toFixed(1)} ms, p99 ${m((x) => x.p99Ms).toFixed(1)} ms; CPU per call: ` +
                    `plugin ${m((x) => x.cpuPlugin).toFixed(2)} ms, client ${(m((x) => x.cpuMs) / N.invokes).toFixed(2)} ms, emulator ${m((x) => x.cpuEmulator).toFixed(2)} ms`,
                ratio: `${(rps / tr.rps).toFixed(2)}× raw, ${(rps / tg.rps).toFixed(2)}× googleapis`,
                goal: "(as the engine sees it)",
            });
        } else {
            log("the engine's grpc-go client is not built (npm run tools): that figure is left out");
        }
        rows.push({ figure: "invoke: googleapis servicemanagement (peer)", value: fmt(tg), ratio: `${(tg.rps / tr.rps).toFixed(2)}× raw`, goal: "" });

        // 4. Coalescing: identical lookups in flight together share one upstream request.
        log(`coalescing, ${N.coalesce} identical and ${N.coalesce} distinct lookups`);
        await emu.admin("/__emulator/faults", { latencyMs: 200, minLatencyMs: 200 });
        await emu.admin("/__emulator/requests:reset", {});
        await Promise.all(Array.from({ length: N.coalesce }, () => clients.plugin(0)));
        const identical = (await emu.admin("/__emulator/requests")).count!;
        await emu.admin("/__emulator/requests:reset", {});
        await Promise.all(Array.from({ length: N.coalesce }, (_, i) => clients.plugin(i + 1)));
        const distinct = (await emu.admin("/__emulator/requests")).count!;
        await emu.admin("/__emulator/faults", { latencyMs: 0, minLatencyMs: 0 });
        rows.push({ figure: `coalescing: ${N.coalesce} identical concurrent lookups`, value: `${identical} upstream`, ratio: "", goal: "1", met: identical === 1 });
        rows.push({ figure: `coalescing: ${N.coalesce} distinct concurrent lookups`, value: `${distinct} upstream`, ratio: "", goal: String(N.coalesce), met: distinct === N.coalesce });
        await plugin.stop();

        // 5. Emulator capacity: its own req/s under the raw client, so it is never the bottleneck of (3).
        log(`emulator capacity, ${N.capacitySeconds}s at concurrency 64`);
        const raw64 = rawClient(emu);
        let done = 0;
        const until = now() + N.capacitySeconds * 1000;
        const started = now();
        await Promise.all(Array.from({ length: 64 }, async () => {
            while (now() < until) await raw64(done++);
        }));
        const capacity = (done / (now() - started)) * 1000;
        rows.push({ figure: "emulator: getIamPolicy capacity", value: `${capacity.toFixed(0)} req/s`, ratio: `${(capacity / tp.rps).toFixed(1)}× plugin`,
            goal: "≥ 5000 req/s", met: capacity >= 5000 });
    } finally {
        emu.child.kill("SIGINT");
    }

    // 7. What users wait for: `pulumi up` / `pulumi destroy` of many Members on one service, real engine.
    const missing = quick ? "--quick" : toolsMissing();
    if (missing) {
        log(`engine figures skipped: ${missing}`);
        rows.push({ figure: "engine: pulumi up / destroy of 100 ServiceIamMembers", value: "skipped", ratio: missing, goal: "" });
    } else {
        const runs = await engineRuns(N.members, [0, 100], log);
        for (const r of runs) {
            rows.push({ figure: `engine: pulumi up, ${r.members} ServiceIamMembers, ${r.latencyMs} ms API latency`, value: `${(r.upMs / 1000).toFixed(1)} s`,
                ratio: `${r.upCalls} API calls`, goal: "≤ 30 calls", met: r.upCalls <= 30 });
            rows.push({ figure: `engine: pulumi destroy, ${r.members} ServiceIamMembers, ${r.latencyMs} ms API latency`, value: `${(r.destroyMs / 1000).toFixed(1)} s`,
                ratio: `${r.destroyCalls} API calls`, goal: "≤ 30 calls", met: r.destroyCalls <= 30 });
        }
        const slowdown = runs[1].upMs / runs[0].upMs;
        rows.push({ figure: "engine: pulumi up at 100 ms latency vs 0 ms", value: `${slowdown.toFixed(2)}×`, ratio: "", goal: "≤ 1.5×", met: slowdown <= 1.5 });
        const lookups = await lookupRun(100, log);
        rows.push({ figure: `engine: ${lookups.count} distinct consumer lookups, TypeScript program (Automation API up)`,
            value: `${(lookups.upMs / 1000).toFixed(1)} s`, ratio: `${lookups.calls} API calls`, goal: "" });
    }

    const table = [
        "| figure | value | ratio | goal | met |",
        "|---|---|---|---|---|",
        ...rows.map((r) => `| ${r.figure} | ${r.value} | ${r.ratio} | ${r.goal} | ${r.met === undefined ? "" : r.met ? "yes" : "no"} |`),
    ].join("\n");
    process.stdout.write(`${table}\n`);
    const out = args.out ?? (args.write ? path.join(ROOT, "BENCHMARKS.md") : path.join(ROOT, "build", "benchmarks.md"));
    if (!quick) {
        const cpu = os.cpus()[0]?.model ?? "unknown CPU";
        const doc = [
            "# Benchmarks",
            "",
            "Measured by `npm run bench` in one run: each comparison interleaved, repeated, medians reported.",
            "Loopback only; the emulator runs as its own process. These machines are noisy: compare ratios within a run.",
            "",
            `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}.`,
            `Counts: start ${N.startReps} repetitions; invokes ${N.invokes} × ${N.throughputReps} at concurrency ${N.concurrency}; memory ${N.memoryInvokes} invokes; coalescing ${N.coalesce}.`,
            "",
            table,
            "",
        ].join("\n");
        // What people wrote below the marker (analysis, earlier runs) is kept; the run above it is replaced.
        const marker = "<!-- everything above is written by npm run bench -->";
        const previous = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "";
        const kept = previous.includes(marker) ? previous.slice(previous.indexOf(marker)) : `${marker}\n`;
        fs.writeFileSync(out, `${doc}\n${kept}`);
        log(`wrote ${path.relative(process.cwd(), out)}`);
    }
}

main().then(() => process.exit(0), (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
});
