// Never lose a grant, never drop state: those rules over the protocol, with the real
// plugin process against the emulator. The same cases run through the real CLI and YAML host in
// tests/e2e/grants.test.ts; these are the fast ones, for `npm test` without the tools.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { Engine, startEngine, until, warningsSoFar } from "../support/engine";
import { BINDING, listGrants, MEMBER, Plugin, POLICY, ROLE, rpcError, SERVICE_FN, Stack, startStack, useStack } from "../support/plugin";
import { dieAfterWrite as diesAfterWrite, JOURNAL_SAYS, machine as onMachine } from "../support/machine";
import { recordWrites } from "../support/proxy";

const TOKEN = "ya29.ownership-test-token";
const SERVICE = "owned.endpoints.my-project.cloud.goog";
const PARENT = `services/${SERVICE}`;


describe("one grant, one owner: replacements, renames, duplicates", function () {
    this.timeout(60_000);
    let engine: Engine;
    let stack: Stack;
    const grants = () => listGrants(stack.emu.getPolicy(PARENT));
    const warningsOn = (name: string) => warningsSoFar(stack.plugin, engine, SERVICE, name);

    // Each test is one deployment: a plugin process of its own, logging to a recording engine.
    before(async () => {
        engine = await startEngine();
        stack = await startStack(TOKEN, [SERVICE], { engine });
    });
    after(async () => {
        await stack?.stop();
        engine?.close();
    });
    beforeEach(() => {
        stack.emu.setPolicy(PARENT, {});
        engine.logs.length = 0;
    });
    // Stopping the test's plugin waits for its writes to be confirmed (its drain): none reaches the next test.
    afterEach(() => stack.nextDeployment());

    it("asks to create first on every Diff, so the old resource's Delete comes after every Check (replaceOnChanges reads the same flag)", async () => {
        const olds = { serviceName: SERVICE, role: ROLE, members: ["user:a@example.com"] };
        const d = await stack.plugin.diff(BINDING, "id", olds, { ...olds, members: ["user:b@example.com"] });
        expect(d).to.deep.include({ replaces: [], deleteBeforeReplace: false });
        const r = await stack.plugin.diff(BINDING, "id", olds, { ...olds, role: "roles/viewer" });
        expect(r).to.deep.include({ replaces: ["role"], deleteBeforeReplace: false });
        const p = await stack.plugin.diff(POLICY, "id", { serviceName: SERVICE, policyData: "{}" }, { serviceName: SERVICE, policyData: "{}" });
        expect(p.deleteBeforeReplace).to.equal(false);
    });

    it("a replacement created first (`--replace`, a changed provider) keeps the grant its old self's Delete would take", async () => {
        const inputs = { serviceName: SERVICE, role: ROLE, member: "user:kept@example.com" };
        const first = await stack.plugin.create(MEMBER, inputs, false, "m");
        // The engine's replacement: Check and Create of the new resource (same URN), then Delete of the old one.
        await stack.plugin.check(MEMBER, inputs, inputs, "m");
        await stack.plugin.create(MEMBER, inputs, false, "m");
        await stack.plugin.delete(MEMBER, first.id, first.properties, "m");
        expect(grants()).to.deep.equal([`${ROLE} user:kept@example.com`]);
        expect((await warningsOn("m")).join("\n")).to.contain("left a grant").and.contain("this resource's replacement");
    });

    it("a Binding replaced delete-first removes only the members its replacement does not declare", async () => {
        const old = { serviceName: SERVICE, role: ROLE, members: ["user:a@example.com", "user:b@example.com"] };
        const created = await stack.plugin.create(BINDING, old, false, "b");
        const news = { ...old, members: ["user:a@example.com", "user:c@example.com"] };
        await stack.plugin.check(BINDING, news, old, "b");
        // The delete and the create through a proxy that keeps every policy the plugin writes.
        const proxy = await recordWrites(stack.emu.url);
        try {
            await stack.configure({ "cloud:config:serviceManagementCustomEndpoint": proxy.url });
            await stack.plugin.delete(BINDING, created.id, created.properties, "b");
            expect(grants()).to.deep.equal([`${ROLE} user:a@example.com`]);
            await stack.plugin.create(BINDING, news, false, "b");
            expect(grants()).to.deep.equal([`${ROLE} user:a@example.com`, `${ROLE} user:c@example.com`]);
            // user:a kept all along: no policy written in between lacked it.
            expect(proxy.writes.map(listGrants)).to.deep.equal([
                [`${ROLE} user:a@example.com`],
                [`${ROLE} user:a@example.com`, `${ROLE} user:c@example.com`],
            ]);
        } finally {
            await stack.configure();
            await proxy.close();
        }
    });

    it("a Policy replaced by a Policy of the same parent leaves the policy to it (no empty policy written)", async () => {
        const data = JSON.stringify({ bindings: [{ role: ROLE, members: ["user:a@example.com"] }] });
        const created = await stack.plugin.create(POLICY, { serviceName: SERVICE, policyData: data }, false, "p");
        const next = JSON.stringify({ bindings: [{ role: ROLE, members: ["user:b@example.com"] }] });
        await stack.plugin.check(POLICY, { serviceName: SERVICE, policyData: next }, {}, "p");
        await stack.plugin.create(POLICY, { serviceName: SERVICE, policyData: next }, false, "p");
        await stack.plugin.delete(POLICY, created.id, created.properties, "p");
        expect(grants()).to.deep.equal([`${ROLE} user:b@example.com`]);
    });

    // Found by the journal's simulator (seed 3, case 371): a run stopped between the new Policy's Create and the old
    // one's Delete leaves the stack holding both; the program reverted to the old one, whose state its inputs match, so
    // it writes nothing, and the new one's Delete, leaving the policy to it, left its grants in IAM and in no state.
    it("two Policies of one parent in the stack, the program reverted to the one that writes nothing: the other's Delete removes what it alone declared", async () => {
        const data = (members: string[]) => JSON.stringify({ bindings: [{ role: ROLE, members }] });
        const p0 = { serviceName: SERVICE, policyData: data(["user:kept0@example.com"]) };
        await stack.plugin.create(POLICY, p0, false, "p0");
        const p1 = await stack.plugin.create(POLICY, { serviceName: SERVICE, policyData: data(["user:kept0@example.com", "user:only1@example.com"]) }, false, "p1");
        expect(grants()).to.deep.equal([`${ROLE} user:kept0@example.com`, `${ROLE} user:only1@example.com`]);
        await stack.nextDeployment();
        await stack.plugin.check(POLICY, p0, p0, "p0");
        await stack.plugin.delete(POLICY, p1.id, p1.properties, "p1");
        expect(grants()).to.deep.equal([`${ROLE} user:kept0@example.com`]);
        expect((await warningsOn("p1")).join("\n")).to.contain("ServiceIamPolicy::p0").and.contain("only what this resource alone declared");
    });

    it("renamed without an alias: the old name's Delete leaves the grant the new name declares, and says so on the old", async () => {
        const inputs = { serviceName: SERVICE, role: ROLE, member: "user:cat@example.com" };
        const old = await stack.plugin.create(MEMBER, inputs, false, "cat");
        await stack.plugin.check(MEMBER, inputs, {}, "dog");
        await stack.plugin.create(MEMBER, inputs, false, "dog");
        await stack.plugin.delete(MEMBER, old.id, old.properties, "cat");
        expect(grants()).to.deep.equal([`${ROLE} user:cat@example.com`]);
        expect((await warningsOn("cat")).join("\n")).to.contain("ServiceIamMember::dog");
    });

    it("two Members of one grant as IAM compares emails: each is warned, naming the other; deleting one keeps the grant", async () => {
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:dup@example.com" }, {}, "lower");
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:DUP@example.com" }, {}, "upper");
        const lower = await stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:dup@example.com" }, false, "lower");
        await stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:DUP@example.com" }, false, "upper");
        expect((await warningsOn("lower")).join("\n")).to.contain("ServiceIamMember::upper").and.contain("same grant");
        expect((await warningsOn("upper")).join("\n")).to.contain("ServiceIamMember::lower");
        // The next deployment declares only "upper"; "lower" goes.
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:DUP@example.com" }, {}, "upper");
        await stack.plugin.delete(MEMBER, lower.id, lower.properties, "lower");
        expect(grants()).to.deep.equal([`${ROLE} user:dup@example.com`]);
    });

    it("a Binding and a Member on one role: each resource is warned of the flip-flop, naming the other", async () => {
        await stack.plugin.check(BINDING, { serviceName: SERVICE, role: ROLE, members: ["user:a@example.com"] }, {}, "binding");
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:b@example.com" }, {}, "member");
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: "roles/servicemanagement.admin", member: "user:b@example.com" }, {}, "other");
        expect((await warningsOn("binding")).join("\n")).to.contain("ServiceIamMember::member").and.contain("flip-flops");
        expect((await warningsOn("member")).join("\n")).to.contain("ServiceIamBinding::binding");
        expect(await warningsOn("other")).to.deep.equal([]);
    });

    it("a Policy deleted beside Bindings the deployment declares keeps their grants", async () => {
        // Grants no earlier test's resources held: where the command line is unknown (as here), a Delete also leaves
        // what a resource the run did not Check held when last seen (tests/deployment/).
        const data = JSON.stringify({ bindings: [{ role: ROLE, members: ["user:policy-a@example.com", "user:policy-b@example.com"] }] });
        const created = await stack.plugin.create(POLICY, { serviceName: SERVICE, policyData: data }, false, "p");
        await stack.plugin.check(BINDING, { serviceName: SERVICE, role: ROLE, members: ["user:policy-b@example.com"] }, {}, "binding");
        await stack.plugin.delete(POLICY, created.id, created.properties, "p");
        expect(grants()).to.deep.equal([`${ROLE} user:policy-b@example.com`]);
    });

    it("a Delete sees what the deployment's other plugin processes declare (an explicit provider runs in its own)", async () => {
        const inputs = { serviceName: SERVICE, role: ROLE, member: "user:shared@example.com" };
        const old = await stack.plugin.create(MEMBER, inputs, false, "m");
        const other = await stack.startPlugin();
        try {
            await other.check(MEMBER, inputs, {}, "m"); // the replacement, under the new provider
            await stack.plugin.delete(MEMBER, old.id, old.properties, "m");
            expect(grants()).to.deep.equal([`${ROLE} user:shared@example.com`]);
        } finally {
            await other.stop();
        }
    });
});

