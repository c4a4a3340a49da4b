// `migrate-from-gcp` over a fixture export of a stack with Pulumi GCP's six Endpoints IAM resources: each becomes
// its cloud twin (same name, this package's ID, inputs and outputs as a refresh by this plugin writes them,
// __defaults/__meta gone, a cloud provider), parents and dependencies kept, other resources untouched; what it
// does not understand is refused and nothing is written.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { migrateFromGcp, MigrationError } from "../../provider/migrate/fromGcp";
import { resources } from "../../provider/resources";
import { toPropertyMap } from "../../provider/declare/properties";
import { runSubcommand, useStack } from "../support/plugin";
import { tempDir } from "../support/temp";

const FIXTURE = path.join(__dirname, "..", "..", "..", "tests", "migrate", "fixtures", "gcp-endpoints-export.json");
type Obj = Record<string, unknown> & { urn: string; type: string; id?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown>; provider?: string; dependencies?: string[]; parent?: string; propertyDependencies?: Record<string, string[]> };
const load = () => JSON.parse(fs.readFileSync(FIXTURE, "utf8"));
const S = "bookstore.endpoints.example-project.cloud.goog";
const P = "consumer-project-1";

function migrated(opts = {}): Obj[] {
    return (migrateFromGcp(load(), { providerId: "11111111-2222-4333-8444-555555555555", ...opts }).result.deployment as { resources: Obj[] }).resources;
}
const byName = (rs: Obj[], name: string) => rs.find((r) => r.urn.endsWith(`::${name}`))!;

function refused(exported: unknown, why: string): void {
    expect(() => migrateFromGcp(exported as never)).to.throw(MigrationError, why);
}

