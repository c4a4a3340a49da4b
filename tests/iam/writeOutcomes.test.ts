// What the plugin makes of a write whose outcome the network hid, and of writes whose read-backs overlap: through
// the real plugin, against the emulator behind a proxy that loses answers (tests/iam/faultProxy.ts). Each case is
// one way a landed write was lost track of: noted as never applied, never retried, or never read back.

import { expect } from "chai";
import { JOURNAL_SAYS } from "../support/machine";
import { Engine, startEngine, until } from "../support/engine";
import { MEMBER, pulumiHome, ROLE, SERVICE_FN, Stack, startStack } from "../support/plugin";
import { Decide, Fate, faultProxy, FaultProxy, Seen } from "./faultProxy";

const TOKEN = "ya29.write-outcomes-test-token";
const SERVICE = "outcomes.endpoints.my-project.cloud.goog";
const PARENT = `services/${SERVICE}`;

const member = (m: string) => ({ serviceName: SERVICE, role: ROLE, member: m });
const members = (policy: { bindings?: { role: string; members: string[] }[] }) =>
    (policy.bindings ?? []).filter((b) => b.role === ROLE).flatMap((b) => b.members).sort();
const isWrite = (s: Seen) => s.verb === "setIamPolicy";
/** Which write `s` is (0 for the first), among the requests seen so far. */
const writeNumber = (s: Seen, seen: readonly Seen[]) => seen.filter(isWrite).indexOf(s);

describe("writes whose outcome was hidden, and overlapping read-backs", function () {
    this.timeout(60_000);
    let engine: Engine;
    let stack: Stack;
    /** What the running test started, stopped after it. */
    let running: { stack?: Stack; proxy?: FaultProxy } = {};

    /** A stack whose plugin logs to `engine` and keeps its journal in a PULUMI_HOME of its own, its API behind a proxy. */
    async function start(decide: Decide, config: Record<string, string> = {}): Promise<FaultProxy> {
        stack = running.stack = await startStack(TOKEN, [SERVICE], { engine: engine.address, env: { PULUMI_HOME: pulumiHome() } });
        const proxy = running.proxy = await faultProxy(stack.emu.url, decide);
        await stack.configure({ "cloud:config:serviceManagementCustomEndpoint": proxy.url, ...config });
        return proxy;
    }

    beforeEach(async () => {
        engine = await startEngine();
    });
    afterEach(async () => {
        await running.stack?.stop();
        await running.proxy?.close();
        running = {};
        engine.close();
    });

    it("a write that landed though its answer was a 504 is not noted as never applied when its retry gets 409", async () => {
        // The first write reaches the emulator, its answer is a 504; its retry then finds the etag changed (409).
        // Everything after that 409 is held, and the plugin dies there, before the engine heard of the Create.
        let conflict: Seen | undefined;
        const proxy = await start((s, _, seen) => {
            if (conflict?.status !== undefined) return "hang";
            if (!isWrite(s)) return "pass";
            if (writeNumber(s, seen) === 0) return "land-then-504";
            conflict = s;
            return "pass";
        });
        void stack.plugin.create(MEMBER, member("user:landed@example.com"), false, "landed").catch(() => undefined);
        await proxy.until((s) => s.fate === "hang");
        expect(conflict?.status, "the retry of the write was refused for its etag").to.equal(409);
        expect(members(stack.emu.getPolicy(PARENT)), "the first attempt applied").to.deep.equal(["user:landed@example.com"]);
        stack.plugin.child.kill("SIGKILL");
        await stack.plugin.exited;
        // The next run is told of the grant the dead one wrote and the engine never recorded.
        await stack.nextDeployment();
        await stack.plugin.create(MEMBER, member("user:other@example.com"), false, "other");
        // Said at the run's end, once a read shows the grant still there.
        expect(await stack.plugin.stop()).to.equal(0);
        await until(() => engine.messages.some((m) => m.includes(JOURNAL_SAYS.unanswered)));
        expect(engine.messages.join("\n")).to.contain(JOURNAL_SAYS.unanswered).and.contain("user:landed@example.com");
    });

    it("a write that never answers is retried within the request timeout, and its retry's 409 ends in the change", async () => {
        // The first write lands and its connection hangs: only a per-attempt timeout lets a retry happen.
        const proxy = await start((s, _, seen) => (isWrite(s) && writeNumber(s, seen) === 0 ? "land-then-hang" : "pass"),
            { "cloud:config:requestTimeout": "6s" });
        const started = Date.now();
        await stack.plugin.create(MEMBER, member("user:hung@example.com"), false, "hung");
        expect(Date.now() - started, "within the request timeout").to.be.below(6000);
        const lookup = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(members(JSON.parse(String(lookup.return?.policyData)))).to.deep.equal(["user:hung@example.com"]);
        const writes = proxy.seen.filter(isWrite).map((s) => s.status);
        expect(writes.slice(0, 2), "the hung attempt, then its retry refused for the etag the first one changed").to.deep.equal([undefined, 409]);
    });

    it("a read that never answers is retried within the request timeout", async () => {
        await start((_, i) => (i === 0 ? "hang" : "pass"), { "cloud:config:requestTimeout": "6s" });
        stack.emu.setPolicy(PARENT, { bindings: [{ role: ROLE, members: ["user:r@example.com"] }] });
        const started = Date.now();
        const lookup = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(lookup.failures).to.deep.equal([]);
        expect(members(JSON.parse(String(lookup.return?.policyData)))).to.deep.equal(["user:r@example.com"]);
        expect(Date.now() - started, "within the request timeout").to.be.below(6000);
    });

    it("a write answered after the read-back of the one before it ended is read back too", async () => {
        // Reads lag writes by 1.2 s. A's read-back (started by a lookup) ends while B, chained on A's answer, is
        // held at the proxy; a lookup right after B must wait for B to show.
        let releaseB: () => void = () => undefined;
        const bReleased = new Promise<void>((resolve) => (releaseB = resolve));
        const isB = (s: Seen, seen: readonly Seen[]) => isWrite(s) && writeNumber(s, seen) === 1;
        const proxy = await start(async (s, _, seen): Promise<Fate> => {
            if (isB(s, seen)) await bReleased;
            return "pass";
        }, {
            // B arrives while the loop gathers after A's write: it is written on A's answer (no read).
            "cloud:config:batching": JSON.stringify({ enableBatching: true, sendAfter: "600ms" }),
        });
        stack.emu.setBehavior({ propagationMs: 1200 });
        await stack.plugin.create(MEMBER, member("user:a@example.com"), false, "a");
        const first = stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        const b = stack.plugin.create(MEMBER, member("user:b@example.com"), false, "b");
        await proxy.until((s) => isB(s, proxy.seen));
        expect(members(JSON.parse(String((await first).return?.policyData))), "A's read-back").to.deep.equal(["user:a@example.com"]);
        releaseB();
        await b;
        const after = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(members(JSON.parse(String(after.return?.policyData))), "a lookup after B's answer").to.deep.equal(["user:a@example.com", "user:b@example.com"]);
    });
});
