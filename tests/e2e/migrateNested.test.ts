// Coming from Pulumi GCP with a stack shaped as users write them, with the real engine (an Automation API inline
// TypeScript program against sdk/nodejs), the plugin installed from its tarball, against the emulator: a Member
// parented by a Binding (its URN carries the Binding's type), a component holding IAM resources, an explicit gcp
// provider used by some resources and the default provider by others, and `protect` on one. The old state is
// written as Pulumi GCP 8.38.0 writes it (its six types' inputs and outputs, its default provider holding the
// stack's gcp: config, an explicit provider holding the program's arguments); `migrate-from-gcp` rewrites it, the
// engine imports it, and the program written with this package's types (same names, parents and options, the
// printed provider in place of the gcp one) previews with no change, its up sends no setIamPolicy, a refresh finds
// no change, and destroy removes exactly the declared grants.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import type { Deployment, Stack } from "@pulumi/pulumi/automation";
import { Binding, Emulator, startEmulator } from "../../emulator";
import { compileNodeProgram, inlineStack, PulumiSandbox, SERVICE, CONSUMER, skipUnless, toolsMissing } from "./support";

const PROJECT = "shop";
const STACK_URN = `urn:pulumi:dev::${PROJECT}::pulumi:pulumi:Stack::${PROJECT}-dev`;
const urn = (chain: string, name: string) => `urn:pulumi:dev::${PROJECT}::${chain}::${name}`;
const GCP = {
    binding: "gcp:endpoints/serviceIamBinding:ServiceIamBinding",
    member: "gcp:endpoints/serviceIamMember:ServiceIamMember",
    consumersMember: "gcp:endpoints/consumersIamMember:ConsumersIamMember",
};
const SECRET_SIG = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
const CONSUMER_ROLE = "roles/servicemanagement.serviceConsumer";

/** The new program: the old one's resources with this package's types, same names, parents and options. */
const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as cloud from "pulumi-cloud-endpoints";

