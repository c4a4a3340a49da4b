// Shutdown: SIGINT while 100 lookups and a policy write are in flight. The plugin exits 0 within a second,
// and the write has either completed or not started: the policy is exactly the old one or the old one plus
// the new grant, never anything in between. The engine waits for each plugin it stops before the next, so a
// slow exit is time every `pulumi` command pays.

import { expect } from "chai";
import * as net from "net";
import { startEmulator } from "../../emulator";
import { policyData } from "../../provider/iam/policy";
import { CONSUMERS_FN, Plugin } from "../support/plugin";

const TOKEN = "ya29.shutdown-test-token";
const SERVICE = "shutdown.endpoints.my-project.cloud.goog";

describe("shutdown", function () {
    this.timeout(60_000);

    // Before the write's read returns; while its setIamPolicy is in flight; after it landed.
    for (const delay of [50, 450, 800]) {
        it(`exits 0 within 1 s on SIGINT ${delay} ms into 100 lookups and a write, never half-writing`, async () => {
            const emu = await startEmulator({ accessTokens: [TOKEN] });
            emu.createService(SERVICE, "my-project");
            const before = { bindings: [{ role: "roles/viewer", members: ["user:a@example.com", "user:b@example.com"] }] };
            emu.setPolicy(`services/${SERVICE}`, before);
            const plugin = await Plugin.start();
            try {
                await plugin.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:accessToken": TOKEN });
                emu.setFaults({ latencyMs: 300, minLatencyMs: 300 });
                const calls = [
                    plugin.create("cloud:endpoints/serviceIamMember:ServiceIamMember",
                        { serviceName: SERVICE, role: "roles/servicemanagement.serviceConsumer", member: "user:new@example.com" }),
                    ...Array.from({ length: 100 }, (_, i) => plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: `consumer-${1000 + i}` })),
                ].map((p) => p.then(() => "ok", () => "failed"));
                await new Promise((r) => setTimeout(r, delay));
                const signalled = Date.now();
                plugin.child.kill("SIGINT");
                const code = await plugin.exited;
                const exitMs = Date.now() - signalled;
                const outcomes = await Promise.all(calls);
                emu.setFaults({ latencyMs: 0, minLatencyMs: 0 });
                await new Promise((r) => setTimeout(r, 400)); // let a write already sent land
                const after = policyData(emu.getPolicy(`services/${SERVICE}`));
                const withGrant = policyData({ bindings: [...before.bindings, { role: "roles/servicemanagement.serviceConsumer", members: ["user:new@example.com"] }] });
                expect(code).to.equal(0);
                expect(exitMs).to.be.lessThan(1000);
                expect([policyData(before), withGrant]).to.include(after);
                const write = outcomes[0];
                if (write === "ok") expect(after, "a write reported done is in the policy").to.equal(withGrant);
                console.log(`      SIGINT at ${delay} ms: exit ${code} after ${exitMs} ms; ${outcomes.filter((o) => o === "ok").length}/101 calls answered ok; ` +
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
