// The YAML program of tests/e2e/programs/yaml through the real engine (pulumi CLI + pulumi-language-yaml built
// from Go modules), the plugin installed from its tarball, against the emulator: preview, up, a second up with
// no changes, refresh (with and without drift), destroy; the emulator's state checked after each step, and the
// access token (secret stack config) never in the clear.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import {
    CONSUMER, PulumiSandbox, ROOT, SERVICE, VERSION, assertNeverInClear, onPath, skipUnless, stackOutputs, toolsMissing,
} from "./support";

const SERVICE_PARENT = `services/${SERVICE}`;
const CONSUMER_PARENT = `services/${SERVICE}/consumers/${CONSUMER}`;
const OUTSIDER = { role: "roles/viewer", members: ["user:outsider@example.com"] };
const EXISTING = { role: "roles/servicemanagement.serviceConsumer", members: ["user:existing@example.com"] };
const CONTROLLER = {
    role: "roles/servicemanagement.serviceController",
    members: ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"],
};
// What getIAMPolicy builds from the program's bindings, in the canonical form (README).
const BUILT = {
    bindings: [
        {
            condition: { expression: 'request.time < timestamp("2030-01-01T00:00:00Z")', title: "until-2030" },
            members: ["serviceAccount:deployer@example-project.iam.gserviceaccount.com"],
            role: "roles/servicemanagement.admin",
        },
        { members: ["group:readers@example.com", "user:alice@example.com"], role: "roles/servicemanagement.serviceConsumer" },
    ],
};

