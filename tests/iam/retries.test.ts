// Transient faults (429, 503, connection resets, latency) injected by the emulator are retried until the
// request timeout; permanent answers are not. Prints the figures it measured.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { CONSUMERS_FN, rpcError, SERVICE_FN, useStack } from "../support/plugin";

const TOKEN = "ya29.retries-test-token";
const SERVICE = "faulty.endpoints.my-project.cloud.goog";

describe("retries under injected faults", function () {
    this.timeout(60_000);
    const stack = useStack(TOKEN, [SERVICE]);

    const configure = (timeout: string) => stack.configure({ "cloud:config:requestTimeout": timeout });

    it("completes 1,000 distinct lookups with 20% of requests failing (429/503/reset) and random latency", async () => {
        const timeout = 60;
        await configure(`${timeout}s`);
        stack.emu.resetRequests();
        stack.emu.setFaults({ rate: 0.2, latencyMs: 30 });
        const started = Date.now();
        try {
            const results = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
                stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: `consumer-${String(i).padStart(4, "0")}` })));
            expect(results.filter((r) => r.failures.length === 0 && r.return?.policyData === "{}")).to.have.length(1000);
        } finally {
            stack.emu.setFaults({ rate: 0, latencyMs: 0 });
        }
        const wall = Date.now() - started;
        const api = stack.emu.requests.filter((r) => r.path.startsWith("/v1/services/"));
        const faults = api.filter((r) => r.status !== 200);
        const kinds = (s: number) => faults.filter((r) => r.status === s).length;
        expect(api.length - faults.length).to.equal(1000);
        expect(faults.length, "faults were injected").to.be.greaterThan(100);
        expect(wall, "within requestTimeout").to.be.lessThan(timeout * 1000);
        console.log(`      1000 lookups, 100% succeeded: ${api.length} requests, ${faults.length} retries ` +
            `(${kinds(429)} × 429, ${kinds(503)} × 503, ${kinds(0)} resets), ${wall} ms (requestTimeout ${timeout}s)`);
    });

    it("gives up with a clear error after the request timeout when every answer is 503", async () => {
        await configure("2s");
        stack.emu.setFaults({ rate: 1, kinds: ["503"] });
        const started = Date.now();
        const error = await rpcError(stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE })).finally(() => stack.emu.setFaults({ rate: 0, kinds: ["429", "503", "reset"] }));
        const elapsed = Date.now() - started;
        expect(error.details).to.match(/did not succeed within the request timeout \(\d+ attempts over [\d.]+s; raise cloud:requestTimeout/)
            .and.contain("HTTP 503 UNAVAILABLE");
        expect(elapsed, "bounded by requestTimeout, no hang").to.be.lessThan(10_000);
        console.log(`      all-faults lookup failed after ${elapsed} ms: ${error.details}`);
    });

    for (const [missingService, code] of [[403, grpc.status.PERMISSION_DENIED], [404, grpc.status.NOT_FOUND]] as const) {
        it(`does not retry a missing service (API answers ${missingService})`, async () => {
            await configure("20s");
            stack.emu.setBehavior({ missingService });
            stack.emu.resetRequests();
            const error = await rpcError(stack.plugin.invoke(SERVICE_FN, { serviceName: "absent.endpoints.my-project.cloud.goog" }))
                .finally(() => stack.emu.setBehavior({ missingService: 403 }));
            expect(error.code).to.equal(code);
            expect(stack.emu.requests.map((r) => r.status)).to.deep.equal([missingService]);
        });
    }
});
