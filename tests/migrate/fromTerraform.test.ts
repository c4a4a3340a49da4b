// `migrate-from-terraform` over a Terraform state fixture with the six Endpoints IAM types in every shape (count,
// for_each, nested modules, a custom role, a principal:// member, a condition; google, google-beta and OpenTofu's
// registry): one import entry per instance, this package's token, an import ID made from the attributes that names
// the same grant as Terraform's `id`, a readable unique name from the address, the address beside it; data sources and
// other types left out with the reason. The IDs are then imported through the real plugin against the emulator
// holding the grants as Terraform wrote them. Bad input is refused naming the file and the address, nothing written.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { ImportEntry, migrateFromTerraform as migrateValue, TerraformOptions, TERRAFORM_TYPES } from "../../provider/migrate/fromTerraform";
import { toValue } from "../../provider/declare/properties";
import { MigrationError } from "../../provider/migrate/fromGcp";
import { parseImportId } from "../../provider/resources/importId";
import { Binding, canonicalBindings } from "../../provider/iam/policy";
import { runSubcommand, useStack } from "../support/plugin";
import { tempDir } from "../support/temp";
import { appliedPolicies, iamInstances, loadState, parentOf, TFSTATE, TfState } from "./terraformState";

/** The migration of a state as a test builds it (a typed object; the command gets parsed JSON). */
const migrateFromTerraform = (state: unknown, opts?: TerraformOptions) => migrateValue(toValue(state), opts);
const S = "bookstore.endpoints.example-project.cloud.goog";
const byAddress = (rs: ImportEntry[], a: string) => rs.find((r) => r.terraformAddress === a)!;

function refused(state: unknown, ...why: string[]): void {
    expect(() => migrateFromTerraform(state, { source: "terraform.tfstate" })).to.throw(MigrationError)
        .that.satisfies((e: Error) => why.every((w) => e.message.includes(w)) || expect.fail(`${e.message}\nlacks ${JSON.stringify(why)}`));
}

/** The fixture with one instance's attributes changed. */
function withAttrs(address: { type: string; name: string }, change: (a: Record<string, unknown>) => void): TfState {
    const state = loadState();
    const r = state.resources.find((x) => x.type === address.type && x.name === address.name && x.mode === "managed")!;
    change(r.instances[0].attributes);
    return state;
}

