// Coming from Pulumi GCP (the guide docs/migrate-from-gcp.md, which the README links), with the real `pulumi` CLI and YAML host, the plugin
// installed from its tarball, against the emulator. Swapping the package naively loses grants (the engine creates
// the cloud twins, then Pulumi GCP deletes the old resources); the guide gives two ways that do not.
//
// Path 1, state rewrite: a stack whose state holds the six `gcp:endpoints/…` types as Pulumi GCP 8.38.0 writes
// them (tests/migrate/fixtures, imported with `pulumi stack import`: the engine takes Pulumi GCP's provider in the
// state without its plugin), the emulator holding those grants and others. The guide's commands run as written
// (stack export, `pulumi plugin run … migrate-from-gcp`, stack import), then the `pulumi config set` lines the
// command printed (the guide shows that text: it must be what the command prints), the program switched to the
// cloud twins with the same names and the properties the old program declared; then the guide's checks run as
// written: refresh and preview without changes, and an up that sends no setIamPolicy. A refresh after it shows no
// change, and destroy removes exactly the grants the resources declare (a Policy's parent is emptied, as its
// delete does; the other grants on the parents of Bindings and Members stay).
//
// Path 2, program only: the new resources declared with the `import` option, one per import ID form of each of
// the six types (Pulumi GCP's space-separated forms with and without `services/`, with a condition's title, and
// Terraform's slash IDs, including the IDs the fixture's Pulumi GCP state holds) and the guide's YAML, adopted by
// `pulumi up` with no setIamPolicy, then `pulumi preview --expect-no-changes`. Not tested: the guide's step that
// sets `retainOnDelete: true` on the old `gcp:endpoints/…` resources and removes them, which needs Pulumi GCP's
// plugin (not installable here).

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Binding, Emulator, Policy, startEmulator } from "../../emulator";
import { parseImportId } from "../../provider/resources/importId";
import { parsePolicyData, policyData } from "../../provider/iam/policy";
import { MIGRATED_TYPES } from "../../provider/migrate/fromGcp";
import { resources } from "../../provider/resources";
import { PulumiSandbox, ROOT, RunResult, SERVICE, skipUnless, toolsMissing } from "./support";

/** The guide, docs/migrate-from-gcp.md: the whole of it is the section the tests run. */
const SECTION = fs.readFileSync(path.join(ROOT, "docs", "migrate-from-gcp.md"), "utf8");
/** The guide's fenced blocks of one language, in order, their indentation removed. */
const blocks = (lang: string) => [...SECTION.matchAll(new RegExp("^( *)```" + lang + "\\n([\\s\\S]*?)^\\1```$", "gm"))]
    .map((m) => m[2].split("\n").map((l) => l.slice(m[1].length)).join("\n"));

const FIXTURE = path.join(ROOT, "tests", "migrate", "fixtures", "gcp-endpoints-export.json");
/** Where path 1 puts the fixture's two Policies, so that they do not own the parents of its Bindings and Members. */
const POLICY_SERVICE = "inventory.endpoints.example-project.cloud.goog";
const CONDITION = { title: "expires-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface StateResource {
    urn: string;
    type: string;
    id?: string;
    inputs?: Record<string, Json>;
    provider?: string;
    dependencies?: string[];
    [k: string]: Json | undefined;
}
const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);
const typeOf = (gcpToken: string) => MIGRATED_TYPES.find((t) => t.gcp === gcpToken);
const parentOf = (inputs: Record<string, Json>) => `services/${String(inputs.serviceName)}` +
    (inputs.consumerProject !== undefined ? `/consumers/${String(inputs.consumerProject)}` : "");

/** Bindings merged by role and condition, as Google keeps them. */
function merged(bindings: Binding[]): Binding[] {
    const out = new Map<string, Binding>();
    for (const b of bindings) {
        const key = JSON.stringify([b.role, b.condition ?? null]);
        const had = out.get(key);
        out.set(key, { ...b, members: [...new Set([...(had?.members ?? []), ...b.members])].sort() });
    }
    return [...out.values()];
}

/** A YAML resource whose properties are JSON values (YAML takes JSON), with resource options as JSON too. */
const yamlResource = (name: string, type: string, properties: Record<string, Json>, options: Record<string, Json> = {}) =>
    `  ${name}:\n    type: ${type}\n    properties:\n${Object.entries(properties).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`).join("")}` +
    (Object.keys(options).length ? `    options:\n${Object.entries(options).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`).join("")}` : "");