describe("the preview lists grants, not positions", function () {
    this.timeout(30_000);
    const stack = useStack(TOKEN, [SERVICE]);

    it("a Policy's change is the grants it adds and removes", async () => {
        const before = JSON.stringify({ bindings: [
            { role: "roles/servicemanagement.admin", members: ["serviceAccount:deployer@my-project.iam.gserviceaccount.com"] },
            { role: ROLE, members: ["user:alice@example.com"] }] });
        const after = JSON.stringify({ bindings: [
            { role: "roles/editor", members: ["user:bob@example.com"] },
            { role: "roles/servicemanagement.admin", members: ["serviceAccount:deployer@my-project.iam.gserviceaccount.com"] },
            { role: ROLE, members: ["user:carol@example.com"],
                condition: { title: "until-2030", expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' } }] });
        const d = await stack.plugin.diff(POLICY, "id", { serviceName: SERVICE, policyData: before }, { serviceName: SERVICE, policyData: after });
        expect(d.diffs).to.deep.equal(["policyData"]);
        expect(d.detailed).to.deep.equal({
            'policyData["roles/editor user:bob@example.com"]': "ADD",
            [`policyData["${ROLE} user:carol@example.com [if until-2030]"]`]: "ADD",
            [`policyData["${ROLE} user:alice@example.com"]`]: "DELETE",
        });
    });

    it("a Binding's change is the members it adds (at their new place) and removes (at their old place)", async () => {
        const olds = { serviceName: SERVICE, role: ROLE, members: ["user:a@example.com", "user:b@example.com", "user:c@example.com"] };
        const d = await stack.plugin.diff(BINDING, "id", olds, { ...olds, members: ["user:A@example.com", "user:c@example.com", "user:d@example.com"] });
        expect(d.detailed).to.deep.equal({ "members[2]": "ADD", "members[1]": "DELETE" });
    });
});

describe("gone needs Google's word", function () {
    this.timeout(60_000);
    const stack = useStack(TOKEN, [SERVICE]);
    const inputs = { serviceName: SERVICE, role: ROLE, member: "user:stays@example.com" };

    for (const [what, endpoint] of [
        ["the URL without /v1/ (an HTML page)", (url: string) => url.replace(/v1\/$/, "")],
        ["/v1/ twice (a JSON 'requested URL was not found')", (url: string) => `${url}v1/`],
    ] as const) {
        it(`a 404 from ${what} is an error naming the endpoint and its setting, in refresh, create, delete and lookups`, async () => {
            const created = await stack.plugin.create(MEMBER, inputs);
            await stack.configure({ "cloud:config:serviceManagementCustomEndpoint": endpoint(stack.emu.url) });
            try {
                for (const call of [
                    () => stack.plugin.read(MEMBER, created.id, created.properties, inputs),
                    () => stack.plugin.delete(MEMBER, created.id, created.properties),
                    () => stack.plugin.create(MEMBER, { ...inputs, member: "user:new@example.com" }),
                    () => stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE }),
                ]) {
                    const err = await rpcError(call());
                    expect(err.code).to.equal(grpc.status.FAILED_PRECONDITION);
                    expect(err.details).to.contain(endpoint(stack.emu.url)).and.contain("cloud:serviceManagementCustomEndpoint")
                        .and.contain("ending in /v1/");
                }
                expect(stack.emu.getPolicy(PARENT).bindings).to.deep.equal([{ role: ROLE, members: ["user:stays@example.com"] }]);
            } finally {
                await stack.configure();
                await stack.plugin.delete(MEMBER, created.id, created.properties);
            }
        });
    }

    it("Google's NOT_FOUND about the service still means gone (refresh drops it)", async () => {
        stack.emu.setBehavior({ missingService: 404 });
        try {
            const read = await stack.plugin.read(MEMBER, "id", {}, { ...inputs, serviceName: "missing.endpoints.my-project.cloud.goog" });
            expect(read.id).to.equal("");
        } finally {
            stack.emu.setBehavior({ missingService: 403 });
        }
    });
});

describe("a plugin never outlives its engine", function () {
    this.timeout(30_000);

    it("exits by itself, within 10 s, once the engine's address stops answering", async () => {
        const engine = await startEngine();
        const plugin = await Plugin.start({ args: [engine.address] });
        engine.close();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise((r) => (timer = setTimeout(() => r("still running after 10 s"), 10_000)));
        const code = await Promise.race([plugin.exited, late]);
        clearTimeout(timer);
        if (typeof code === "string") await plugin.stop();
        expect(code, "its exit code, within 10 s").to.equal(0);
        expect(plugin.stderr).to.contain("no longer accepts connections");
    });
});

describe("messages name what the user typed", function () {
    this.timeout(30_000);
    const stack = useStack(TOKEN, [SERVICE]);

    it("an explicit provider resource without credentials is told to set them on that resource", async () => {
        const plugin = await Plugin.start({ env: { METADATA_SERVER_DETECTION: "none" } });
        try {
            const req = new pb.ConfigureRequest().setAcceptsecrets(true).setName("prod").setUrn(plugin.urn("pulumi:providers:cloud", "prod"))
                .setArgs(Struct.fromJavaScript({ serviceManagementCustomEndpoint: stack.emu.url }));
            await plugin.call("configure", req);
            const err = await rpcError(plugin.invoke(SERVICE_FN, { serviceName: SERVICE }));
            expect(err.details).to.contain('on the provider resource "prod"').and.not.contain("pulumi config set");
            expect(err.details).not.to.match(/\.\./);
        } finally {
            await plugin.stop();
        }
    });

    it("a request timeout too short for any call says so, not that other changes kept the policy busy", async () => {
        await stack.configure({ "cloud:config:requestTimeout": "1ms" });
        try {
            const err = await rpcError(stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:t@example.com" }));
            expect(err.details).to.contain("cloud:requestTimeout").and.not.contain("busy with other changes");
        } finally {
            await stack.configure();
        }
    });
});

describe("after a crash, no grant is orphaned in silence", function () {
    this.timeout(60_000);

    const machine = (body: (stack: Stack, engine: Engine, home: string) => Promise<void>) => onMachine(TOKEN, [SERVICE], body);
    /** The write of `create` lands, but its answer is held: the run's plugin dies before the engine hears of it. */
    const dieAfterWrite = (stack: Stack, create: (p: Plugin) => Promise<unknown>) => diesAfterWrite(stack, PARENT, stack.plugin, create);

    it("a grant written just before the plugin died is never removed: every later run names it, with the command, until Google shows it gone", () => machine(async (stack, engine) => {
        await dieAfterWrite(stack, (p) => p.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:orphan@example.com" }, false, "orphan"));
        expect(stack.emu.getPolicy(PARENT).bindings).to.deep.equal([{ role: ROLE, members: ["user:orphan@example.com"] }]);
        const said = () => engine.messages.filter((m) => m.includes(JOURNAL_SAYS.unanswered) && m.includes("user:orphan@example.com"));
        // `pulumi destroy` of the rest: the program no longer declares it, and nothing of the stack holds it.
        for (let run = 1; run <= 2; run++) {
            await stack.nextDeployment();
            const other = await stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:other@example.com" }, false, "other");
            await stack.plugin.delete(MEMBER, other.id, other.properties, "other");
            expect(await stack.plugin.stop()).to.equal(0);
            expect(said(), `said once by run ${run}`).to.have.length(run);
        }
        expect(said()[0]).to.contain(`pulumi import --protect=false cloud:endpoints/serviceIamMember:ServiceIamMember`)
            .and.contain(`'${PARENT} ${ROLE} user:orphan@example.com'`);
        expect(stack.emu.getPolicy(PARENT).bindings, "never removed on the journal's word").to.deep.equal([{ role: ROLE, members: ["user:orphan@example.com"] }]);
        // The user does as told: the import, then an up that deletes what the program does not declare.
        await stack.nextDeployment();
        const imported = await stack.plugin.read(MEMBER, `${PARENT} ${ROLE} user:orphan@example.com`, {}, {}, "orphan-x");
        await stack.nextDeployment();
        await stack.plugin.delete(MEMBER, imported.id, imported.properties, "orphan-x");
        expect(await stack.plugin.stop()).to.equal(0);
        expect(stack.emu.getPolicy(PARENT).bindings ?? []).to.deep.equal([]);
        // Google shows it gone: settled, and no later run speaks of it.
        const before = said().length;
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:y@example.com" }, {}, "y");
        expect(await stack.plugin.stop()).to.equal(0);
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:y@example.com" }, {}, "y");
        expect(await stack.plugin.stop()).to.equal(0);
        expect(said()).to.have.length(before);
    }));

    it("a write the API refused is no orphan: the next run reports nothing and removes nothing", () => machine(async (stack, engine) => {
        // A role of the right form that this API does not take: Google answers 400.
        const err = await rpcError(stack.plugin.create(MEMBER, { serviceName: SERVICE, role: "roles/storage.admin", member: "user:x@example.com" }, false, "x"));
        expect(err.details).to.contain("HTTP 400");
        stack.plugin.child.kill("SIGKILL");
        await stack.plugin.exited;
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:y@example.com" }, {}, "y");
        // The report would come with the run's first resource request, before the marker's warning.
        await warningsSoFar(stack.plugin, engine, SERVICE, "y");
        await stack.plugin.stop();
        expect(engine.messages.join("\n")).not.to.contain(JOURNAL_SAYS.unanswered);
    }));

    /** The texts of the files the plugin keeps in `home` (its crash journal: provider/deployment/files.ts). */
    function journal(home: string): string[] {
        const root = path.join(home, "plugins-state");
        if (!fs.existsSync(root)) return [];
        return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
            .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), "utf8"));
    }

    it("a grant written just before the plugin died is recorded, not removed, when the program still declares it", () => machine(async (stack, engine, home) => {
        const inputs = { serviceName: SERVICE, role: ROLE, member: "user:kept@example.com" };
        const orphaned = JOURNAL_SAYS.unanswered;
        await dieAfterWrite(stack, (p) => p.create(MEMBER, inputs, false, "kept"));
        // The dead plugin noted the write on disk before sending it.
        expect(journal(home).filter((t) => t.includes("user:kept@example.com")), "the journal's note of the write").to.have.length(1);
        // `pulumi up` again: the program still has it. The run names it as it starts; its Create finds the grant
        // there and is answered to a live engine, which records it: nothing removed, nothing said again, and the
        // journal keeps no write for later.
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, inputs, {}, "kept");
        await stack.plugin.create(MEMBER, inputs, false, "kept");
        expect(await stack.plugin.stop()).to.equal(0);
        expect(stack.emu.getPolicy(PARENT).bindings).to.deep.equal([{ role: ROLE, members: ["user:kept@example.com"] }]);
        expect(engine.messages.filter((m) => m.includes(orphaned)), "what was said of it").to.have.length(1);
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, inputs, {}, "kept");
        expect(await stack.plugin.stop()).to.equal(0);
        expect(engine.messages.filter((m) => m.includes(orphaned)), "said once").to.have.length(1);
        // What stays is what the stack holds (for a later `--target` Delete), no write left to settle.
        expect(journal(home).filter((t) => t.includes(`"op":"wrote"`)), "the journal once the run ended").to.deep.equal([]);
    }));
});
