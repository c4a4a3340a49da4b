// Smoke test of `npm run bench`: with tiny counts it runs every measurement and prints every figure; and the
// document's analysis is generated from the figures it is given. No timing is asserted here (these machines are
// noisy); the figures live in BENCHMARKS.md.

import { expect } from "chai";
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { analysis, document, Results, rowsFor } from "../../bench/report";

const ROOT = path.join(__dirname, "..", "..", "..");

describe("benchmark script", function () {
    this.timeout(120_000);

    it("measures every figure with --quick and writes build/benchmarks.md", async () => {
        const script = path.join(__dirname, "..", "..", "bench", "bench.js");
        const out = await new Promise<string>((resolve, reject) =>
            execFile(process.execPath, [script, "--quick"], { timeout: 110_000 }, (err, stdout, stderr) =>
                (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));
        for (const figure of ["start: installed plugin, spawn → port", "start: node printing a line (Node floor)", "start: bare @grpc/grpc-js",
            "start: toy provider", "start: dev launcher", "memory: RSS idle after Configure (installed plugin)", "memory: RSS idle after Configure (dev launcher)",
            "invoke: plugin over gRPC", "invoke: raw keep-alive HTTP", "invoke: googleapis", "coalescing: 100 identical", "emulator: getIamPolicy capacity"]) {
            expect(out, figure).to.contain(`| ${figure}`);
        }
        // The goal is checked against the Go floor, or not at all.
        expect(out).to.match(/\| start: installed plugin, spawn → port \| \d+ ms \| [^|]*node floor[^|]* \| ≤ 63 ms \(the Go peer's figure\)[^|]* \| (yes|no)? \|/);
        expect(out.includes("| start: bare grpc-go server (Go floor)")).to.equal(/\| (yes|no) \|/.test(out.split("\n")[2]));
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
        start: { reps: 15, installed: 120, dev: 130, node: 70, nodeNoCa: 25, grpcJs: 100, stock: 150, go: 5 },
        memory: { warmup: 2000, invokes: 10_000, idleMb: 57, warmMb: 75, afterMb: 78, devIdleMb: 58 },
        engine: {
            members: 100, reps: 3, lookups: { count: 100, upMs: 5000, calls: 100 },
            latencies: [
                { latencyMs: 0, upMs: [10_000, 9_000, 11_000], destroyMs: [8_000, 8_000, 8_000], upCalls: [27, 27, 28], destroyCalls: [27, 27, 27] },
                { latencyMs: 100, upMs: [13_000, 12_000, 20_000], destroyMs: [9_000, 9_000, 9_000], upCalls: [27, 27, 27], destroyCalls: [27, 27, 27] },
            ],
        },
    };

    it("judges the goals from the figures, engine ratio from the medians", () => {
        const rows = rowsFor(results);
        const row = (prefix: string) => rows.find((r) => r.figure.startsWith(prefix))!;
        expect(row("start: installed plugin")).to.include({ value: "120 ms", ratio: "24.00× Go floor, 1.71× node floor", met: false });
        expect(row("memory: RSS after 10000")).to.include({ met: true });
        expect(row("engine: pulumi up at 100 ms latency vs 0 ms")).to.include({ value: "1.30×", met: true });
        expect(row("engine: pulumi up, 100 ServiceIamMembers, 0 ms")).to.include({ value: "10.0 s (9.0–11.0 s)", ratio: "27–28 API calls", met: true });
    });

    it("writes an analysis computed from the same figures", () => {
        const text = analysis(results).join("\n");
        expect(text).to.contain("**Goals**: 8 of 9 met; not met: start: installed plugin, spawn → port — 120 ms, 24.00× Go floor, 1.71× node floor, goal ≤ 63 ms");
        expect(text).to.contain("missed by 57 ms");
        expect(text).to.contain("70 ms of it (58%) is Node starting");
        expect(text).to.contain("The Node floor alone is 7 ms over the 63 ms goal");
        expect(text).to.contain("costs 45 ms at every Node start");
        expect(text).to.contain("1.30× (goal ≤ 1.5×: met)");
    });

    it("leaves out the Go floor and the goal check when the tools are not built", () => {
        const noGo: Results = { start: { ...results.start!, nodeNoCa: undefined, node: 40, go: { missing: "the tools are not built: run `npm run tools`" } } };
        const rows = rowsFor(noGo);
        expect(rows.map((r) => r.figure)).not.to.include("start: bare grpc-go server (Go floor)");
        expect(rows[0].met).to.equal(undefined);
        const doc = document(noGo, { at: new Date(0), commit: "abc", machine: "m", counts: "c", quick: false });
        expect(doc).to.contain("Run: 1970-01-01T00:00:00.000Z (UTC), commit abc, full counts.");
        expect(doc).to.contain("is not checked: the Go floor was not measured (the tools are not built");
        expect(doc).to.contain("That leaves 23 ms over the Node floor");
        expect(doc).not.to.contain("NODE_EXTRA_CA_CERTS unset, the Node floor");
    });
});