describe("e2e: coming from Pulumi GCP (the guide's two paths) with the real engine", function () {
    this.timeout(600_000);
    this.slow(60_000);

    const token = `e2e-migrate-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    const setIamPolicies = () => emu.requests.filter((q) => q.method === "POST" && q.path.endsWith(":setIamPolicy"));
    const bash = (script: string, dir: string): Promise<RunResult> => sb.script(script, dir);

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token], allowConditions: true });
        emu.createService(SERVICE, "example-project");
        emu.createService(POLICY_SERVICE, "example-project");
        sb = await PulumiSandbox.create("migrate");
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("the guide has path 1's two command blocks, the command's printed text and path 2's YAML", () => {
        expect(blocks("sh")).to.have.length(2);
        expect(blocks("text")).to.have.length(1);
        expect(blocks("yaml")).to.have.length(1);
    });

    it("path 1, state rewrite: migrate-from-gcp as the guide runs it; refresh, preview and up change nothing; destroy removes only the declared grants", async () => {
        const fixture = JSON.parse(fs.readFileSync(FIXTURE, "utf8")) as { deployment: { resources: StateResource[] } };
        const dir = sb.project("shop", { "Pulumi.yaml": "name: shop\nruntime: yaml\n" });
        // The old stack: Pulumi GCP configured through stack config; its program cannot run here (no Pulumi GCP plugin).
        await sb.pulumi(["stack", "init", "dev"], dir);
        await sb.pulumi(["config", "set", "gcp:project", "example-project"], dir);
        await sb.pulumi(["config", "set", "gcp:serviceManagementCustomEndpoint", emu.url], dir);
        await sb.pulumi(["config", "set", "--secret", "gcp:accessToken"], dir, token);

        // Its state as Pulumi GCP writes it: the fixture's Endpoints IAM resources and Pulumi GCP's default provider,
        // whose inputs hold the gcp: config (a secret as a secret), the Policies on a service of their own.
        const exported = JSON.parse((await sb.pulumi(["stack", "export"], dir)).stdout) as { deployment: { resources?: StateResource[] } };
        const state: StateResource[] = fixture.deployment.resources
            .filter((r) => r.type === "pulumi:pulumi:Stack" || r.type === "pulumi:providers:gcp" || typeOf(r.type))
            .map((r) => (typeOf(r.type)?.shape === "policy" ? JSON.parse(JSON.stringify(r).split(SERVICE).join(POLICY_SERVICE)) as StateResource : r));
        const gcpProvider = state.find((r) => r.type === "pulumi:providers:gcp")!;
        gcpProvider.inputs = { ...gcpProvider.inputs, serviceManagementCustomEndpoint: emu.url,
            accessToken: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: JSON.stringify(token) } };
        exported.deployment.resources = state;
        fs.writeFileSync(path.join(sb.dir, "gcp-state.json"), JSON.stringify(exported));
        await sb.pulumi(["stack", "import", "--file", path.join(sb.dir, "gcp-state.json")], dir);

        // Google holds what the old resources declared, and grants nobody in the stack declares.
        const old = state.filter((r) => typeOf(r.type));
        const declared = new Map<string, Binding[]>();
        for (const r of old) {
            const inputs = r.inputs!;
            const shape = typeOf(r.type)!.shape;
            const parsed = shape === "policy" ? parsePolicyData(String(inputs.policyData)) : undefined;
            const condition = inputs.condition as unknown as Binding["condition"] | undefined;
            const bindings: Binding[] = parsed !== undefined ? ("policy" in parsed ? parsed.policy.bindings ?? [] : [])
                : [{ role: String(inputs.role), members: shape === "member" ? [String(inputs.member)] : (inputs.members as string[]), ...(condition ? { condition } : {}) }];
            declared.set(parentOf(inputs), [...(declared.get(parentOf(inputs)) ?? []), ...bindings]);
        }
        const others: Record<string, Binding> = {
            [`services/${SERVICE}`]: { role: "roles/viewer", members: ["user:other@example.com"] },
            [`services/${SERVICE}/consumers/consumer-project-1`]: { role: "roles/servicemanagement.serviceController",
                members: ["serviceAccount:other@consumer-project-1.iam.gserviceaccount.com"] },
        };
        expect([...declared.keys()].sort()).to.deep.equal([...Object.keys(others), `services/${POLICY_SERVICE}`, `services/${POLICY_SERVICE}/consumers/consumer-project-1`].sort());
        for (const [parent, bindings] of declared) emu.setPolicy(parent, { bindings: merged([...bindings, ...(others[parent] ? [others[parent]] : [])]) });

        // The guide's commands, as written.
        const [migrate, check] = blocks("sh");
        const printed = (await bash(migrate, dir)).stderr;
        const [text] = blocks("text");
        const said = printed.split("\n");
        const from = said.findIndex((l) => l.startsWith("pulumi-resource-cloud migrate-from-gcp: migrated"));
        expect(said.slice(from, from + text.trimEnd().split("\n").length).join("\n"), "the guide shows what the command prints").to.equal(text.trimEnd());
        for (const line of text.split("\n").filter((l) => /^\s+pulumi config set /.test(l))) await bash(line.trim(), dir);
        expect((await sb.pulumi(["config", "get", "cloud:accessToken"], dir)).stdout.trim()).to.equal(token);

        // The program: the old one's resources, same names and properties, their type in the cloud package.
        const program = `name: shop\nruntime: yaml\nresources:\n${old.map((r) => {
            const { __defaults: _defaults, ...properties } = r.inputs!;
            const dependsOn = (r.dependencies ?? []).map((d) => `\${${nameOf(d)}}`);
            return yamlResource(nameOf(r.urn), typeOf(r.type)!.ours, properties, dependsOn.length ? { dependsOn } : {});
        }).join("")}`;
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), program);

        emu.resetRequests();
        const checked = await bash(check, dir);
        expect(setIamPolicies(), `no write\n${checked.stdout}`).to.deep.equal([]);
        expect(emu.requests.filter((q) => q.path.endsWith(":getIamPolicy")).length, "refresh read the policies").to.be.greaterThan(0);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], dir);
        expect(setIamPolicies()).to.deep.equal([]);
        const after = JSON.parse((await sb.pulumi(["stack", "export"], dir)).stdout) as { deployment: { resources: StateResource[] } };
        expect(after.deployment.resources.filter((r) => r.type.startsWith("cloud:endpoints/")).map((r) => nameOf(r.urn)).sort())
            .to.deep.equal(old.map((r) => nameOf(r.urn)).sort());
        expect(after.deployment.resources.filter((r) => r.type.startsWith("gcp:")), "nothing of Pulumi GCP's Endpoints resources left").to.deep.equal([]);
        // Pulumi GCP's default provider, used by nothing now, was dropped by the engine without Pulumi GCP's plugin.
        expect(after.deployment.resources.map((r) => r.type)).not.to.include("pulumi:providers:gcp");

        await sb.pulumi(["destroy", "--yes"], dir);
        for (const parent of declared.keys()) {
            expect(emu.getPolicy(parent).bindings ?? [], parent).to.deep.equal(others[parent] ? [others[parent]] : []);
        }
    });

    it("path 2, program only: the `import` option with every ID form of the six types and the state's IDs; up adopts them writing nothing, then no change", async () => {
        // Both parents hold what every form names: the docs' example grant, with and without a condition, and the
        // fixture's grants.
        const policy: Policy = { bindings: merged([
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:jane@example.com", "group:a@example.com", "user:b@example.com"] },
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:jane@example.com"], condition: CONDITION },
            { role: "roles/viewer", members: ["user:jane@example.com"] },
        ]) };
        for (const parent of [`services/${SERVICE}`, `services/${SERVICE}/consumers/consumer-project-1`]) emu.setPolicy(parent, policy);
        const fixture = JSON.parse(fs.readFileSync(FIXTURE, "utf8")) as { deployment: { resources: StateResource[] } };
        const stateIds = fixture.deployment.resources.filter((r) => typeOf(r.type)).map((r) => ({ token: typeOf(r.type)!.ours, id: r.id! }));
        const docIds = resources.flatMap((r) => r.importDoc.ids.map((id) => ({ token: r.token, id })));
        expect(stateIds).to.have.length(6);

        // Each ID's resource declares what Google holds for it, as a user would write it.
        const entries = [...docIds, ...stateIds].map(({ token, id }, i) => {
            const t = MIGRATED_TYPES.find((x) => x.ours === token)!;
            const named = parseImportId(t.kind, t.shape, id);
            if (typeof named === "string") throw new Error(named);
            const condition = named.conditionTitle === undefined ? undefined
                : policy.bindings!.find((b) => b.condition?.title === named.conditionTitle)!.condition!;
            const properties: Record<string, Json> = { ...named.parent };
            if (t.shape === "policy") properties.policyData = policyData(policy);
            else {
                properties.role = named.role!;
                if (t.shape === "member") properties.member = named.member!;
                else properties.members = policy.bindings!.find((b) => b.role === named.role && b.condition?.title === named.conditionTitle)!.members;
                if (condition) properties.condition = { title: condition.title, expression: condition.expression };
            }
            return yamlResource(`adopted${i}`, token, properties, { import: id });
        });
        const [fragment] = blocks("yaml");
        expect(fragment).to.match(/^resources:\n/).and.contain("import: ");
        const dir = sb.project("adopt", { "Pulumi.yaml": `name: adopt\nruntime: yaml\n${fragment}${entries.join("")}` });
        await sb.initStack(dir, emu.url, token);

        emu.resetRequests();
        const up = await sb.pulumi(["up", "--yes"], dir);
        expect(up.stdout).to.match(new RegExp(`${entries.length + 1} imported`));
        expect(setIamPolicies(), up.stdout).to.deep.equal([]);
        await sb.pulumi(["preview", "--expect-no-changes"], dir);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], dir);
        expect(setIamPolicies()).to.deep.equal([]);
    });
});
