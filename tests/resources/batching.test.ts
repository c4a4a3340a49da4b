// Changes to one policy batch into shared read-modify-write cycles: many grants cost a few API calls, each
// RPC still gets its own true answer, and the result is that of running the changes one after another.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { PropertyMap, Value } from "../../provider/declare/properties";
import { MEMBER, ROLE, rpcError, SERVICE_FN, useStack } from "../support/plugin";

const TOKEN = "ya29.batching-test-token";
const SERVICE = "batch.endpoints.my-project.cloud.goog";
const PARENT = `services/${SERVICE}`;

const member = (m: string, role = ROLE) => ({ serviceName: SERVICE, role, member: m });
const id = (m: string, role = ROLE) => `${PARENT} ${role} ${m}`;

describe("batched read-modify-writes", function () {
    this.timeout(120_000);
    const stack = useStack(TOKEN, [SERVICE]);
    const members = () => (stack.emu.getPolicy(PARENT).bindings ?? []).filter((b) => b.role === ROLE).flatMap((b) => b.members).sort();
    const N = 10;
    const emails = (tag: string) => Array.from({ length: N }, (_, i) => `user:${tag}${String(i).padStart(2, "0")}@example.com`);
    const verbs = () => stack.emu.requests.map((r) => r.path.split(":").pop());
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** The provider resource's inputs pointing at the emulator, as an SDK sends them (objects as JSON text). */
    const providerInputs = (batching: Value): PropertyMap => ({
        serviceManagementCustomEndpoint: stack.emu.url, accessToken: TOKEN, requestTimeout: "20s", batching,
    });

    // A lookup first: it waits for the confirmation of the previous test's last write, if one is still running.
    // Then the stack's configuration again (batching as by default), an empty policy and no requests.
    beforeEach(async () => {
        await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        await stack.configure();
        stack.emu.setPolicy(PARENT, {});
        stack.emu.resetRequests();
    });
    afterEach(() => stack.emu.setFaults({ latencyMs: 0, minLatencyMs: 0 }));

    // docs/design/batching.md's figure ("50 Member creates sent at once cost 3 API calls instead of 150").
    it("50 Member creates sent at once cost 3 API calls: one read, one write, one confirming read (100 ms latency), and all land in one binding", async () => {
        stack.emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
        const emails = Array.from({ length: 50 }, (_, i) => `user:m${String(i).padStart(2, "0")}@example.com`);
        const started = Date.now();
        await Promise.all(emails.map((m) => stack.plugin.create(MEMBER, member(m))));
        const elapsed = Date.now() - started;
        // A lookup right after waits for the write's confirming read and is answered by it.
        const lookup = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(JSON.parse(String(lookup.return!.policyData))).to.deep.equal({ bindings: [{ role: ROLE, members: emails }] });
        const calls = stack.emu.requestCount;
        expect(verbs(), "the API calls, the lookup after the creates included").to.deep.equal(["getIamPolicy", "setIamPolicy", "getIamPolicy"]);
        expect(calls).to.equal(3);
        expect(stack.emu.getPolicy(PARENT).bindings).to.deep.equal([{ role: ROLE, members: emails }]);
        console.log(`      50 creates at once: ${calls} API calls (the lookup after them included), ${elapsed} ms at 100 ms per call`);
    });

    it("changes sent as earlier ones are answered chain their writes on the answers; only the last is read back", async () => {
        // Reads lag writes by 300 ms: a chain that read between its writes would see its own changes missing.
        stack.emu.setBehavior({ propagationMs: 300 });
        // After a cycle the loop lingers for the next change about as long as the engine's pace says, and at least
        // `sendAfter`: 1 s here, so that the pause between waves (and this test's round trip, slow on a loaded
        // machine) is not taken for the end of the changes.
        await stack.configure({ "cloud:config:batching": JSON.stringify({ sendAfter: "1s" }) });
        stack.emu.resetRequests();
        try {
            const waves = [0, 1, 2].map((w) => Array.from({ length: 10 }, (_, i) => `user:w${w}-${i}@example.com`));
            // Each wave sent 200 ms after the last was answered, as the engine saves its checkpoint in between.
            for (const wave of waves) {
                await Promise.all(wave.map((m) => stack.plugin.create(MEMBER, member(m))));
                await sleep(200);
            }
            const lookup = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
            const all = waves.flat().sort();
            expect(JSON.parse(String(lookup.return!.policyData)).bindings[0].members).to.deep.equal(all);
            // One read, a write per wave (each accepted on the etag of the one before), and the confirming reads
            // of the last, which the lookup waited for.
            // (A 409 for a write on the previous test's last answer, which that test's reset made stale, is left out.)
            const verbs = stack.emu.requests.filter((r) => r.status === 200).map((r) => r.path.split(":").pop());
            expect(verbs.slice(0, 4)).to.deep.equal(["getIamPolicy", "setIamPolicy", "setIamPolicy", "setIamPolicy"]);
            expect(verbs.slice(4).every((v) => v === "getIamPolicy")).to.equal(true);
        } finally {
            stack.emu.setBehavior({ propagationMs: 0 });
        }
    });

    it("a change the API refuses fails alone; the rest of its batch succeeds", async () => {
        const good = Array.from({ length: 9 }, (_, i) => `user:ok${i}@example.com`);
        // Valid as an input (a role name), refused by IAM for this resource.
        const bad = stack.plugin.create(MEMBER, member("user:bad@example.com", "roles/storage.admin")).then(() => undefined, (e: grpc.ServiceError) => e);
        const results = await Promise.all([...good.map((m) => stack.plugin.create(MEMBER, member(m)).then(() => "ok")), bad]);
        const error = results.pop() as grpc.ServiceError | undefined;
        expect(results).to.deep.equal(good.map(() => "ok"));
        expect(error?.code).to.equal(grpc.status.INVALID_ARGUMENT);
        expect(error?.details).to.contain("roles/storage.admin");
        expect(members()).to.deep.equal([...good].sort());
    });

    it("runs a create and a delete of one grant, sent together, as one after the other", async () => {
        const m = "user:flicker@example.com";
        await Promise.all([stack.plugin.create(MEMBER, member(m)), stack.plugin.delete(MEMBER, id(m), member(m))]);
        expect(members()).to.deep.equal([]);
        await Promise.all([stack.plugin.delete(MEMBER, id(m), member(m)), stack.plugin.create(MEMBER, member(m))]);
        expect(members()).to.deep.equal([m]);
    });

    it("loses nothing in a storm of 200 concurrent Member creates and deletes on one policy", async () => {
        const old = Array.from({ length: 100 }, (_, i) => `user:old${i}@example.com`);
        const fresh = Array.from({ length: 100 }, (_, i) => `user:new${i}@example.com`);
        stack.emu.setPolicy(PARENT, { bindings: [{ role: ROLE, members: old }, { role: "roles/viewer", members: ["user:bystander@example.com"] }] });
        stack.emu.setFaults({ latencyMs: 30 });
        stack.emu.resetRequests();
        const ops = [...old.map((m) => () => stack.plugin.delete(MEMBER, id(m), member(m))), ...fresh.map((m) => () => stack.plugin.create(MEMBER, member(m)))];
        // Interleaved, all in flight at once.
        await Promise.all(ops.map((_, i) => ops[i % 2 === 0 ? i / 2 : 100 + (i - 1) / 2]()));
        expect(members()).to.deep.equal([...fresh].sort());
        expect((stack.emu.getPolicy(PARENT).bindings ?? []).find((b) => b.role === "roles/viewer")?.members).to.deep.equal(["user:bystander@example.com"]);
        console.log(`      200 creates and deletes at once: ${stack.emu.requestCount} API calls`);
    });

    // The batching setting (cloud:batching, as Pulumi GCP's).

    it("CheckConfig and Configure take `batching` as stack config JSON and as the provider resource's input; a failure names the property", async () => {
        const accepted: Value[] = [JSON.stringify({ enableBatching: false, sendAfter: "300ms" }), { enableBatching: false }, { sendAfter: "1s" }, {}];
        for (const batching of accepted) {
            expect((await stack.plugin.checkConfig({ accessToken: TOKEN, batching })).failures, JSON.stringify(batching)).to.deep.equal([]);
        }
        await stack.configure({ "cloud:config:batching": JSON.stringify({ enableBatching: false, sendAfter: "2s" }) });
        await stack.plugin.configure(providerInputs(JSON.stringify({ enableBatching: true, sendAfter: "100ms" })));
        await stack.plugin.configure(providerInputs({ enableBatching: false }));
        // One failure over gRPC, from stack config's JSON text (each rule's message: tests/protocol/config.test.ts).
        expect((await stack.plugin.checkConfig({ batching: JSON.stringify({ enableBatching: "no" }) })).failures).to.deep.equal([
            { property: "batching.enableBatching", reason: "`batching.enableBatching` must be a boolean, but a string was given" },
        ]);
        const err = await rpcError(stack.configure({ "cloud:config:batching": JSON.stringify({ sendAfter: "soon" }) }));
        expect(err.details).to.contain("`batching.sendAfter`").and.contain("not a duration");
    });

    it(`by default, ${N * 2} concurrent Member creates on one parent share a few read-modify-writes`, async () => {
        stack.emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
        const all = [...emails("a"), ...emails("b")];
        await Promise.all(all.map((m) => stack.plugin.create(MEMBER, member(m))));
        const writes = verbs().filter((v) => v === "setIamPolicy").length;
        expect(writes).to.be.within(1, 3);
        expect(members()).to.deep.equal([...all].sort());
    });

    const disabled: [string, () => Promise<unknown>][] = [
        ["stack config cloud:batching", () => stack.configure({ "cloud:config:batching": JSON.stringify({ enableBatching: false }) })],
        ["the provider resource's input", () => stack.plugin.configure(providerInputs(JSON.stringify({ enableBatching: false })))],
    ];
    for (const [how, configure] of disabled) {
        it(`with enableBatching false (${how}), ${N} concurrent creates cost exactly ${N} reads and ${N} writes, then one read-back`, async () => {
            await configure();
            // Calls of 100 ms: every create has arrived before the first read-modify-write ends.
            stack.emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
            const all = emails("s");
            await Promise.all(all.map((m) => stack.plugin.create(MEMBER, member(m))));
            // A lookup waits for the last write's confirming read and is answered by it (each earlier write is
            // confirmed by the next, on its etag): no read of its own.
            await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
            // Each change is a read and a write of its own, one change after another, none waiting for company.
            const cycles = Array.from({ length: N }, () => ["getIamPolicy", "setIamPolicy"]).flat();
            expect(verbs()).to.deep.equal([...cycles, "getIamPolicy"]);
            expect(stack.emu.requests.map((r) => r.status)).to.deep.equal(Array(2 * N + 1).fill(200));
            expect(members()).to.deep.equal([...all].sort());
        });
    }

    it("sendAfter is the wait before the first write: 300ms when set so, against 40ms by default", async () => {
        /** How long after a create is sent its write reaches the API. */
        const firstWrite = async (m: string): Promise<number> => {
            stack.emu.resetRequests();
            const started = Date.now();
            const create = stack.plugin.create(MEMBER, member(m));
            while (!stack.emu.requests.some((r) => r.path.endsWith(":setIamPolicy"))) await sleep(1);
            const elapsed = Date.now() - started;
            await create;
            await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE }); // waits for the write's confirmation
            return elapsed;
        };
        const fast = await firstWrite("user:fast@example.com");
        await stack.configure({ "cloud:config:batching": JSON.stringify({ sendAfter: "300ms" }) });
        const slow = await firstWrite("user:slow@example.com");
        expect(slow).to.be.at.least(300);
        expect(fast).to.be.below(slow - 150);
        expect(members()).to.deep.equal(["user:fast@example.com", "user:slow@example.com"]);
        console.log(`      first write ${fast} ms after a create by default, ${slow} ms with sendAfter 300ms`);
    });
});
