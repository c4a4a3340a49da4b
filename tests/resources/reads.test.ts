// A resource's Read (refresh, import) shares one read of its policy with the command's other Reads of it
// (provider/iam/parentPolicy.ts, `refresh`), under rules each test below holds through the real plugin and the
// emulator: never older than the command's start, than a write of this process, or than an earlier Read; a failed
// shared read fails every Read that joined it, each under its own resource's name.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { MEMBER, ROLE, rpcError, useStack } from "../support/plugin";

const TOKEN = "ya29.reads-test-token";
const SERVICE = "reads.endpoints.my-project.cloud.goog";
const MISSING = "missing.endpoints.my-project.cloud.goog";
const PARENT = `services/${SERVICE}`;

const email = (i: number) => `user:r${String(i).padStart(3, "0")}@example.com`;
const member = (m: string, service = SERVICE) => ({ serviceName: service, role: ROLE, member: m });
const id = (m: string, service = SERVICE) => `services/${service} ${ROLE} ${m}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

describe("resource Reads share the command's read of their policy", function () {
    this.timeout(120_000);
    const stack = useStack(TOKEN, [SERVICE]);
    const reads = () => stack.emu.requests.filter((r) => r.path.endsWith(":getIamPolicy")).length;
    /** A refresh of the Member `m` (its state as the engine holds it), resolving with whether it was found. */
    const refresh = async (m: string, service = SERVICE): Promise<boolean> => {
        const r = await stack.plugin.read(MEMBER, id(m, service), { ...member(m, service), etag: "" }, member(m, service), m.replace(/\W/g, "-"));
        return r.id !== "";
    };

    // Each test is a command of its own: the engine starts a plugin per command and configures it (a new fetcher).
    beforeEach(async () => {
        stack.emu.setPolicy(PARENT, { bindings: [{ role: ROLE, members: Array.from({ length: 50 }, (_, i) => email(i)) }] });
        await stack.configure();
        stack.emu.resetRequests();
    });
    afterEach(() => stack.emu.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "getIamPolicy", count: 0, delayMs: 0 } }));

    it("50 Reads of one policy, at once and then one by one as the engine paces them, cost one getIamPolicy", async () => {
        stack.emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
        const found = await Promise.all(Array.from({ length: 25 }, (_, i) => refresh(email(i))));
        for (let i = 25; i < 50; i++) found.push(await refresh(email(i)));
        expect(found.every(Boolean)).to.equal(true);
        expect(reads()).to.equal(1);
        console.log(`      50 Reads of one policy: ${reads()} getIamPolicy`);
    });

    it("the next command reads again: a Read is never older than its command's start", async () => {
        expect(await refresh(email(0))).to.equal(true);
        stack.emu.setPolicy(PARENT, {}); // removed outside Pulumi, between two commands
        await stack.configure(); // the next command
        expect(await refresh(email(0))).to.equal(false);
        expect(reads()).to.equal(2);
    });

    it("a Read sent more than 10 s after the shared read was answered reads again, and sees a change made meanwhile", async function () {
        this.timeout(30_000);
        expect(await refresh(email(0))).to.equal(true);
        stack.emu.setPolicy(PARENT, {}); // removed outside Pulumi, during a long command
        expect(await refresh(email(1)), "within 10 s of the shared read's answer").to.equal(true);
        await sleep(10_100);
        expect(await refresh(email(0)), "10 s after it").to.equal(false);
        expect(reads()).to.equal(2);
    });

    it("a Read that began after a write of its policy was answered never gets the policy from before it", async () => {
        const m = "user:written@example.com";
        // A Read whose read Google has answered (without m) but whose answer is still on its way...
        stack.emu.setFaults({ slowAnswers: { verb: "getIamPolicy", count: 1, delayMs: 1500 } });
        const early = refresh(email(0));
        while (reads() === 0) await new Promise((r) => setTimeout(r, 5));
        // ...and, meanwhile, a write of m, answered; IAM's reads lag writes.
        stack.emu.setBehavior({ propagationMs: 300 });
        try {
            await stack.plugin.create(MEMBER, member(m), false, "written");
            // Begun after the write was answered: it does not join the read in flight, nor take a read that lags.
            expect(await refresh(m), "the Member just written is found").to.equal(true);
            expect(await early).to.equal(true);
            // The Read after the write went out after it: the shared read begun before it was answered was not used.
            expect(stack.emu.requests.filter((r) => r.path.endsWith(":getIamPolicy")).length).to.be.at.least(3);
        } finally {
            stack.emu.setBehavior({ propagationMs: 0 });
        }
    });

    it("Reads beside writes (up --refresh): each Read begun after a Create was answered finds its Member", async () => {
        stack.emu.setFaults({ latencyMs: 20, minLatencyMs: 10 });
        const fresh = Array.from({ length: 10 }, (_, i) => `user:beside${i}@example.com`);
        for (const [i, m] of fresh.entries()) {
            const [, found] = await Promise.all([
                stack.plugin.create(MEMBER, member(m), false, `beside${i}`),
                i === 0 ? refresh(email(0)) : refresh(fresh[i - 1]),
            ]);
            expect(found, i === 0 ? email(0) : fresh[i - 1]).to.equal(true);
        }
        expect(await refresh(fresh[fresh.length - 1])).to.equal(true);
    });

    /** Resolves once the emulator has received a `verb` request beyond the first `after`. */
    const sent = async (verb: string, after = 0) => {
        while (stack.emu.requests.filter((r) => r.path.endsWith(`:${verb}`)).length <= after) await sleep(5);
    };

    it("a Read during a write of its policy, and one 3 s after it, find the Member written (IAM's reads lag the write)", async () => {
        const m = "user:overlapped@example.com";
        // Reads lag the write by 1.5 s, and Google's answer to it comes 0.8 s after it applied.
        stack.emu.setBehavior({ propagationMs: 1500 });
        stack.emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 1, delayMs: 800 } });
        try {
            const started = Date.now();
            const create = stack.plugin.create(MEMBER, member(m), false, "overlapped");
            await sent("setIamPolicy");
            // An `up --refresh --run-program`: Reads of the policy while its write is on its way.
            const during = [refresh(m), refresh(email(0))];
            await create;
            expect(await Promise.all(during), "the Reads sent while the write was in flight").to.deep.equal([true, true]);
            await sleep(3000 - (Date.now() - started));
            expect(await refresh(m), "the Read 3 s after the write").to.equal(true);
        } finally {
            stack.emu.setBehavior({ propagationMs: 0 });
        }
    });

    it("after a confirmation that gave up (propagation longer than its re-reads), a Read once the write shows finds the Member", async () => {
        const m = "user:lagging@example.com";
        // Longer than the confirmation's re-reads (5, 500 ms apart): it gives up and warns.
        stack.emu.setBehavior({ propagationMs: 4000 });
        try {
            const started = Date.now();
            await stack.plugin.create(MEMBER, member(m), false, "lagging");
            // A Read of another Member of the policy while the write is unconfirmed: it waits for the confirmation.
            expect(await refresh(email(0))).to.equal(true);
            // Every fresh read shows the write by now.
            await sleep(6000 - (Date.now() - started));
            expect(await refresh(m), "the Read 6 s after the write").to.equal(true);
        } finally {
            stack.emu.setBehavior({ propagationMs: 0 });
        }
    });

    it("Reads that join a shared read failing at its deadline keep their own request timeout, and succeed within it", async () => {
        await stack.configure({ "cloud:config:requestTimeout": "4s" });
        stack.emu.resetRequests();
        // An outage of getIamPolicy that ends as the first Read's read gives up.
        stack.emu.setFaults({ rate: 1, kinds: ["503"] });
        try {
            const first = rpcError(refresh(email(0))).finally(() => stack.emu.setFaults({ rate: 0 }));
            await sleep(1500);
            const joined = Date.now();
            const late = [refresh(email(1)), refresh(email(2))];
            expect((await first).details).to.contain("did not succeed within the request timeout");
            expect(await Promise.all(late), "the Reads that joined 1.5 s in").to.deep.equal([true, true]);
            expect(Date.now() - joined, "within their own 4 s").to.be.below(4000);
        } finally {
            stack.emu.setFaults({ rate: 0, kinds: ["429", "503", "reset"] });
            await stack.configure();
        }
    });

    it("a failed shared read fails every Read that joined it, each naming its own resource; the next Read reads again", async () => {
        // A service that does not exist: Google answers 403, which is not retried and is not "gone".
        const names = [0, 1, 2, 3, 4].map(email);
        const errors = await Promise.all(names.map((m) => rpcError(refresh(m, MISSING))));
        expect(reads()).to.equal(1);
        for (const [i, e] of errors.entries()) {
            expect(e.code).to.equal(grpc.status.PERMISSION_DENIED);
            expect(e.details).to.contain(`ServiceIamMember::${names[i].replace(/\W/g, "-")}:`).and.contain(MISSING);
        }
        await rpcError(refresh(names[0], MISSING));
        expect(reads(), "a failed read is not kept").to.equal(2);
    });

    it("a Diff and a preview need no read", async () => {
        await stack.plugin.diff(MEMBER, id(email(0)), member(email(0)), member(email(0)), "diffed");
        await stack.plugin.create(MEMBER, member("user:previewed@example.com"), true, "previewed");
        expect(reads()).to.equal(0);
    });
});