export function program(service: string, consumer: string, endpoint: string, token: string, protect: boolean): () => Promise<void> {
    return async () => {
        const prod = new cloud.Provider("prod", { project: "prod-project", serviceManagementCustomEndpoint: endpoint, accessToken: pulumi.secret(token) });
        const binding = new cloud.endpoints.ServiceIamBinding("binding", { serviceName: service, role: "roles/viewer", members: ["group:readers@example.com"] });
        new cloud.endpoints.ServiceIamMember("bob", { serviceName: service, role: "${CONSUMER_ROLE}", member: "user:bob@example.com" }, { parent: binding, protect });
        const team = new pulumi.ComponentResource("shop:index:Team", "platform", {}, {});
        new cloud.endpoints.ServiceIamMember("alice", { serviceName: service, role: "${CONSUMER_ROLE}", member: "user:alice@example.com" }, { parent: team, provider: prod });
        new cloud.endpoints.ConsumersIamMember("carol", { serviceName: service, consumerProject: consumer, role: "roles/viewer", member: "user:carol@example.com" }, { parent: team, provider: prod });
    };
}
`;

type StateResource = Record<string, unknown> & { urn: string; type: string };

/** The old stack's resources, as Pulumi GCP 8.38.0 writes them (a Terraform-bridged provider: __meta, __defaults). */
function gcpState(endpoint: string, token: string): StateResource[] {
    const secret = (v: string) => ({ ...SECRET_SIG, plaintext: JSON.stringify(v) });
    const defaultProvider = urn("pulumi:providers:gcp", "default_8_38_0");
    const prodProvider = urn("pulumi:providers:gcp", "prod");
    const bindingUrn = urn(GCP.binding, "binding");
    const teamUrn = urn("shop:index:Team", "platform");
    const iam = (chain: string, name: string, parent: string, provider: string, inputs: Record<string, unknown>, extra: Record<string, unknown> = {}): StateResource => {
        const type = chain.slice(chain.lastIndexOf("$") + 1);
        const id = type === GCP.consumersMember
            ? `services/${SERVICE}/consumers/${String(inputs.consumerProject)} ${String(inputs.role)} ${String(inputs.member)}`
            : `services/${SERVICE} ${String(inputs.role)}${type === GCP.binding ? "" : ` ${String(inputs.member)}`}`;
        const outputs = { ...inputs, id, etag: "BwYetag=", ...(type === GCP.consumersMember ? { consumerProject: `services/${SERVICE}/consumers/${String(inputs.consumerProject)}` } : {}) };
        return { urn: urn(chain, name), custom: true, id, type, inputs: { __defaults: [], ...inputs }, outputs: { __meta: "{\"schema_version\":\"0\"}", ...outputs },
            parent, provider, dependencies: [], propertyDependencies: {}, ...extra };
    };
    return [
        { urn: STACK_URN, custom: false, type: "pulumi:pulumi:Stack" },
        { urn: defaultProvider, custom: true, id: "d0000000-0000-4000-8000-000000000000", type: "pulumi:providers:gcp",
            inputs: { project: "example-project", serviceManagementCustomEndpoint: endpoint, accessToken: secret(token), version: "8.38.0" },
            outputs: { project: "example-project", serviceManagementCustomEndpoint: endpoint, accessToken: secret(token), version: "8.38.0" } },
        { urn: prodProvider, custom: true, id: "p0000000-0000-4000-8000-000000000000", type: "pulumi:providers:gcp", parent: STACK_URN,
            inputs: { project: "prod-project", serviceManagementCustomEndpoint: endpoint, accessToken: secret(token), version: "8.38.0" },
            outputs: { project: "prod-project", serviceManagementCustomEndpoint: endpoint, accessToken: secret(token), version: "8.38.0" } },
        iam(GCP.binding, "binding", STACK_URN, `${defaultProvider}::d0000000-0000-4000-8000-000000000000`,
            { serviceName: SERVICE, role: "roles/viewer", members: ["group:readers@example.com"] }),
        iam(`${GCP.binding}$${GCP.member}`, "bob", bindingUrn, `${defaultProvider}::d0000000-0000-4000-8000-000000000000`,
            { serviceName: SERVICE, role: CONSUMER_ROLE, member: "user:bob@example.com" }, { protect: true }),
        { urn: teamUrn, custom: false, type: "shop:index:Team", parent: STACK_URN },
        iam(`shop:index:Team$${GCP.member}`, "alice", teamUrn, `${prodProvider}::p0000000-0000-4000-8000-000000000000`,
            { serviceName: SERVICE, role: CONSUMER_ROLE, member: "user:alice@example.com" }),
        iam(`shop:index:Team$${GCP.consumersMember}`, "carol", teamUrn, `${prodProvider}::p0000000-0000-4000-8000-000000000000`,
            { serviceName: SERVICE, consumerProject: CONSUMER, role: "roles/viewer", member: "user:carol@example.com" }),
    ];
}

describe("e2e: coming from Pulumi GCP with nested resources, a component and an explicit provider (TypeScript, real engine)", function () {
    this.timeout(600_000);
    this.slow(60_000);

    const token = `e2e-migrate-nested-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    const writes = () => emu.requests.filter((q) => q.method === "POST" && q.path.endsWith(":setIamPolicy"));

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi"]));
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(SERVICE, "example-project");
        sb = await PulumiSandbox.create("migrate-nested");
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("migrate-from-gcp renames the chain and makes the explicit provider's twin; the program previews with no change, up writes nothing, destroy removes the declared grants", async () => {
        const entry = await compileNodeProgram("migrate-nested", PROGRAM);
        const { program } = require(entry) as { program(s: string, c: string, e: string, t: string, protect: boolean): () => Promise<void> };
        const stack: Stack = await inlineStack(sb, PROJECT, program(SERVICE, CONSUMER, emu.url, token, true), emu.url, token);
        await stack.setConfig("cloud:project", { value: "example-project" });

        // Google holds what the old resources declared, and a grant nobody in the stack declares.
        const other: Binding = { role: "roles/owner", members: ["user:other@example.com"] };
        emu.setPolicy(`services/${SERVICE}`, { bindings: [{ role: "roles/viewer", members: ["group:readers@example.com"] },
            { role: CONSUMER_ROLE, members: ["user:alice@example.com", "user:bob@example.com"] }, other] });
        emu.setPolicy(`services/${SERVICE}/consumers/${CONSUMER}`, { bindings: [{ role: "roles/viewer", members: ["user:carol@example.com"] }, other] });

        // The old state, imported as `pulumi stack import` would; then the command, as docs/migrate-from-gcp.md runs it.
        const exported = await stack.exportStack();
        const old: Deployment = { ...exported, deployment: { ...exported.deployment, resources: gcpState(emu.url, token) } };
        const dir = path.join(sb.dir, "nested");
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, "gcp-state.json"), JSON.stringify(old));
        const migrate = await sb.exec(path.join(sb.pluginDir, "pulumi-resource-cloud"),
            ["migrate-from-gcp", "--in", path.join(dir, "gcp-state.json"), "--out", path.join(dir, "cloud-state.json")], dir);
        expect(migrate.code, migrate.stderr).to.equal(0);
        // The next steps show the program's new provider, its secret not printed.
        expect(migrate.stderr).to.contain("type: pulumi:providers:cloud").and.contain('new cloud.Provider("prod"').and.not.contain(token);
        const migrated = JSON.parse(fs.readFileSync(path.join(dir, "cloud-state.json"), "utf8")) as Deployment;
        const urns = (migrated.deployment.resources as StateResource[]).map((r) => r.urn);
        expect(urns).to.include(urn("cloud:endpoints/serviceIamBinding:ServiceIamBinding$cloud:endpoints/serviceIamMember:ServiceIamMember", "bob"));
        expect(urns).to.include(urn("pulumi:providers:cloud", "prod")).and.not.include(urn("pulumi:providers:gcp", "prod"));
        await stack.importStack(migrated);

        emu.resetRequests();
        const preview = await stack.preview({ expectNoChanges: true });
        expect(preview.changeSummary, preview.stdout).to.deep.equal({ same: 7 }); // the stack, the component, four IAM resources and the explicit provider
        const up = await stack.up({ expectNoChanges: true });
        expect(writes(), up.stdout).to.deep.equal([]);
        await stack.refresh({ expectNoChanges: true });
        expect(writes()).to.deep.equal([]);
        const after = (await stack.exportStack()).deployment.resources as StateResource[];
        expect(after.find((r) => r.urn.endsWith("::bob"))?.protect, "protect carried").to.equal(true);
        expect(after.filter((r) => r.type.startsWith("gcp:") || r.type === "pulumi:providers:gcp").map((r) => r.urn)).to.deep.equal([]);

        // Unprotected by the program, then destroyed: exactly the declared grants go.
        const unprotected = await inlineStack(sb, PROJECT, program(SERVICE, CONSUMER, emu.url, token, false), emu.url, token);
        await unprotected.up();
        await unprotected.destroy();
        expect(emu.getPolicy(`services/${SERVICE}`).bindings).to.deep.equal([other]);
        expect(emu.getPolicy(`services/${SERVICE}/consumers/${CONSUMER}`).bindings).to.deep.equal([other]);
    });
});
