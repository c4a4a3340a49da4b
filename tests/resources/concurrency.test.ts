// Ten writers (Binding and Member resources) spread over five plugin processes, all creating at once on
// one policy: the processes' writes collide (Google's 409 ABORTED on a stale etag, counted at the emulator),
// every write is retried to success, and the final policy holds every grant (0 lost updates). Prints the
// figures: writes, 409s seen, wall time.

import { expect } from "chai";
import { startEmulator } from "../../emulator";
import { PropertyMap } from "../../provider/declare/properties";
import { Plugin } from "../support/plugin";

const TOKEN = "ya29.concurrency-test-token";
const SERVICE = "busy.endpoints.my-project.cloud.goog";
const PROCESSES = 5;

describe("concurrent writers on one policy", function () {
    this.timeout(120_000);

    it(`loses no update: 10 writers across ${PROCESSES} plugin processes`, async () => {
        const emu = await startEmulator({ accessTokens: [TOKEN] });
        emu.createService(SERVICE, "my-project");
        emu.setPolicy(`services/${SERVICE}`, { bindings: [{ role: "roles/viewer", members: ["user:already-here@example.com"] }] });
        const plugins = await Promise.all(Array.from({ length: PROCESSES }, () => Plugin.start()));
        try {
            for (const p of plugins) {
                await p.configure(undefined, {
                    "cloud:config:serviceManagementCustomEndpoint": emu.url,
                    "cloud:config:accessToken": TOKEN,
                    "cloud:config:requestTimeout": "90s",
                });
            }
            emu.resetRequests();
            // 100 ms per call: the processes' first reads are answered before their first writes land, so they
            // read the same etag and their writes collide (409).
            emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
            const writers: { type: string; inputs: PropertyMap; grants: string[] }[] = Array.from({ length: 10 }, (_, i): { type: string; inputs: PropertyMap; grants: string[] } => i % 2 === 0
                ? { type: "cloud:endpoints/serviceIamMember:ServiceIamMember",
                    inputs: { serviceName: SERVICE, role: "roles/servicemanagement.serviceConsumer", member: `user:member-${i}@example.com` },
                    grants: [`roles/servicemanagement.serviceConsumer user:member-${i}@example.com`] }
                : { type: "cloud:endpoints/serviceIamBinding:ServiceIamBinding",
                    inputs: { serviceName: SERVICE, role: `projects/my-project/roles/custom.role${i}`, members: [`user:binding-${i}@example.com`, `group:g${i}@example.com`] },
                    grants: [`projects/my-project/roles/custom.role${i} group:g${i}@example.com`, `projects/my-project/roles/custom.role${i} user:binding-${i}@example.com`] });
            const started = Date.now();
            const results = await Promise.allSettled(writers.map((w, i) => plugins[i % PROCESSES].create(w.type, w.inputs)));
            const wall = Date.now() - started;
            expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);

            const sets = emu.requests.filter((r) => r.path.endsWith(":setIamPolicy"));
            const conflicts = sets.filter((r) => r.status === 409).length;
            const written = sets.filter((r) => r.status === 200).length;
            // The collisions happened: without them this test would show nothing about lost updates.
            expect(conflicts, "setIamPolicy calls answered 409 (etag conflicts)").to.be.at.least(1);
            expect(sets.map((r) => r.status).filter((s) => s !== 200 && s !== 409), "other answers to the writes").to.deep.equal([]);
            // Each process's write landed once its conflicts were retried: writers in one process share a batched
            // write, so at least one write per process and at most one per writer.
            expect(written).to.be.within(PROCESSES, 10);

            // Every grant survived: the policy is exactly the one that was there and every writer's.
            const final = emu.getPolicy(`services/${SERVICE}`);
            const held = (final.bindings ?? []).flatMap((b) => b.members.map((m) => `${b.role} ${m}`)).sort();
            const wanted = ["roles/viewer user:already-here@example.com", ...writers.flatMap((w) => w.grants)].sort();
            const lost = wanted.filter((g) => !held.includes(g));
            expect(lost, "lost updates").to.deep.equal([]);
            expect(held, "the final policy").to.deep.equal(wanted);
            console.log(`      10 writers / ${PROCESSES} processes: ${written} writes, ${conflicts} 409s retried, ` +
                `${emu.requests.length} requests, ${lost.length} lost updates, ${wall} ms`);
        } finally {
            await Promise.all(plugins.map((p) => p.stop()));
            await emu.close();
        }
    });
});