describe("migrate-from-terraform: a Terraform state's Endpoints IAM resources as `pulumi import --file` input", () => {
    const { file, leftOut } = migrateFromTerraform(loadState(), { source: "terraform.tfstate" });
    const rs = file.resources;

    it("one entry per instance of the six types, this package's tokens, the plugin's version", () => {
        const instances = iamInstances(loadState());
        expect(rs).to.have.length(instances.length).and.to.have.length(10);
        expect(new Set(rs.map((r) => r.type))).to.deep.equal(new Set(TERRAFORM_TYPES.map((t) => t.ours)));
        for (const r of rs) expect(r.version).to.equal("8.38.0");
        expect(file).not.to.have.property("nameTable");
    });

    it("names from the address: modules, count and for_each keys kept, valid and unique; the address beside each", () => {
        expect(rs.map((r) => [r.terraformAddress, r.name])).to.deep.equal([
            ["google_endpoints_service_iam_member.bob", "bob"],
            ["google_endpoints_service_iam_member.contractor", "contractor"],
            ["google_endpoints_service_iam_binding.viewers", "viewers"],
            ["google_endpoints_service_iam_binding.consumers[0]", "consumers-0"],
            ["google_endpoints_service_iam_binding.consumers[1]", "consumers-1"],
            ["google_endpoints_service_iam_policy.inventory", "inventory"],
            ["module.tenants[\"acme\"].google_endpoints_service_consumers_iam_member.users[\"jane@example.com\"]", "tenants-acme-users-jane_example_com"],
            ["module.tenants[\"acme\"].google_endpoints_service_consumers_iam_member.users[\"app\"]", "tenants-acme-users-app"],
            ["module.tenants[\"acme\"].google_endpoints_service_consumers_iam_binding.controllers", "tenants-acme-controllers"],
            ["module.tenants[\"acme\"].module.extra[0].google_endpoints_service_consumers_iam_policy.all", "tenants-acme-extra-0-all"],
        ]);
        for (const r of rs) expect(r.name).to.match(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/);
    });

    it("a name two addresses would share gets the type, then a number", () => {
        const state = loadState();
        const bob = state.resources.find((r) => r.name === "bob")!;
        // A Binding named bob too, and two for_each keys that read the same once made a name.
        state.resources.push({ ...bob, type: "google_endpoints_service_iam_binding", instances: [{ attributes: { ...bob.instances[0].attributes, members: ["user:bob@example.com"], role: "roles/viewer" } }] });
        state.resources.push({ ...bob, name: "k", instances: ["a@b", "a_b", "a_b-1"].map((index_key) => ({ index_key, attributes: bob.instances[0].attributes })) });
        const names = migrateFromTerraform(state).file.resources.map((r) => r.name);
        expect(names).to.include.members(["bob-member", "bob-binding", "k-a_b-2", "k-a_b-3", "k-a_b-1"]);
        expect(new Set(names).size).to.equal(names.length);
    });

    it("IDs from the attributes name what Terraform's `id` names: custom role, principal:// member, condition, both parents", () => {
        for (const { resource, t, attributes: a, address } of iamInstances(loadState())) {
            const r = byAddress(rs, address);
            expect(r, address).to.not.equal(undefined);
            const named = parseImportId(t.kind, t.shape, r.id);
            if (typeof named === "string") throw new Error(named);
            expect(`services/${named.parent.serviceName}${named.parent.consumerProject ? `/consumers/${named.parent.consumerProject}` : ""}`, address).to.equal(parentOf(resource.type, a));
            if (t.shape === "policy") continue;
            expect(named.role, address).to.equal(a.role);
            if (t.shape === "member") expect(named.member, address).to.equal(a.member);
            const [c] = a.condition as { title: string }[];
            expect(named.conditionTitle, address).to.equal(c?.title);
            // Terraform's own ID for the same grant starts the same way, and is not what the file holds.
            expect(String(a.id).startsWith(`${parentOf(resource.type, a)}/${String(a.role)}`), address).to.equal(true);
        }
        expect(byAddress(rs, "google_endpoints_service_iam_binding.viewers").id).to.equal(`services/${S} projects/example-project/roles/endpointsViewer`);
        expect(byAddress(rs, "google_endpoints_service_iam_member.contractor").id).to.equal(`services/${S} roles/servicemanagement.serviceController ` +
            "principal://iam.googleapis.com/locations/global/workforcePools/pool-1/subject/jane@example.com expires 2030");
        expect(byAddress(rs, "module.tenants[\"acme\"].google_endpoints_service_consumers_iam_binding.controllers").id)
            .to.equal(`services/${S}/consumers/consumer-project-1 roles/servicemanagement.serviceController`);
    });

    it("leaves out data sources, google_endpoints_service and other types, each with its reason", () => {
        expect(leftOut).to.deep.equal([
            { address: "google_endpoints_service.api", reason: "the Endpoints service itself, not its IAM policy: this package manages IAM only (keep it in Terraform, or move it with Pulumi GCP)" },
            { address: "data.google_endpoints_service_iam_policy.current", reason: "a data source: it reads, and manages nothing" },
            { address: "google_project_iam_member.ci", reason: "not one of the six Endpoints IAM types" },
            { address: "module.tenants[\"acme\"].data.google_endpoints_service_iam_policy.current", reason: "a data source: it reads, and manages nothing" },
        ]);
    });

    it("reads any registry host of hashicorp/google and google-beta, and leaves out another namespace's provider", () => {
        const state = loadState();
        const hosts = ["provider[\"registry.terraform.io/hashicorp/google-beta\"]", "provider[\"example.com/hashicorp/google\"]",
            "module.tenants.provider[\"registry.opentofu.org/hashicorp/google\"].eu", "provider.google"];
        for (const p of hosts) {
            state.resources[3].provider = p;
            expect(migrateFromTerraform(state).file.resources.map((r) => r.terraformAddress), p).to.include("google_endpoints_service_iam_member.bob");
        }
        state.resources[3].provider = "provider[\"registry.terraform.io/someone/google\"]";
        const m = migrateFromTerraform(state);
        expect(m.file.resources.map((r) => r.terraformAddress)).not.to.include("google_endpoints_service_iam_member.bob");
        expect(m.leftOut.find((l) => l.address === "google_endpoints_service_iam_member.bob")?.reason).to.contain("not hashicorp/google");
    });

    it("--provider: the explicit provider in the nameTable, each entry on it", () => {
        const urn = "urn:pulumi:dev::shop::pulumi:providers:cloud::prod";
        for (const [given, name] of [[`prod=${urn}`, "prod"], [urn, "prod"], [`p2=${urn}`, "p2"]]) {
            const m = migrateFromTerraform(loadState(), { provider: given });
            expect(m.file.nameTable).to.deep.equal({ [name]: urn });
            for (const r of m.file.resources) expect(r.provider).to.equal(name);
        }
        expect(() => migrateFromTerraform(loadState(), { provider: "urn:pulumi:dev::shop::pulumi:providers:gcp::prod" })).to.throw(MigrationError, "names no pulumi:providers:cloud resource");
    });

    describe("bad input: refused naming the file (and the address), nothing made", () => {
        it("not a Terraform state", () => {
            refused({ version: 3, deployment: { resources: [] } }, "terraform.tfstate is not a Terraform state");
            refused([], "is not a Terraform state");
            refused("x", "is not a Terraform state");
        });
        it("an older (or newer) format: the version found and the one read", () => {
            refused({ version: 3, terraform_version: "0.11.14", serial: 1, lineage: "x", modules: [] }, "format version 3", "reads version 4");
            refused({ ...loadState(), version: 5 }, "format version 5", "reads version 4");
        });
        it("no instance of the six types", () => {
            const state = loadState();
            state.resources = state.resources.filter((r) => r.mode === "data" || !r.type.includes("_iam_"));
            refused(state, "terraform.tfstate holds no instance of google_endpoints_service_iam_policy", "3 other instance(s)");
            refused({ ...loadState(), resources: [] }, "holds no instance");
        });
        it("incomplete attributes, naming the address and the attribute", () => {
            const bob = { type: "google_endpoints_service_iam_member", name: "bob" };
            const at = "terraform.tfstate: google_endpoints_service_iam_member.bob: `";
            refused(withAttrs(bob, (a) => delete a.role), `${at}role\` is missing`);
            refused(withAttrs(bob, (a) => (a.member = "jane")), `${at}member\` "jane" is not a member`);
            refused(withAttrs(bob, (a) => delete a.service_name), `${at}service_name\` is missing`);
            refused(withAttrs(bob, (a) => (a.condition = [{ title: "t", expression: "true" }, { title: "u", expression: "true" }])), `${at}condition\` is not a list of at most one block`);
            refused(withAttrs(bob, (a) => (a.condition = [{ title: "", expression: "true" }])), `${at}condition\` has no \`title\``);
            refused(withAttrs({ type: "google_endpoints_service_iam_binding", name: "viewers" }, (a) => delete a.members),
                "google_endpoints_service_iam_binding.viewers: `members` is missing");
            refused(withAttrs({ type: "google_endpoints_service_iam_policy", name: "inventory" }, (a) => (a.policy_data = "{")),
                "google_endpoints_service_iam_policy.inventory: `policy_data` is not a policy");
            const users = "module.tenants[\"acme\"].google_endpoints_service_consumers_iam_member.users[\"jane@example.com\"]: `consumer_project`";
            refused(withAttrs({ type: "google_endpoints_service_consumers_iam_member", name: "users" }, (a) => (a.consumer_project = "services/other.example.com/consumers/consumer-project-1")),
                users, "names service \"other.example.com\"");
            refused(withAttrs({ type: "google_endpoints_service_consumers_iam_member", name: "users" }, (a) => delete a.consumer_project), users, "is missing");
            const state = loadState();
            state.resources[3].instances[0].status = "tainted";
            refused(state, "google_endpoints_service_iam_member.bob is tainted");
            state.resources[3].instances[0] = { ...state.resources[3].instances[0], status: undefined, deposed: "00000001" };
            refused(state, "google_endpoints_service_iam_member.bob is a deposed instance");
        });
        it("the configured forms Terraform also holds are read: `{svc}` for a service, a bare consumer project", () => {
            const bare = withAttrs({ type: "google_endpoints_service_iam_member", name: "bob" }, (a) => (a.service_name = S));
            expect(byAddress(migrateFromTerraform(bare).file.resources, "google_endpoints_service_iam_member.bob").id).to.match(new RegExp(`^services/${S} `));
            const project = withAttrs({ type: "google_endpoints_service_consumers_iam_binding", name: "controllers" }, (a) => (a.consumer_project = "consumer-project-1"));
            expect(migrateFromTerraform(project).file.resources.find((r) => r.name === "tenants-acme-controllers")!.id).to.contain("/consumers/consumer-project-1 ");
        });
    });

    describe("the IDs through the real plugin, Google holding the grants as Terraform wrote them", function () {
        this.timeout(60_000);
        const stack = useStack("ya29.from-terraform-test-token", [S, "inventory.endpoints.example-project.cloud.goog"]);
        before(() => {
            for (const [parent, bindings] of appliedPolicies(loadState())) stack.emu.setPolicy(parent, { bindings });
        });
        it("each entry's ID imports the instance's grant: its role, members and condition as the state holds them", async () => {
            stack.emu.resetRequests();
            for (const { address, attributes: a, t } of iamInstances(loadState())) {
                const entry = byAddress(rs, address);
                const read = await stack.plugin.read(entry.type, entry.id);
                expect(read.id, entry.id).to.be.a("string").and.not.equal("");
                if (t.shape === "policy") {
                    const bindings = (text: unknown) => canonicalBindings((JSON.parse(String(text)) as { bindings: Binding[] }).bindings);
                    expect(bindings(read.inputs.policyData), entry.id).to.deep.equal(bindings(a.policy_data));
                    continue;
                }
                expect(read.inputs.role, entry.id).to.equal(a.role);
                if (t.shape === "member") expect(read.inputs.member).to.equal(a.member);
                else expect(read.inputs.members).to.deep.equal(a.members);
                const [c] = a.condition as { title: string; description: string; expression: string }[];
                expect(read.inputs.condition ?? null, entry.id).to.deep.equal(c ? { title: c.title, expression: c.expression, ...(c.description ? { description: c.description } : {}) } : null);
            }
            expect(stack.emu.requests.filter((q) => q.path.endsWith(":setIamPolicy"))).to.deep.equal([]);
        });
    });

    describe("the subcommand", function () {
        this.timeout(30_000);
        const run = (args: string[], stdin = "") => runSubcommand(["migrate-from-terraform", ...args], stdin);

        it("--in FILE --out FILE; `-` for stdin and stdout; what moved and what was left out on stderr", async () => {
            const out = path.join(tempDir("tf"), "import.json");
            const f = await run(["--in", TFSTATE, "--out", out]);
            expect(f.code, f.stderr).to.equal(0);
            expect(JSON.parse(fs.readFileSync(out, "utf8"))).to.deep.equal(file);
            expect(f.stdout).to.equal("");
            expect(f.stderr).to.contain(`wrote 10 resource(s) to ${out}`)
                .and.contain("google_endpoints_service_iam_member.bob").and.contain("→  tenants-acme-extra-0-all")
                .and.contain("left out 4:").and.contain("data.google_endpoints_service_iam_policy.current: a data source")
                .and.contain(`pulumi import --file ${out}`)
                .and.contain("terraform state rm google_endpoints_service_iam_member.bob").and.contain("'google_endpoints_service_iam_binding.consumers[0]'");
            const s = await run(["--in", "-", "--out", "-"], fs.readFileSync(TFSTATE, "utf8"));
            expect(s.code, s.stderr).to.equal(0);
            expect(JSON.parse(s.stdout)).to.deep.equal(file);
        });

        it("each bad input: exit 1, the file named, nothing written and an existing output left as it was", async () => {
            const dir = tempDir("tf");
            const out = path.join(dir, "import.json");
            fs.writeFileSync(out, "before\n");
            const write = (name: string, text: string) => {
                const p = path.join(dir, name);
                fs.writeFileSync(p, text);
                return p;
            };
            const cases: [string[], string, string][] = [
                [["--in", path.join(dir, "missing.tfstate")], "", "cannot read"],
                [["--in", dir], "", "it is a directory"],
                [["--in", write("notjson.tfstate", "<html>")], "", "notjson.tfstate is not a Terraform state: not JSON"],
                [["--in", write("export.json", JSON.stringify({ version: 3, deployment: {} }))], "", "export.json is not a Terraform state"],
                [["--in", write("old.tfstate", JSON.stringify({ version: 3, terraform_version: "0.11.14", lineage: "x", modules: [] }))], "", "format version 3; this command reads version 4"],
                [["--in", write("none.tfstate", JSON.stringify({ ...loadState(), resources: [] }))], "", "none.tfstate holds no instance"],
                [["--in", write("bad.tfstate", JSON.stringify(withAttrs({ type: "google_endpoints_service_iam_member", name: "bob" }, (a) => delete a.role)))], "", "bad.tfstate: google_endpoints_service_iam_member.bob: `role` is missing"],
                [["--in", "-"], "{}", "stdin is not a Terraform state"],
            ];
            for (const [args, stdin, why] of cases) {
                const r = await run([...args, "--out", out], stdin);
                expect(r.code, `${args.join(" ")}\n${r.stderr}`).to.equal(1);
                expect(r.stderr, args.join(" ")).to.contain(why).and.contain("nothing was written");
                expect(fs.readFileSync(out, "utf8")).to.equal("before\n");
                expect(fs.readdirSync(dir).filter((f) => f.includes(".tmp-"))).to.deep.equal([]);
            }
            const bad = await run(["--bogus"]);
            expect(bad.code).to.equal(2);
            expect(bad.stderr).to.contain("usage: pulumi-resource-cloud migrate-from-terraform");
            const help = await run(["--help"]);
            expect(help.code).to.equal(0);
            for (const t of TERRAFORM_TYPES) expect(help.stdout).to.contain(t.terraform).and.contain(t.ours);
        });
    });
});