describe("e2e: Pulumi YAML program with the real engine", function () {
    this.timeout(180_000);
    this.slow(20_000);

    const token = `e2e-yaml-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    let dir: string;

    const sets = () => emu.requests.filter((r) => r.path.endsWith(":setIamPolicy"));
    const gets = () => emu.requests.filter((r) => r.path.endsWith(":getIamPolicy"));
    const bindingsOf = (parent: string) => emu.getPolicy(parent).bindings ?? [];

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token], allowConditions: true });
        emu.createService(SERVICE, "example-project");
        emu.setPolicy(SERVICE_PARENT, { bindings: [OUTSIDER] });
        emu.setPolicy(CONSUMER_PARENT, { bindings: [EXISTING] });
        sb = await PulumiSandbox.create("yaml");
        dir = sb.project("yaml", {
            "Pulumi.yaml": fs.readFileSync(path.join(ROOT, "tests", "e2e", "programs", "yaml", "Pulumi.yaml"), "utf8"),
        });
        await sb.initStack(dir, emu.url, token);
    });

    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("keeps the access token encrypted in the stack's config file", () => {
        const config = fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8");
        expect(config).to.match(/cloud:accessToken:\s*\n\s*secure: /);
        expect(config).not.to.include(token);
    });

    it("preview: plans both resources and writes nothing", async () => {
        emu.resetRequests();
        const r = await sb.pulumi(["preview", "--diff"], dir);
        expect(r.stdout).to.match(/\+ cloud:endpoints\/serviceIamPolicy:ServiceIamPolicy: \(create\)\s*\[urn=\S*::policy\]/);
        expect(r.stdout).to.match(/\+ cloud:endpoints\/consumersIamMember:ConsumersIamMember: \(create\)\s*\[urn=\S*::controller\]/);
        expect(r.stdout).to.match(/\+ 3 to create/); // the stack and the two resources
        expect(gets().length, "the lookups ran").to.be.greaterThan(0);
        expect(sets(), "nothing written during preview").to.deep.equal([]);
        expect(bindingsOf(SERVICE_PARENT)).to.deep.equal([OUTSIDER]);
        expect(bindingsOf(CONSUMER_PARENT)).to.deep.equal([EXISTING]);
    });

    it("up: applies the built policy and the member, and exports both lookups' results", async () => {
        emu.resetRequests();
        const r = await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
        expect(r.stdout).to.match(/\+ 3 created/);

        // The emulator holds exactly the built policy (the outsider's grant is gone: the policy owns it all),
        // and the consumer policy gained the controller beside the existing grant.
        expect(bindingsOf(SERVICE_PARENT)).to.deep.equal(BUILT.bindings);
        expect(bindingsOf(CONSUMER_PARENT)).to.have.deep.members([EXISTING, CONTROLLER]);

        const out = await stackOutputs(sb, dir);
        expect(JSON.parse(out.builtPolicyData as string)).to.deep.equal(BUILT);
        // Read back after the write: byte-equal to what was built.
        expect(out.appliedPolicyData).to.equal(out.builtPolicyData);
        expect(out.appliedEtag).to.equal(emu.getPolicy(SERVICE_PARENT).etag);
        // The two lookups that do not depend on the resources may run before or after the writes (the YAML
        // engine does not order them): they saw either the seeded state or the written one. `return: bindings`
        // gave the list alone.
        expect(JSON.parse(out.readPolicyData as string)).to.deep.equal(
            out.readEtag === emu.getPolicy(SERVICE_PARENT).etag ? BUILT : { bindings: [OUTSIDER] });
        expect(out.readServiceId).to.equal(SERVICE_PARENT);
        expect([[EXISTING], [EXISTING, CONTROLLER]]).to.deep.include(out.consumerBindings);
        expect(out.policyId).to.equal(SERVICE_PARENT);
        expect(out.controllerId).to.be.a("string").and.include(CONTROLLER.members[0]);
    });

    it("uses the plugin installed from the tarball, through a default provider configured by stack config", async () => {
        // Nothing else could have served `cloud`: no `plugins:` in Pulumi.yaml, none on PATH; the engine marks
        // the installed plugin used.
        expect(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")).not.to.match(/^plugins:/m);
        expect(onPath("pulumi-resource-cloud", sb.env.PATH)).to.equal(false);
        const plugins = JSON.parse((await sb.pulumi(["plugin", "ls", "--json"], dir)).stdout);
        expect(plugins).to.have.length(1);
        expect(plugins[0]).to.include({ name: "cloud", kind: "resource", version: VERSION });
        expect(Date.parse(plugins[0].lastUsedTime)).to.be.greaterThan(Date.parse(plugins[0].installTime));

        const r = await sb.pulumi(["stack", "export"], dir);
        const deployment = JSON.parse(r.stdout).deployment;
        const providers = deployment.resources.filter((res: { type: string }) => res.type === "pulumi:providers:cloud");
        expect(providers).to.have.length(1);
        const [provider] = providers;
        // YAML names no version, so the default provider is `default` (an SDK's would be default_8_38_0).
        expect(provider.urn).to.match(/::pulumi:providers:cloud::default$/);
        expect(provider.inputs.serviceManagementCustomEndpoint).to.equal(emu.url);
        // The secret is in state only as ciphertext.
        expect(provider.inputs.accessToken).to.have.property("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270");
        expect(provider.inputs.accessToken).to.have.property("ciphertext").that.is.a("string");
        expect(fs.existsSync(path.join(sb.pluginDir, "pulumi-resource-cloud"))).to.equal(true);
        expect(fs.existsSync(path.join(sb.pluginDir, "PulumiPlugin.yaml"))).to.equal(false);
    });

    it("a second up changes nothing and writes nothing", async () => {
        emu.resetRequests();
        const before = emu.getPolicy(SERVICE_PARENT).etag;
        const r = await sb.pulumi(["up", "--yes", "--expect-no-changes"], dir);
        expect(r.stdout).to.match(/3 unchanged/);
        expect(sets()).to.deep.equal([]);
        expect(emu.getPolicy(SERVICE_PARENT).etag).to.equal(before);
        // This time every lookup sees the written state.
        const out = await stackOutputs(sb, dir);
        expect(out.readPolicyData).to.equal(out.builtPolicyData);
        expect(out.readEtag).to.equal(before);
        expect(out.consumerBindings).to.deep.equal([EXISTING, CONTROLLER]);
    });

    it("refresh: no drift reads as no change; a grant made outside shows as drift, and up puts the policy back", async () => {
        emu.resetRequests();
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], dir);
        expect(sets()).to.deep.equal([]);

        // Someone adds a grant outside Pulumi, and removes the controller member.
        emu.setPolicy(SERVICE_PARENT, { bindings: [...BUILT.bindings, OUTSIDER] });
        emu.setPolicy(CONSUMER_PARENT, { bindings: [EXISTING] });
        const refreshed = await sb.pulumi(["refresh", "--yes"], dir);
        expect(refreshed.stdout).to.match(/~ 1 updated/); // the policy's policyData changed
        expect(refreshed.stdout).to.match(/- 1 deleted/); // the member is gone
        expect(sets(), "refresh only reads").to.deep.equal([]);

        const up = await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
        expect(up.stdout).to.match(/\+ 1 created/);
        expect(up.stdout).to.match(/~ 1 updated/);
        expect(bindingsOf(SERVICE_PARENT)).to.deep.equal(BUILT.bindings);
        expect(bindingsOf(CONSUMER_PARENT)).to.have.deep.members([EXISTING, CONTROLLER]);
        await sb.pulumi(["up", "--yes", "--expect-no-changes"], dir);
    });

    it("destroy: empties the service policy and removes only the member from the consumer policy", async () => {
        const r = await sb.pulumi(["destroy", "--yes", "--skip-preview"], dir);
        expect(r.stdout).to.match(/- 3 deleted/);
        expect(bindingsOf(SERVICE_PARENT)).to.deep.equal([]);
        expect(bindingsOf(CONSUMER_PARENT)).to.deep.equal([EXISTING]);
    });

    it("never shows the access token: not in any output, state or backend file", async () => {
        const exported = await sb.pulumi(["stack", "export"], dir);
        const history = await sb.pulumi(["stack", "history", "--json"], dir);
        assertNeverInClear(sb, token, [exported.stdout, history.stdout]);
    });
});
