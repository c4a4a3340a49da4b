// Transient faults (429, 503, connection resets, latency) injected by the emulator are retried until the
// request timeout; permanent answers are not. Prints the figures it measured.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { Emulator } from "../../emulator";
import { CONSUMERS_FN, Plugin, rpcError, SERVICE_FN, Stack, startStack } from "../support/plugin";

const TOKEN = "ya29.retries-test-token";
const SERVICE = "faulty.endpoints.my-project.cloud.goog";

describe("retries under injected faults", function () {
    let stack: Stack;
    let emu: Emulator;
    let plugin: Plugin;

    before(async () => {
        stack = await startStack(TOKEN, [SERVICE]);
        ({ emu, plugin } = stack);
    });
    after(() => stack.stop());

    const configure = (timeout: string) => stack.configure({ "cloud:config:requestTimeout": timeout });

    it("completes 300 distinct lookups with 25% of requests failing (429/503/reset) and random latency", async () => {
        await configure("60s");
        emu.resetRequests();
        emu.setFaults({ rate: 0.25, latencyMs: 20 });
        const started = Date.now();
        try {
            const results = await Promise.all(Array.from({ length: 300 }, (_, i) =>
                plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: `consumer-${String(i).padStart(4, "0")}` })));
            expect(results.filter((r) => r.failures.length === 0 && r.return?.policyData === "{}")).to.have.length(300);
        } finally {
            emu.setFaults({ rate: 0, latencyMs: 0 });
        }
        const api = emu.requests.filter((r) => r.path.startsWith("/v1/services/"));
        const faults = api.filter((r) => r.status !== 200);
        expect(api.length - faults.length).to.equal(300);
        expect(faults.length, "faults were injected").to.be.greaterThan(20);
        console.log(`      300 lookups: ${api.length} requests, ${faults.length} faults retried, ${Date.now() - started} ms`);
    });

    it("gives up with a clear error after the request timeout when every answer is 503", async () => {
        await configure("2s");
        emu.setFaults({ rate: 1 });
        const started = Date.now();
        const error = await rpcError(plugin.invoke(SERVICE_FN, { serviceName: SERVICE })).finally(() => emu.setFaults({ rate: 0 }));
        const elapsed = Date.now() - started;
        expect(error.details).to.match(/did not succeed within the request timeout \(\d+ attempts over [\d.]+s; raise cloud:requestTimeout/);
        expect(elapsed, "bounded by requestTimeout, no hang").to.be.lessThan(10_000);
        console.log(`      all-faults lookup failed after ${elapsed} ms: ${error.details}`);
    });

    it("does not retry a 404", async () => {
        await configure("20s");
        emu.resetRequests();
        const error = await rpcError(plugin.invoke(SERVICE_FN, { serviceName: "absent.endpoints.my-project.cloud.goog" }));
        expect(error.code).to.equal(grpc.status.NOT_FOUND);
        expect(emu.requests).to.have.length(1);
    });
});
