// Shutdown: SIGINT while 100 lookups and a policy write are under way, at three points of the write, each
// waited for at the emulator. The plugin exits 0 within a second of beginning its shutdown, and the write has
// either completed or not started: the policy is exactly the old one or the old one plus the new grant, never
// anything in between. The engine waits for each plugin it stops before the next, so a slow exit is time every
// `pulumi` command pays.

import { expect } from "chai";
import * as net from "net";
import { Emulator, startEmulator } from "../../emulator";
import { policyData } from "../../provider/iam/policy";
import { until } from "../support/engine";
import { CONSUMERS_FN, Plugin } from "../support/plugin";

const TOKEN = "ya29.shutdown-test-token";
const SERVICE = "shutdown.endpoints.my-project.cloud.goog";

describe("shutdown", function () {
    this.timeout(60_000);

    const READ = `/v1/services/${SERVICE}:getIamPolicy`;
    const WRITE = `/v1/services/${SERVICE}:setIamPolicy`;
    const cases: { when: string; reached(emu: Emulator): boolean }[] = [
        { when: "while the write's read is in flight", reached: (emu) => emu.requests.some((r) => r.path === READ && r.status === 0) },
        { when: "while its setIamPolicy is in flight", reached: (emu) => emu.requests.some((r) => r.path === WRITE && r.status === 0) },
        { when: "once the write has landed", reached: (emu) => emu.requests.some((r) => r.path === WRITE && r.status === 200) },
    ];
    for (const { when, reached } of cases) {
        it(`exits 0 within 1 s on SIGINT ${when}, among 100 lookups, never half-writing`, async () => {
            const emu = await startEmulator({ accessTokens: [TOKEN] });
            emu.createService(SERVICE, "my-project");
            const before = { bindings: [{ role: "roles/viewer", members: ["user:a@example.com", "user:b@example.com"] }] };
            emu.setPolicy(`services/${SERVICE}`, before);
            const plugin = await Plugin.start();
            try {
                await plugin.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:accessToken": TOKEN });
                emu.setFaults({ latencyMs: 300, minLatencyMs: 300 });
                /** When each call was answered, and whether it failed. */
                const answers: { failed: boolean; at: number }[] = [];
                const calls = [
                    plugin.create("cloud:endpoints/serviceIamMember:ServiceIamMember",
                        { serviceName: SERVICE, role: "roles/servicemanagement.serviceConsumer", member: "user:new@example.com" }),
                    ...Array.from({ length: 100 }, (_, i) => plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: `consumer-${1000 + i}` })),
                ].map((p) => p.then(() => "ok", () => "failed").then((o) => {
                    answers.push({ failed: o === "failed", at: Date.now() });
                    return o;
                }));
                expect(await until(() => reached(emu)), `the emulator saw the write ${when}`).to.equal(true);
                const signalled = Date.now();
                plugin.child.kill("SIGINT");
                const code = await plugin.exited;
                const exited = Date.now();
                // The shutdown begins when the plugin handles the signal: its first act is to drop the reads in
                // flight, answering their calls failed at once. Measured from there when it has reads to drop
                // (before the write's read returns, the lookups are still in flight), else from the signal: how
                // long a machine under load takes to run the plugin's handler is not the plugin's shutdown.
                const began = answers.find((a) => a.failed && a.at >= signalled)?.at ?? signalled;
                const exitMs = exited - began;
                const outcomes = await Promise.all(calls);
                emu.setFaults({ latencyMs: 0, minLatencyMs: 0 });
                // A write the plugin sent before it exited is still delayed at the emulator: its answer lets it land.
                await until(() => emu.requests.every((r) => r.path !== WRITE || r.status !== 0));
                const after = policyData(emu.getPolicy(`services/${SERVICE}`));
                const withGrant = policyData({ bindings: [...before.bindings, { role: "roles/servicemanagement.serviceConsumer", members: ["user:new@example.com"] }] });
                expect(code).to.equal(0);
                expect(exitMs).to.be.lessThan(1000);
                expect([policyData(before), withGrant]).to.include(after);
                const write = outcomes[0];
                if (write === "ok") expect(after, "a write reported done is in the policy").to.equal(withGrant);
                console.log(`      SIGINT ${when}: exit ${code} ${exitMs} ms after the shutdown began (${exited - signalled} ms after the signal); ` +
                    `${outcomes.filter((o) => o === "ok").length}/101 calls answered ok; ` +
                    `write ${write}, policy ${after === withGrant ? "has the new grant" : "unchanged"}`);
            } finally {
                if (plugin.child.exitCode === null) plugin.child.kill("SIGKILL");
                await emu.close();
            }
        });
    }

    it("exits within 1 s on SIGINT though a client connection stays open without a word (the engine leaves some)", async () => {
        const plugin = await Plugin.start();
        // Connected, no HTTP/2 preface sent: a graceful close would wait for this client to hang up.
        const idle = net.connect(plugin.port, "127.0.0.1");
        idle.on("error", () => undefined); // the plugin resets it on its way out
        try {
            await new Promise((resolve) => idle.once("connect", resolve));
            const signalled = Date.now();
            plugin.child.kill("SIGINT");
            expect(await plugin.exited).to.equal(0);
            expect(Date.now() - signalled).to.be.lessThan(1000);
        } finally {
            idle.destroy();
            plugin.client.close();
            if (plugin.child.exitCode === null) plugin.child.kill("SIGKILL");
        }
    });

    it("exits 0 on SIGINT sent the moment the port is printed (10 times): signals are handled before the port", async () => {
        const codes: (number | null)[] = [];
        for (let i = 0; i < 10; i++) {
            const plugin = await Plugin.start();
            plugin.child.kill("SIGINT");
            codes.push(await plugin.exited);
            plugin.client.close();
        }
        expect(codes).to.deep.equal(codes.map(() => 0));
    });
});
