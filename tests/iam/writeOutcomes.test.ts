// What the plugin makes of a write whose outcome the network hid, and of writes whose read-backs overlap: through
// the real plugin, against the emulator behind a proxy that loses answers (tests/iam/faultProxy.ts). Each case is
// one way a landed write was lost track of: noted as never applied, never retried, or never read back.

import { expect } from "chai";
import { Engine, startEngine, until } from "../support/engine";
import { MEMBER, pulumiHome, ROLE, Stack, startStack } from "../support/plugin";
import { Decide, faultProxy, FaultProxy, Seen } from "./faultProxy";

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
        await until(() => engine.messages.some((m) => m.includes("before Pulumi recorded them")));
        expect(engine.messages.join("\n")).to.contain("before Pulumi recorded them").and.contain("user:landed@example.com");
    });
});