describe("migrate-from-gcp", () => {
    it("turns each of the six types into its cloud twin, same name, this package's ID", () => {
        const rs = migrated();
        const want: Record<string, [string, string]> = {
            policy: ["cloud:endpoints/serviceIamPolicy:ServiceIamPolicy", `services/${S}`],
            binding: ["cloud:endpoints/serviceIamBinding:ServiceIamBinding", `services/${S} roles/servicemanagement.serviceConsumer`],
            member: ["cloud:endpoints/serviceIamMember:ServiceIamMember", `services/${S} roles/servicemanagement.serviceConsumer user:jane@example.com expires-2030`],
            cpolicy: ["cloud:endpoints/consumersIamPolicy:ConsumersIamPolicy", `services/${S}/consumers/${P}`],
            cbinding: ["cloud:endpoints/consumersIamBinding:ConsumersIamBinding", `services/${S}/consumers/${P} roles/viewer`],
            cmember: ["cloud:endpoints/consumersIamMember:ConsumersIamMember", `services/${S}/consumers/${P} roles/viewer user:jane@example.com`],
        };
        for (const [name, [type, id]] of Object.entries(want)) {
            const r = byName(rs, name);
            expect(r.type, name).to.equal(type);
            expect(r.urn, name).to.equal(`urn:pulumi:dev::shop::${type}::${name}`);
            expect(r.id, name).to.equal(id);
            expect(JSON.stringify(r), name).not.to.contain("__defaults").and.not.contain("__meta").and.not.contain("gcp:endpoints");
        }
        expect(byName(rs, "member").inputs).to.deep.equal({ serviceName: S, role: "roles/servicemanagement.serviceConsumer", member: "user:jane@example.com",
            condition: { expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")", title: "expires-2030" } });
        expect(byName(rs, "binding").outputs).to.deep.equal({ serviceName: S, role: "roles/servicemanagement.serviceConsumer",
            members: ["group:a@example.com", "user:b@example.com"], etag: "BwYbinding=" });
        expect(byName(rs, "cmember").inputs?.consumerProject, "Terraform's services/S/consumers/P read back as P").to.equal(P);
        expect(byName(rs, "policy").inputs?.policyData).to.equal(JSON.stringify({ bindings: [{ members: ["user:jane@example.com"], role: "roles/viewer" }] }));
    });

    it("its inputs pass this package's Check", () => {
        for (const r of migrated().filter((x) => x.type.startsWith("cloud:"))) {
            const resource = resources.find((d) => d.token === r.type)!;
            expect(resource.check(toPropertyMap(r.inputs!)).failures, r.urn).to.deep.equal([]);
        }
    });

    it("makes a default cloud provider before the first migrated resource and points them at it; keeps parents, renames dependencies", () => {
        const rs = migrated();
        const provider = "urn:pulumi:dev::shop::pulumi:providers:cloud::default_8_38_0";
        const at = rs.findIndex((r) => r.urn === provider);
        expect(at).to.equal(rs.findIndex((r) => r.type.startsWith("cloud:endpoints/")) - 1);
        expect(rs[at]).to.include({ type: "pulumi:providers:cloud", id: "11111111-2222-4333-8444-555555555555", custom: true });
        for (const r of rs.filter((x) => x.type.startsWith("cloud:endpoints/"))) {
            expect(r.provider).to.equal(`${provider}::11111111-2222-4333-8444-555555555555`);
            expect(r.parent).to.equal("urn:pulumi:dev::shop::pulumi:pulumi:Stack::shop-dev");
        }
        expect(byName(rs, "member").dependencies).to.deep.equal(["urn:pulumi:dev::shop::cloud:endpoints/serviceIamBinding:ServiceIamBinding::binding"]);
        const bucket = byName(rs, "logs");
        expect(bucket.type).to.equal("gcp:storage/bucket:Bucket");
        expect(bucket.dependencies).to.deep.equal(["urn:pulumi:dev::shop::cloud:endpoints/serviceIamMember:ServiceIamMember::member"]);
        expect(bucket.propertyDependencies).to.deep.equal({ name: ["urn:pulumi:dev::shop::cloud:endpoints/serviceIamMember:ServiceIamMember::member"] });
        expect(rs.filter((r) => r.type === "pulumi:providers:gcp")).to.have.length(1);
    });

    it("gives the made cloud provider the gcp default provider's settings this package has (a secret kept secret), and lists them", () => {
        const exported = load();
        const gcp = exported.deployment.resources[1];
        Object.assign(gcp.inputs, { region: "europe-west1", requestTimeout: "60s",
            accessToken: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: "\"ya29.carried\"" } });
        const m = migrateFromGcp(exported, { providerId: "p" });
        expect(m.carried).to.deep.equal([{ key: "project", secret: false }, { key: "accessToken", secret: true }, { key: "requestTimeout", secret: false }]);
        const made = (m.result.deployment as { resources: Obj[] }).resources.find((r) => r.type === "pulumi:providers:cloud")!;
        expect(made.inputs).to.deep.equal({ project: "example-project", accessToken: gcp.inputs.accessToken, requestTimeout: "60s",
            version: "8.38.0", pluginDownloadURL: "github://api.github.com/example/pulumi-resource-cloud" });
        gcp.inputs.accessToken = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:xyz" };
        expect(() => migrateFromGcp(exported)).to.throw(MigrationError, "`accessToken` is an encrypted secret");
    });

    it("takes an explicit cloud provider of the export, refusing one it does not hold", () => {
        const exported = load();
        const explicit = { urn: "urn:pulumi:dev::shop::pulumi:providers:cloud::mine", custom: true, id: "abc", type: "pulumi:providers:cloud", inputs: {}, outputs: {} };
        exported.deployment.resources.splice(2, 0, explicit);
        const rs = (migrateFromGcp(exported, { provider: `${explicit.urn}::abc` }).result.deployment as { resources: Obj[] }).resources;
        expect(byName(rs, "policy").provider).to.equal(`${explicit.urn}::abc`);
        expect(rs.some((r) => r.urn.endsWith("::default_8_38_0") && r.type === "pulumi:providers:cloud")).to.equal(false);
        expect(() => migrateFromGcp(load(), { provider: `${explicit.urn}::abc` })).to.throw(MigrationError, "no `pulumi:providers:cloud` resource");
    });

    const BINDING_URN = "urn:pulumi:dev::shop::gcp:endpoints/serviceIamBinding:ServiceIamBinding::binding";
    const MEMBER_T = "gcp:endpoints/serviceIamMember:ServiceIamMember";
    const cloudOf = (urn: string) => urn.replace(/gcp:endpoints\//g, "cloud:endpoints/");

    /** The fixture with a Member parented by the Binding, a resource under that Member, and one that refers to both. */
    function nested() {
        const exported = load();
        const rs = exported.deployment.resources;
        const member = rs.find((r: Obj) => r.urn.endsWith("::member"));
        const bobUrn = `urn:pulumi:dev::shop::gcp:endpoints/serviceIamBinding:ServiceIamBinding$${MEMBER_T}::bob`;
        const bob = { ...structuredClone(member), urn: bobUrn, parent: BINDING_URN, protect: true, retainOnDelete: true,
            customTimeouts: { create: 60, update: 0, delete: 0 }, importID: "bookstore.endpoints.example-project.cloud.goog roles/servicemanagement.serviceConsumer user:jane@example.com expires-2030" };
        const idUrn = `${bobUrn.replace("::bob", "")}$random:index/randomId:RandomId::rid`;
        const rid = { urn: idUrn, custom: true, id: "r1", type: "random:index/randomId:RandomId", parent: bobUrn, inputs: {}, outputs: {},
            provider: "urn:pulumi:dev::shop::pulumi:providers:random::default::9", dependencies: [bobUrn] };
        const user = { urn: "urn:pulumi:dev::shop::gcp:storage/bucket:Bucket::audit", custom: true, id: "audit", type: "gcp:storage/bucket:Bucket",
            parent: "urn:pulumi:dev::shop::pulumi:pulumi:Stack::shop-dev", inputs: {}, outputs: {}, dependencies: [bobUrn, idUrn],
            propertyDependencies: { name: [idUrn] }, deletedWith: bobUrn, aliases: [idUrn], provider: member.provider };
        rs.push(bob, rid, user);
        return { exported, bobUrn, idUrn };
    }

    it("renames a migrated resource's descendants (URNs carry their ancestors' types) and every reference to them", () => {
        const { exported, bobUrn, idUrn } = nested();
        const rs = (migrateFromGcp(exported, { providerId: "p" }).result.deployment as { resources: Obj[] }).resources;
        const bob = rs.find((r) => r.urn === cloudOf(bobUrn))!;
        expect(bob, "the Member under the Binding").to.include({ type: "cloud:endpoints/serviceIamMember:ServiceIamMember", parent: cloudOf(BINDING_URN) });
        expect(rs.find((r) => r.urn === cloudOf(idUrn)), "a resource of another package under it").to.include({ parent: cloudOf(bobUrn), type: "random:index/randomId:RandomId" });
        const audit = byName(rs, "audit");
        expect(audit.dependencies).to.deep.equal([cloudOf(bobUrn), cloudOf(idUrn)]);
        expect(audit.propertyDependencies).to.deep.equal({ name: [cloudOf(idUrn)] });
        expect(audit).to.include({ deletedWith: cloudOf(bobUrn) });
        expect(audit.aliases).to.deep.equal([cloudOf(idUrn)]);
        expect(JSON.stringify(rs)).not.to.contain("gcp:endpoints/");
        // The options the engine keeps in state carry over; the import ID is this package's.
        expect(bob).to.include({ protect: true, retainOnDelete: true, importID: bob.id });
        expect(bob.customTimeouts).to.deep.equal({ create: 60, update: 0, delete: 0 });
    });

    it("refuses a rename onto a URN the stack already holds, naming both", () => {
        const { exported, bobUrn } = nested();
        exported.deployment.resources.push({ urn: cloudOf(bobUrn), custom: true, id: "x", type: "cloud:endpoints/serviceIamMember:ServiceIamMember", inputs: {}, outputs: {} });
        refused(exported, `${bobUrn} would become ${cloudOf(bobUrn)}, which the stack already holds`);
    });

    it("gives the resources of an explicit gcp provider a cloud provider of the same name beside it, its shared settings kept (a secret secret)", () => {
        const exported = load();
        const rs0 = exported.deployment.resources;
        const gcpProd = { urn: "urn:pulumi:dev::shop::pulumi:providers:gcp::prod", custom: true, id: "g1", type: "pulumi:providers:gcp",
            inputs: { project: "prod-project", region: "europe-west1", accessToken: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: "\"ya29.prod\"" } },
            outputs: {} };
        rs0.splice(2, 0, gcpProd);
        // The first migrated resource, and the bucket, on the explicit provider; the rest on the default one.
        for (const r of rs0.filter((x: Obj) => /::(policy|logs)$/.test(x.urn))) r.provider = `${gcpProd.urn}::g1`;
        const m = migrateFromGcp(exported, { providerId: "p", providerIds: ["c1"] });
        const rs = (m.result.deployment as { resources: Obj[] }).resources;
        const twin = rs.find((r) => r.urn === "urn:pulumi:dev::shop::pulumi:providers:cloud::prod")!;
        expect(rs.indexOf(twin), "right after the gcp provider").to.equal(rs.findIndex((r) => r.urn === gcpProd.urn) + 1);
        expect(twin.inputs).to.deep.equal({ project: "prod-project", accessToken: gcpProd.inputs.accessToken, version: "8.38.0",
            pluginDownloadURL: "github://api.github.com/example/pulumi-resource-cloud" });
        expect(byName(rs, "policy").provider).to.equal(`${twin.urn}::c1`);
        expect(byName(rs, "binding").provider).to.equal("urn:pulumi:dev::shop::pulumi:providers:cloud::default_8_38_0::p");
        expect(byName(rs, "logs").provider, "the gcp provider stays for the rest").to.equal(`${gcpProd.urn}::g1`);
        expect(m.carried.map((c) => c.key), "the default provider's settings, though the first resource is on the explicit one").to.deep.equal(["project"]);
        expect(m.providers).to.deep.equal([{ gcp: gcpProd.urn, name: "prod", settings: [{ key: "project", secret: false, value: "prod-project" },
            { key: "accessToken", secret: true, value: undefined }], replaced: false }]);
        // Used by migrated resources only, the gcp provider is replaced by its twin (the engine would delete it).
        const onlyIam = structuredClone(exported);
        delete onlyIam.deployment.resources.find((r: Obj) => r.urn.endsWith("::logs")).provider;
        const replaced = migrateFromGcp(onlyIam, { providerId: "p", providerIds: ["c1"] });
        const left = (replaced.result.deployment as { resources: Obj[] }).resources;
        expect(left.some((r) => r.urn === gcpProd.urn)).to.equal(false);
        expect(left.findIndex((r) => r.urn === twin.urn)).to.equal(rs.findIndex((r) => r.urn === gcpProd.urn));
        expect(replaced.providers[0].replaced).to.equal(true);
        // A cloud provider of that name already there: the made one's name says so.
        rs0.splice(3, 0, { urn: "urn:pulumi:dev::shop::pulumi:providers:cloud::prod", custom: true, id: "c0", type: "pulumi:providers:cloud", inputs: {}, outputs: {} });
        const again = (migrateFromGcp(exported, { providerId: "p", providerIds: ["c1"] }).result.deployment as { resources: Obj[] }).resources;
        expect(byName(again, "policy").provider).to.equal("urn:pulumi:dev::shop::pulumi:providers:cloud::prod-cloud::c1");
    });

    it("refuses what it does not understand: not an export, an unknown version, pending operations, a missing property, an encrypted secret", () => {
        refused([1, 2], "not the output of `pulumi stack export`");
        refused({ ...load(), version: 4 }, "version is 4");
        const pending = load();
        pending.deployment.pending_operations = [{ resource: pending.deployment.resources[2], type: "updating" }];
        refused(pending, "1 pending operation(s)");
        const missing = load();
        delete missing.deployment.resources[3].inputs.role;
        delete missing.deployment.resources[3].outputs.role;
        refused(missing, "serviceIamBinding:ServiceIamBinding::binding: `role` is missing");
        const secret = load();
        secret.deployment.resources[4].inputs.member = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:xyz" };
        refused(secret, "--show-secrets");
    });

    it("keeps a plaintext secret secret", () => {
        const secret = load();
        secret.deployment.resources[4].inputs.member = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: "\"user:jane@example.com\"" };
        const r = byName((migrateFromGcp(secret).result.deployment as { resources: Obj[] }).resources, "member");
        expect(r.inputs?.member).to.deep.equal({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: "\"user:jane@example.com\"" });
    });

    describe("as a refresh by this plugin would write them", function () {
        this.timeout(60_000);
        const stack = useStack("ya29.migrate-test-token", [S]);
        before(() => {
            const bindings = [
                { role: "roles/servicemanagement.serviceConsumer", members: ["group:a@example.com", "user:b@example.com"] },
                { role: "roles/servicemanagement.serviceConsumer", members: ["user:jane@example.com"], condition: { title: "expires-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" } },
                { role: "roles/viewer", members: ["user:jane@example.com"] },
            ];
            stack.emu.setPolicy(`services/${S}`, { bindings });
            stack.emu.setPolicy(`services/${S}/consumers/${P}`, { bindings });
        });
        it("a refresh of each migrated grant resource keeps its ID and inputs", async () => {
            for (const r of migrated().filter((x) => /Iam(Binding|Member):/.test(x.type))) {
                const read = await stack.plugin.read(r.type, r.id!, r.outputs as never, r.inputs as never);
                expect(read.id, r.urn).to.equal(r.id);
                expect(read.inputs, r.urn).to.deep.equal(r.inputs);
            }
        });
    });

    describe("the subcommand", function () {
        this.timeout(30_000);
        const run = (args: string[], stdin = "") => runSubcommand(["migrate-from-gcp", ...args], stdin);

        it("reads stdin, writes stdout; --in/--out files", async () => {
            const r = await run([], fs.readFileSync(FIXTURE, "utf8"));
            expect(r.code, r.stderr).to.equal(0);
            expect(JSON.parse(r.stdout).deployment.resources.filter((x: Obj) => x.type.startsWith("cloud:endpoints/"))).to.have.length(6);
            expect(r.stderr).to.contain("migrated 6 resource(s)")
            .and.contain('pulumi config set cloud:project "$(pulumi config get gcp:project)"')
            .and.contain('typescript:  import * as cloud from "pulumi-cloud-endpoints";');
            const out = path.join(tempDir("migrate"), "import.json");
            const f = await run(["--in", FIXTURE, "--out", out], "");
            expect(f.code, f.stderr).to.equal(0);
            expect(JSON.parse(fs.readFileSync(out, "utf8")).version).to.equal(3);
        });

        it("refuses with exit 1 and writes nothing", async () => {
            const out = path.join(tempDir("migrate"), "import.json");
            const r = await run(["--out", out], JSON.stringify({ ...load(), version: 2 }));
            expect(r.code).to.equal(1);
            expect(r.stderr).to.contain("version is 2").and.contain("nothing was written");
            expect(fs.existsSync(out)).to.equal(false);
            const bad = await run(["--bogus"], "");
            expect(bad.code).to.equal(2);
            expect(bad.stderr).to.contain("usage: pulumi-resource-cloud migrate-from-gcp");
        });
    });
});
