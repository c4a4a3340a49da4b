// Smoke test of `npm run bench`: with tiny counts it runs every measurement and prints every figure.
// No timing is asserted here (these machines are noisy); the figures live in BENCHMARKS.md.

import { expect } from "chai";
import { execFile } from "child_process";
import * as path from "path";

describe("benchmark script", function () {
    this.timeout(120_000);

    it("measures all five figures with --quick", async () => {
        const script = path.join(__dirname, "..", "..", "bench", "bench.js");
        const out = await new Promise<string>((resolve, reject) =>
            execFile(process.execPath, [script, "--quick"], { timeout: 110_000 }, (err, stdout, stderr) =>
                (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));
        for (const figure of ["start: plugin", "start: bare @grpc/grpc-js", "start: toy provider", "memory: RSS idle after Configure",
            "invoke: plugin over gRPC", "invoke: raw keep-alive HTTP", "invoke: googleapis", "coalescing: 100 identical", "emulator: getIamPolicy capacity"]) {
            expect(out, figure).to.contain(`| ${figure}`);
        }
        expect(out).to.match(/coalescing: 100 identical concurrent lookups \| 1 upstream/);
        expect(out).to.match(/coalescing: 100 distinct concurrent lookups \| 100 upstream/);
    });
});
