// Smoke test of `npm run bench`: with tiny counts its invoke section runs and prints its figures (the whole
// `--quick` run, which checks itself, is `npm run bench -- --quick`); every section's figures, and the document's
// analysis, are generated from the figures they are given. No timing is asserted here (these machines are
// noisy); the figures live in BENCHMARKS.md.

import { expect } from "chai";
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { quotaRatios } from "../../bench/engine";
import { analysis, document, FIGURES, missingFigures, Results, rowsFor, table } from "../../bench/report";

const ROOT = path.join(__dirname, "..", "..", "..");

describe("benchmark script", function () {
    this.timeout(60_000);

    // The whole `--quick` run (start, memory and invoke: ~30 s of process starts and loads) is `npm run bench -- --quick`,
    // which fails when a section it ran printed no figure of FIGURES (missingFigures, tested below on figures given).
    // Here the invoke section only, a few seconds: the script itself runs (its emulator, the plugin, the clients, the
    // table and document), and the coalescing it measures is the plugin's.
    it("measures the invoke figures with --quick --only invoke and writes build/benchmarks.md", async () => {
        const script = path.join(__dirname, "..", "..", "bench", "bench.js");
        const out = await new Promise<string>((resolve, reject) =>
            execFile(process.execPath, [script, "--quick", "--only", "invoke"], { timeout: 55_000 }, (err, stdout, stderr) =>
                (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));
        for (const figure of ["invoke: plugin over gRPC", "invoke: raw keep-alive HTTP", "invoke: googleapis", "coalescing: 100 identical", "emulator: getIamPolicy capacity"]) {
            expect(out, figure).to.contain(`| ${figure}`);
        }
        const figures = out.split("\n").filter((l) => l.startsWith("| ")).map((l) => l.slice(2));
        expect(missingFigures(figures.map((figure) => ({ figure, value: "", ratio: "", goal: "" })), ["invoke"])).to.deep.equal([]);
        expect(out).to.match(/coalescing: 100 identical concurrent lookups \| 1 upstream/);
        expect(out).to.match(/coalescing: 100 distinct concurrent lookups \| 100 upstream/);
        const doc = fs.readFileSync(path.join(ROOT, "build", "benchmarks.md"), "utf8");
        expect(doc).to.contain("`--quick` counts");
        expect(doc).to.match(/Run: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(UTC\), commit /);
        expect(doc).to.contain("## Analysis (generated from the run of");
    });
});

describe("benchmark document", () => {
    const results: Results = {
        start: { reps: 15, executable: 120, executableBare: 110, launcher: 100, embeddedNode: "22.23.3", pathNode: "20.20.2", dev: 130, node: 70, nodeBare: 60,
            nodeNoCa: 25, grpcJs: 100, grpcJsBare: 100, stock: 150, go: 5 },
        memory: { warmup: 2000, invokes: 10_000, idleMb: 57, warmMb: 75, afterMb: 78, launcherIdleMb: 52, devIdleMb: 58,
            anon: { idleMb: 20, warmMb: 30, afterMb: 32 }, settled: { seconds: 30, mb: 70, anonMb: 24 }, nodeIdle: { mb: 40, anonMb: 8 } },
        reads: { policies: 1000, members: 1000, parallel: 8, startMiB: 60, endMiB: 89, peakMiB: 90, calls: 1000, cpuMs: 2000, wallMs: 3000, notFound: 0 },
        engine: {
            members: 100, reps: 3, defaultParallel: 8, lookups: { count: 100, upMs: 5000, calls: 100 },
            latencies: [
                { latencyMs: 0, upMs: [1_800, 1_700, 2_100], destroyMs: [1_600, 1_600, 1_600], upCalls: [15, 15, 16], destroyCalls: [15, 15, 15] },
                { latencyMs: 100, upMs: [3_400, 3_300, 3_600], destroyMs: [3_200, 3_200, 3_200], upCalls: [15, 15, 15], destroyCalls: [15, 15, 15] },
                { latencyMs: 0, parallel: 100, upMs: [1_700, 1_700, 1_700], destroyMs: [1_500, 1_500, 1_500], upCalls: [3, 3, 3], destroyCalls: [3, 3, 3] },
                { latencyMs: 100, parallel: 100, upMs: [2_000, 2_100, 2_200], destroyMs: [1_800, 1_800, 1_800], upCalls: [3, 3, 3], destroyCalls: [3, 3, 3] },
            ],
        },
    };

    it("judges the goals from the figures, engine ratio from the medians", () => {
        const rows = rowsFor(results);
        const row = (prefix: string) => rows.find((r) => r.figure.startsWith(prefix))!;
        expect(row("start: self-contained executable (linux-amd64")).to.include({ value: "120 ms", ratio: "1.20× the grpc-js floor, 1.20× today's launcher, 1.90× the Go peer's 63 ms", met: false });
        expect(row("start: self-contained executable, empty environment")).to.include({ value: "110 ms" });
        expect(row("start: today's Node-on-PATH launcher")).to.include({ value: "100 ms" });
        expect(row("start: today's Node-on-PATH launcher").met).to.equal(undefined);
        // Issue 43's memory goal: anonymous ≤ 50 MB and RSS under the Go peer's 127 MiB after every lookup (12,000).
        expect(row("memory: RSS after 10000 more invokes (12000 in all)")).to.include({ met: true });
        expect(row("memory: RSS after 2000 warm-up").met).to.equal(undefined);
        // Issue 51: one Read of each of 1,000 policies of 1,000 members leaves RSS at most 40 MiB above the start.
        const reads = "reads: RSS after one Read (a refresh) of each of 1000 consumer policies of 1000 members";
        expect(row(reads)).to.include({ value: "+29.0 MiB (60.0 MiB → 89.0 MiB; peak 90.0 MiB)", met: true });
        const kept = rowsFor({ reads: { ...results.reads!, endMiB: 140 } }).find((r) => r.figure.startsWith(reads));
        expect(kept?.met).to.equal(false);
        // Reported, no longer judged: up at 100 ms is judged against the engine's floor instead.
        for (const [at, value] of [["the engine's default parallelism (8)", "1.89×"], ["--parallel 100", "1.24×"]]) {
            const r = row(`engine: pulumi up at 100 ms latency vs 0 ms, ${at}`);
            expect(r).to.include({ value });
            expect(r.met).to.equal(undefined);
        }
        // 1.8 s + ⌈100 / 8⌉ = 13 writes in a row × 100 ms.
        expect(row("engine: least pulumi up can take at 100 ms, the engine's default parallelism (8)")).to.include({ value: "3.1 s", ratio: "measured 1.10× this; 1.72× the 0 ms run", met: true });
        expect(row("engine: pulumi up, 100 ServiceIamMembers, 0 ms API latency, the engine's default parallelism (8)"))
            .to.include({ value: "1.8 s (1.7–2.1 s)", ratio: "15–16 API calls", met: true });
    });

    it("prints every figure of each section, which the bench checks of its own runs; the start goal and a --quick dist as the table shows them", () => {
        const invoke = { rps: 1000, p50: 10, p99: 20, cpuClient: 0.1, cpuEmulator: 0.1 };
        const googleapis = { ...invoke, cpuClient: 0.5 };
        const all: Results = {
            ...results,
            invoke: { invokes: 200, reps: 1, concurrency: 32, plugin: { ...invoke, cpuPlugin: 0.2 }, raw: invoke, googleapis,
                go: { missing: "the tools are not built" }, coalesce: { lookups: 100, identical: 1, distinct: 100 }, capacity: 6000 },
            dist: { missing: "--quick: two builds of every platform's tarball take minutes" },
            journal: { members: 1000, apiLatencyMs: 100, bucketLatencyMs: 30, local: { upMs: [100_000, 90_000], destroyMs: [80_000, 80_000] },
                bucket: { upMs: [100_000, 98_000], destroyMs: [90_000, 90_000] } },
        };
        const out = table(rowsFor(all));
        // The journal in a bucket, judged against local disk: up 1.04× (met), destroy 1.13× (not).
        expect(rowsFor(all).filter((r) => r.figure.startsWith("journal: ")).map((r) => [r.ratio, r.met])).to.deep.equal([
            ["1.04× local disk's 95000 ms", true], ["1.13× local disk's 80000 ms", false]]);
        for (const figure of ["start: self-contained executable (linux-amd64", "start: self-contained executable, empty environment",
            "start: today's Node-on-PATH launcher", "start: node printing a line (Node floor)", "start: bare @grpc/grpc-js", "start: toy provider",
            "start: dev launcher", "memory: RSS idle after Configure (self-contained executable)",
            "memory: RSS idle after Configure (today's Node-on-PATH launcher)", "memory: RSS idle after Configure (dev launcher)",
            "invoke: plugin over gRPC", "invoke: raw keep-alive HTTP", "invoke: googleapis", "coalescing: 100 identical", "emulator: getIamPolicy capacity"]) {
            expect(out, figure).to.contain(`| ${figure}`);
        }
        expect(missingFigures(rowsFor(all), Object.keys(FIGURES))).to.deep.equal([]);
        // The JavaScript client's ceiling: googleapis's 0.6 ms per call over the client's and the emulator's 0.2 ms on the plugin path.
        expect(analysis(all).join("\n")).to.contain("at most 3.00× googleapis (its 0.60 ms per call) on this path.");
        // Judged through the engine's grpc-go client (issue 43): without it, no invoke row is judged.
        expect(out).to.match(/\| invoke: plugin over gRPC \|[^|]*\|[^|]*\| \(a JavaScript client: reported/);
        const go = { ...invoke, rps: 1600 };
        const judged = rowsFor({ invoke: { ...all.invoke!, go } }).find((r) => r.figure.startsWith("invoke: plugin, called by the engine's grpc-go client"));
        expect(judged).to.include({ goal: "≥ 1.5× googleapis (issue 43; the raw ratio is reported, not judged)", met: true });
        // A section that ran and printed nothing is named, each of its figures.
        expect(missingFigures(rowsFor({ invoke: all.invoke }), ["start", "invoke"])).to.have.length(FIGURES.start.length).and.to.include(`start: ${FIGURES.start[0].source}`);
        // Issue 43's start goal, judged against the grpc-js floor measured in the same run.
        expect(out).to.match(/\| start: self-contained executable \(linux-amd64[^|]*\| \d+ ms \| [\d.]+× the grpc-js floor, [\d.]+× today's launcher, [\d.]+× the Go peer's 63 ms \| ≤ the grpc-js floor measured in this run \(issue 43\) \| (yes|no) \|/);
        expect(out).to.match(/\| dist: npm run dist, every platform \| not measured \| --quick/);
    });

    it("writes an analysis computed from the same figures", () => {
        const text = analysis(results).join("\n");
        // The grpc-js floor (100 ms) is the start goal: said so, with the executable's ratio to it.
        expect(text).to.contain("the executable's Node prints a line in 60 ms. A bare @grpc/grpc-js server, bundled into one file as the plugin is and run by " +
            "the same Node with its compile cache, takes 100 ms (1.67× the Node floor): what serving gRPC with @grpc/grpc-js costs before any provider " +
            "code runs, and the start goal. The executable, which serves the provider, takes 1.10× that floor.");
        expect(table(rowsFor(results))).to.contain("| memory: RSS after 10000 more invokes (12000 in all) | 78.0 MB (anonymous 32.0 MB) |");
        expect(text).to.contain("Of the executable's RSS, 20.0 MB idle and 32.0 MB at the end is its own (anonymous) memory; the rest (37.0 MB to 46.0 MB) " +
            "is its file's pages mapped from the page cache. Left idle, 30 s after its last invoke it holds 70.0 MB (anonymous 24.0 MB). " +
            "The executable's Node alone, idle, holds 40.0 MB (anonymous 8.0 MB).");
        expect(table(rowsFor(results))).to.contain("| memory: RSS 30 s after the last invoke, idle (V8 shrinks its heap on its own timers) | 70.0 MB (anonymous 24.0 MB) | -10.3% vs the end of the invokes |");
        expect(text).to.contain("**Goals**: 11 of 14 met; not met: start: self-contained executable (linux-amd64, Node 22.23.3 inside), spawn → port — 120 ms");
        const rows = table(rowsFor(results));
        expect(rows).to.contain("| start: self-contained executable, empty environment (`env -i`: a user without Node) | 110 ms | 1.83× the Node floor in an empty environment, ");
        expect(rows).to.contain("| ≤ the grpc-js floor measured in this run (issue 43) | no |");
        expect(text).to.contain("in the same rounds (20 ms over the launcher). The goal, no slower than the grpc-js floor of this run (100 ms), is not met: 20 ms over it.");
        expect(text).to.contain("of the launcher's 100 ms, 25 ms (25%) is Node starting and printing a line (the Node floor, as the launcher starts Node");
        expect(text).to.contain("`node` takes 70 ms");
        expect(text).to.contain("45 ms that the launcher defers");
        expect(text).to.contain("so 100 Creates need 13 writes one after another: at 100 ms that is 1.3 s on top of the 0 ms run, so up cannot take less than 3.1 s");
        // Each parallelism judged against its own floor: 3.4 s over 3.1 s, and 2.1 s over 1.7 s + 1 write of 100 ms.
        expect(text).to.contain("(1.72× the 0 ms run); measured 1.10× that floor (goal ≤ 1.1×: met)");
        expect(text).to.contain("at --parallel 100, 1 write in a row: a floor of 1.8 s; measured 1.17× that floor (goal ≤ 1.1×: not met)");
    });

    it("judges each refreshing command of a scale run by its reads per policy, and with the quota by its wall without it (issue 43)", () => {
        const phase = (ms: number, calls: number) => ({ ms, calls, refusals: 0, cpuS: 1, peakRssMiB: 80, failures: 0 });
        const refreshes = {
            without: { "refresh": phase(10_000, 1), "preview --refresh": phase(12_000, 1), "up --refresh": phase(20_000, 2) },
            quota: { "refresh": phase(10_500, 1), "preview --refresh": phase(14_000, 1), "up --refresh": phase(21_000, 3) },
        };
        const run = { members: 250, services: 1, latencyMs: 100, refreshQuotaPerMinute: 120, up: phase(9_000, 34), preview: phase(1_000, 0),
            destroy: phase(9_000, 34), refreshes };
        const rows = rowsFor({ scale: { defaultParallel: 8, runs: [run], failed: [] } });
        const row = (figure: string) => rows.find((r) => r.figure === figure)!;
        expect(row("scale: pulumi refresh, 250 Members over one policy, 100 ms latency")).to.include({ value: "10.0 s; 1 API calls", goal: "≤ 2 calls (2 × 1 policy)", met: true });
        expect(row("scale: pulumi refresh, 250 Members over one policy, 100 ms latency, quota 120/min")).to.include({ met: true });
        expect(row("scale: pulumi preview --refresh, 250 Members over one policy, 100 ms latency, quota 120/min").ratio).to.match(/^1\.17× the wall without the quota/);
        expect(row("scale: pulumi preview --refresh, 250 Members over one policy, 100 ms latency, quota 120/min").met).to.equal(false);
        expect(row("scale: pulumi up --refresh, 250 Members over one policy, 100 ms latency, quota 120/min")).to.include({ met: false }); // 3 calls
        expect(row("scale: pulumi up --refresh, 250 Members over one policy, 100 ms latency")).to.include({ met: true });
    });

    it("judges a refreshing command with the quota by the median of its runs' ratios, not one run's noise (issue 43)", () => {
        const phase = (ms: number, calls: number) => ({ ms, calls, refusals: 0, cpuS: 1, peakRssMiB: 80, failures: 0 });
        const refreshes = {
            without: { "refresh": phase(10_000, 1), "preview --refresh": phase(10_000, 1), "up --refresh": phase(20_000, 2) },
            quota: { "refresh": phase(12_900, 1), "preview --refresh": phase(10_000, 1), "up --refresh": phase(20_000, 2) },
            // One run 1.29× (the machine busy during it), the others even: met.
            ratios: { "refresh": [1.29, 0.98, 1.02], "preview --refresh": [1.2, 1.15, 0.9], "up --refresh": [1, 1, 1] },
        };
        const run = { members: 1000, services: 1, latencyMs: 100, refreshQuotaPerMinute: 120, up: phase(9_000, 34), preview: phase(1_000, 0),
            destroy: phase(9_000, 34), refreshes };
        const rows = rowsFor({ scale: { defaultParallel: 8, runs: [run], failed: [] } });
        const row = (op: string) => rows.find((r) => r.figure === `scale: pulumi ${op}, 1000 Members over one policy, 100 ms latency, quota 120/min`)!;
        expect(row("refresh")).to.include({ met: true });
        expect(row("refresh").ratio).to.match(/^1\.02× the wall without the quota, the median of 3 runs' ratios to the runs around them \(1\.29, 0\.98, 1\.02\)/);
        expect(row("preview --refresh")).to.include({ met: false }); // median 1.15
    });

    it("compares each refreshing run with the quota to the runs without it on both sides, so that a machine's drift is no cost of the quota (issue 43)", () => {
        // A machine getting 0.1 s slower per command, the quota costing nothing: free, quota, free, quota, free, quota, free.
        const walls = [2600, 2700, 2800, 2900, 3000, 3100, 3200];
        const free = walls.filter((_, i) => i % 2 === 0);
        const paced = walls.filter((_, i) => i % 2 === 1);
        expect(quotaRatios(free, paced)).to.deep.equal([1, 1, 1]);
        // The quota costing a tenth on a steady machine shows as such.
        expect(quotaRatios([1000, 1000, 1000, 1000], [1100, 1100, 1100]).map((r) => r.toFixed(2))).to.deep.equal(["1.10", "1.10", "1.10"]);
        expect(() => quotaRatios([1000, 1000], [1000, 1000])).to.throw(RangeError);
    });

    describe("under the rate quota", () => {
        const quota: Results = {
            quota: {
                perMinute: 120, members: 100, runs: [
                    { what: "300 distinct consumer lookups, real engine", wallMs: 165_000, calls: 300, refusals: 2, failures: 0 },
                    { what: "pulumi up of 100 ServiceIamMembers, real engine", wallMs: 200_000, calls: 300, refusals: 0, failures: 0 },
                    { what: "pulumi destroy of 100 ServiceIamMembers, real engine", wallMs: 20_000, calls: 30, refusals: 0, failures: 3,
                        failure: "0 of 100 Members not granted after up, 3 still granted after destroy" },
                ],
            },
        };
        /** The quota section when the engine's up / destroy failed before anything was timed. */
        const failedEngine: Results = {
            quota: {
                perMinute: 120, members: 100, runs: [
                    { what: "300 distinct consumer lookups, real engine", wallMs: 140_000, calls: 300, refusals: 0, failures: 0 },
                    { what: "pulumi up + destroy of 100 ServiceIamMembers, real engine", failures: 1, failure: "error: quota | spent" },
                ],
            },
        };
        const row = (r: Results, prefix: string) => rowsFor(r).find((x) => x.figure.startsWith(`quota (120 calls/min): ${prefix}`))!;

        it("judges each run against the quota floor (calls ÷ the quota per minute) where the calls exceed a minute's quota", () => {
            expect(row(quota, "300 distinct")).to.deep.include({
                value: "165.0 s; 300 API calls, 2 answered 429 for quota, 0 failed",
                ratio: "1.10× the quota floor (150.0 s = 300 calls ÷ 120/min)", goal: "0 failed, ≤ 1.2× the floor", met: true,
            });
            expect(row(quota, "pulumi up")).to.deep.include({ ratio: "1.33× the quota floor (150.0 s = 300 calls ÷ 120/min)", met: false });
            // 30 calls fit in the first minute's quota: only failures count, and there were some.
            expect(row(quota, "pulumi destroy")).to.deep.include({
                value: "20.0 s; 30 API calls, 0 answered 429 for quota, 3 failed (first: 0 of 100 Members not granted after up, 3 still granted after destroy)",
                goal: "0 failed (the floor is not a bound)", met: false,
            });
            const text = analysis(quota).join("\n");
            expect(text).to.contain("**Goals**: 1 of 3 met");
            expect(text).to.contain("300 distinct consumer lookups, real engine: 165.0 s for 300 API calls, 1.10× the quota floor of 150.0 s, " +
                "2 answered 429 for quota, 0 failed (goal: met)");
            expect(text).to.contain("pulumi destroy of 100 ServiceIamMembers, real engine: 20.0 s for 30 API calls, within one minute's quota " +
                "(its floor, 15.0 s, is not a bound), 0 answered 429 for quota, 3 failed");
        });

        it("reports an engine run that failed before it was timed as not timed, with no ratio", () => {
            expect(row(failedEngine, "pulumi up + destroy")).to.deep.include({
                value: "not timed, 1 failed (first: error: quota \\| spent)", ratio: "", goal: "0 failed", met: false,
            });
            const doc = document(failedEngine, { at: new Date(0), commit: "abc", machine: "m", counts: "c", quick: false });
            expect(doc).to.contain("pulumi up + destroy of 100 ServiceIamMembers, real engine: not timed, 1 failed (first: error: quota | spent) (goal: not met)");
            expect(doc).not.to.match(/NaN|the quota floor \(0\.0 s\)|\b0 API calls/);
        });

        it("names the engine runs' Members from the figures when they were skipped", () => {
            const skipped: Results = { quota: { perMinute: 120, members: 40, runs: [], engineMissing: "the tools are not built" } };
            expect(rowsFor(skipped)).to.deep.include({ figure: "quota (120 calls/min): pulumi up / destroy of 40 ServiceIamMembers", value: "skipped",
                ratio: "the tools are not built", goal: "" });
        });
    });

    it("judges the release build's time and reproducibility, and sets the tarballs beside the Go provider's", () => {
        const dist: Results = {
            dist: {
                firstMs: 190_000, secondMs: 60_000, reproducible: false, differing: ["pulumi-resource-cloud-v8.38.0-windows-amd64.tar.gz"],
                tarballs: [{ platform: "linux-amd64", packaging: "self-contained", bytes: 42_500_000 }, { platform: "darwin-amd64", packaging: "folder", bytes: 400_000 }],
            },
        };
        const rows = rowsFor(dist);
        const row = (prefix: string) => rows.find((r) => r.figure.startsWith(prefix))!;
        expect(row("dist: npm run dist, every platform")).to.include({ value: "190.0 s", ratio: "second run 60.0 s", met: false });
        expect(row("dist: the two runs' SHA256SUMS")).to.include({ value: "differ (pulumi-resource-cloud-v8.38.0-windows-amd64.tar.gz)", met: false });
        expect(row("dist: tarball linux-amd64")).to.include({ value: "42.5 MB", ratio: "0.85× Pulumi GCP's linux-amd64 tarball" });
        expect(row("dist: Pulumi GCP's linux-amd64 plugin tarball")).to.include({ value: "50.3 MB" });
        expect(row("dist: Pulumi GCP's linux-amd64 plugin tarball").met).to.equal(undefined);
        expect(analysis(dist).join("\n")).to.contain("the build is not reproducible (goal not met)");
    });

    it("leaves out the Go floor when the tools are not built", () => {
        const noGo: Results = { start: { ...results.start!, nodeNoCa: undefined, node: 40, go: { missing: "the tools are not built: run `npm run tools`" } } };
        const rows = rowsFor(noGo);
        expect(rows.map((r) => r.figure)).not.to.include("start: bare grpc-go server (Go floor)");
        // Issue 19's goal needs no Go floor: it is judged against today's launcher.
        expect(rows[0].met).to.equal(false);
        const doc = document(noGo, { at: new Date(0), commit: "abc", machine: "m", counts: "c", quick: false });
        expect(doc).to.contain("Run: 1970-01-01T00:00:00.000Z (UTC), commit abc, full counts.");
        expect(doc).to.contain("(the Go floor was not measured: the tools are not built");
        expect(doc).to.contain("of the launcher's 100 ms, 40 ms (40%) is Node starting and printing a line (the Node floor)");
        expect(doc).not.to.contain("NODE_EXTRA_CA_CERTS as this environment sets it");
    });
});
