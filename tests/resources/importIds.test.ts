// Import IDs: every form Pulumi GCP documents (space-separated, the parent with or without `services/`) and every
// ID Pulumi GCP writes to its state (Terraform's, slash-joined, a condition appended as `/title/description/
// expression`), for the six resource types: the parser (unit), then each form imported through the real plugin
// (Read with an empty state and the ID, against the emulator). Every refusal names every accepted form.

import { expect } from "chai";
import { GrantShape, importForms, importReadings, parseImportId } from "../../provider/resources/importId";
import { ParentKind } from "../../provider/iam/names";
import { token } from "../../provider/package/tokens";
import { useStack } from "../support/plugin";

const tokens = (prefix: string): Record<GrantShape, string> => ({
    policy: token("endpoints", `${prefix}IamPolicy`),
    binding: token("endpoints", `${prefix}IamBinding`),
    member: token("endpoints", `${prefix}IamMember`),
});
const SERVICE_IAM = tokens("Service");
const CONSUMERS_IAM = tokens("Consumers");

const S = "bookstore.endpoints.example-project.cloud.goog";
const P = "consumer-project-1";
const CONDITION = { title: "expires 2030", description: "a/b", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
const KEY = `${CONDITION.title}/${CONDITION.description}/${CONDITION.expression}`;
const PRINCIPAL = "principal://iam.googleapis.com/locations/global/workforcePools/pool-1/subject/jane@example.com";

describe("import IDs: the parser", () => {
    const ok = (kind: ParentKind, shape: GrantShape, id: string) => {
        const r = parseImportId(kind, shape, id);
        if (typeof r === "string") throw new Error(r);
        return r;
    };
    const service = { serviceName: S };
    const consumer = { serviceName: S, consumerProject: P };

    it("Policies: the parent, in either documented form, which is also Terraform's ID", () => {
        for (const id of [`services/${S}`, S, ` services/${S} `]) expect(ok("service", "policy", id), id).to.deep.equal({ parent: service });
        for (const id of [`services/${S}/consumers/${P}`, `${S}/${P}`]) expect(ok("consumer", "policy", id), id).to.deep.equal({ parent: consumer });
    });

    it("Bindings: `<parent> <role> [<title>]` and Terraform's `services/S[/consumers/P]/ROLE[/title/description/expression]`", () => {
        for (const p of [`services/${S}`, S]) {
            expect(ok("service", "binding", `${p} roles/viewer`)).to.deep.equal({ parent: service, role: "roles/viewer" });
            expect(ok("service", "binding", `${p} roles/viewer ${CONDITION.title}`)).to.deep.equal({ parent: service, role: "roles/viewer", conditionTitle: CONDITION.title });
        }
        expect(ok("service", "binding", `services/${S}/roles/viewer`)).to.deep.equal({ parent: service, role: "roles/viewer" });
        expect(ok("service", "binding", `services/${S}/projects/my-project/roles/custom.role`)).to.deep.equal({ parent: service, role: "projects/my-project/roles/custom.role" });
        expect(ok("service", "binding", `services/${S}/roles/viewer/${KEY}`)).to.deep.equal({ parent: service, role: "roles/viewer", conditionTitle: CONDITION.title });
        expect(ok("consumer", "binding", `services/${S}/consumers/${P}/organizations/123/roles/r/${KEY}`))
            .to.deep.equal({ parent: consumer, role: "organizations/123/roles/r", conditionTitle: CONDITION.title });
        expect(ok("consumer", "binding", `${S}/${P} roles/viewer`)).to.deep.equal({ parent: consumer, role: "roles/viewer" });
    });

    it("Members: `<parent> <role> <member> [<title>]` and Terraform's `…/ROLE/MEMBER[/title/description/expression]`, members with slashes included", () => {
        const m = "user:d@example.com";
        expect(ok("service", "member", `services/${S} roles/viewer ${m}`)).to.deep.equal({ parent: service, role: "roles/viewer", member: m });
        expect(ok("service", "member", `${S} roles/viewer ${m} ${CONDITION.title}`)).to.deep.equal({ parent: service, role: "roles/viewer", member: m, conditionTitle: CONDITION.title });
        expect(ok("service", "member", `services/${S}/roles/viewer/${m}`)).to.deep.equal({ parent: service, role: "roles/viewer", member: m });
        expect(ok("service", "member", `services/${S}/roles/viewer/${m}/${KEY}`)).to.deep.equal({ parent: service, role: "roles/viewer", member: m, conditionTitle: CONDITION.title });
        // A condition whose title has no space and whose description is empty.
        expect(ok("service", "member", `services/${S}/roles/viewer/${m}/t//true`)).to.deep.equal({ parent: service, role: "roles/viewer", member: m, conditionTitle: "t" });
        expect(ok("consumer", "member", `services/${S}/consumers/${P}/roles/viewer/${PRINCIPAL}`)).to.deep.equal({ parent: consumer, role: "roles/viewer", member: PRINCIPAL });
        expect(ok("consumer", "member", `services/${S}/consumers/${P}/roles/viewer/${PRINCIPAL}/${KEY}`))
            .to.deep.equal({ parent: consumer, role: "roles/viewer", member: PRINCIPAL, conditionTitle: CONDITION.title });
        const wi = "serviceAccount:my-project.svc.id.goog[ns/ksa]";
        expect(ok("service", "member", `services/${S}/roles/viewer/${wi}/${KEY}`)).to.deep.equal({ parent: service, role: "roles/viewer", member: wi, conditionTitle: CONDITION.title });
    });

    it("refuses what names no resource of the type, saying what is wrong and naming every accepted form", () => {
        const cases: [ParentKind, GrantShape, string, string][] = [
            ["service", "member", `services/${S}/roles/viewer`, "names no member after the role"],
            ["service", "member", `services/${S} roles/viewer`, "names no member after the role"],
            ["service", "binding", `services/${S}/consumers/${P}/roles/viewer`, "names a consumer project"],
            ["consumer", "binding", `services/${S}/roles/viewer`, "names no consumer project"],
            ["consumer", "member", P, "names no service"],
            ["service", "policy", `services/${S}/roles/viewer`, "holds more than the parent"],
            ["service", "binding", `services/${S} viewer`, "names no valid role"],
            ["service", "binding", `services/${S}/roles/viewer/only-a-title`, "no condition key"],
            ["service", "member", `services/${S} roles/viewer jane`, "names no valid member"],
            ["service", "binding", "services/Not_A_Service/roles/viewer", "names no valid service"],
            ["service", "policy", "", "is empty"],
        ];
        for (const [kind, shape, id, why] of cases) {
            const r = parseImportId(kind, shape, id);
            expect(r, id).to.be.a("string").and.contain(why);
            for (const form of importForms(kind, shape)) expect(r, id).to.contain(`\`${form}\``);
        }
    });

    it("lists, per shape, both documented parents and (for grants) Terraform's form with the condition key", () => {
        expect(importForms("service", "member")).to.deep.equal([
            "services/{serviceName} {role} {member} [{condition title}]",
            "{serviceName} {role} {member} [{condition title}]",
            "services/{serviceName}/{role}/{member}[/{condition title}/{condition description}/{condition expression}]",
        ]);
        expect(importForms("consumer", "policy")).to.deep.equal(["services/{serviceName}/consumers/{consumerProject}", "{serviceName}/{consumerProject}"]);
    });
});

describe("import IDs through the plugin: every form, each of the six types", function () {
    this.timeout(60_000);
    const stack = useStack("ya29.import-ids-test-token", [S]);
    const member = "user:jane@example.com";
    const role = "roles/servicemanagement.serviceConsumer";

    before(() => {
        const bindings = [
            { role, members: [member, PRINCIPAL] },
            { role, members: [member, PRINCIPAL], condition: CONDITION },
        ];
        stack.emu.setPolicy(`services/${S}`, { bindings });
        stack.emu.setPolicy(`services/${S}/consumers/${P}`, { bindings });
    });

    for (const [kind, tokens] of [["service", SERVICE_IAM], ["consumer", CONSUMERS_IAM]] as const) {
        const parents = kind === "service" ? [`services/${S}`, S] : [`services/${S}/consumers/${P}`, `${S}/${P}`];
        const terraform = parents[0];
        const ids: Record<GrantShape, string[]> = {
            policy: parents,
            binding: [...parents.flatMap((p) => [`${p} ${role}`, `${p} ${role} ${CONDITION.title}`]), `${terraform}/${role}`, `${terraform}/${role}/${KEY}`],
            member: [...parents.flatMap((p) => [`${p} ${role} ${member}`, `${p} ${role} ${PRINCIPAL} ${CONDITION.title}`]),
                `${terraform}/${role}/${member}`, `${terraform}/${role}/${PRINCIPAL}`, `${terraform}/${role}/${member}/${KEY}`, `${terraform}/${role}/${PRINCIPAL}/${KEY}`],
        };
        for (const shape of ["policy", "binding", "member"] as const) {
            it(`${tokens[shape]}: ${ids[shape].length} IDs import it, the condition when the ID names one`, async () => {
                for (const id of ids[shape]) {
                    const r = await stack.plugin.read(tokens[shape], id);
                    expect(r.inputs.serviceName, id).to.equal(S);
                    if (kind === "consumer") expect(r.inputs.consumerProject, id).to.equal(P);
                    if (shape !== "policy") expect(r.inputs.role, id).to.equal(role);
                    if (shape === "member") expect(r.inputs.member, id).to.be.oneOf([member, PRINCIPAL]);
                    const conditional = shape !== "policy" && (id.includes(KEY) || id.endsWith(CONDITION.title));
                    expect(r.inputs.condition, id).to.deep.equal(conditional ? CONDITION : undefined);
                    expect(r.id, id).to.be.a("string").and.not.equal("");
                }
            });
        }
        it(`${tokens.member}: a Binding's ID (no member) is refused, naming every form`, async () => {
            const e = await stack.plugin.read(tokens.member, `${terraform}/${role}`).then(() => undefined, (err: { details?: string }) => err.details ?? String(err));
            expect(e).to.be.a("string").and.contain("names no member after the role").and.contain(`${kind === "service" ? "services/{serviceName}" : "services/{serviceName}/consumers/{consumerProject}"}/{role}/{member}`);
        });
    }
});

describe("import IDs: Terraform's slash-joined IDs that read several ways, told apart by the policy", function () {
    this.timeout(60_000);
    const stack = useStack("ya29.import-readings-test-token", [S]);
    const role = "roles/servicemanagement.serviceController";
    const CUSTOM = "projects/example-project/roles/endpointsViewer";
    // A key with no space, quote or parenthesis after a principal:// member reads as part of the member too.
    const plain = { title: "t", expression: "true" };
    // A title holding a slash: Terraform's key `a/b/DESCRIPTION/EXPRESSION` reads as the titles `a`, `a/b`, ….
    const slashed = { title: "team/eu", description: "x/y", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
    const key = (c: { title: string; description?: string; expression: string }) => `${c.title}/${c.description ?? ""}/${c.expression}`;
    before(() => {
        stack.emu.setPolicy(`services/${S}`, { bindings: [
            { role, members: [PRINCIPAL], condition: plain },
            { role, members: ["user:jane@example.com"], condition: slashed },
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:jane@example.com"], condition: slashed },
            { role: CUSTOM, members: ["user:jane@example.com"], condition: { title: "a", expression: "true" } },
            { role: CUSTOM, members: ["user:jane@example.com"], condition: { title: "a/b", expression: "true" } },
        ] });
    });

    it("the parser gives every reading, the likeliest first", () => {
        const readings = importReadings("service", "member", `services/${S}/${role}/${PRINCIPAL}/${key(plain)}`);
        expect(readings).to.be.an("array").with.length.above(2);
        expect((readings as unknown[]).slice(0, 2)).to.deep.equal([
            { parent: { serviceName: S }, role, member: `${PRINCIPAL}/${key(plain)}` },
            { parent: { serviceName: S }, role, member: PRINCIPAL, conditionTitle: "t" },
        ]);
        expect(importReadings("service", "binding", `services/${S}/${role}/${key(slashed)}`)).to.be.an("array")
            .that.deep.includes({ parent: { serviceName: S }, role, conditionTitle: "team/eu" });
        const many = `services/${S}/${role}/t/d/${"a/".repeat(300)}b`;
        expect(importReadings("service", "binding", many)).to.be.a("string").and.contain("reads 301 ways").and.contain("space-separated form");
    });

    it("a principal:// member under a condition whose key holds no space imports with its condition", async () => {
        const r = await stack.plugin.read(SERVICE_IAM.member, `services/${S}/${role}/${PRINCIPAL}/${key(plain)}`);
        expect(r.inputs.member).to.equal(PRINCIPAL);
        expect(r.inputs.condition).to.deep.equal(plain);
    });

    it("a condition whose title holds a slash imports, a Member's and a Binding's", async () => {
        const m = await stack.plugin.read(SERVICE_IAM.member, `services/${S}/${role}/user:jane@example.com/${key(slashed)}`);
        expect(m.inputs.condition).to.deep.equal(slashed);
        const b = await stack.plugin.read(SERVICE_IAM.binding, `services/${S}/roles/servicemanagement.serviceConsumer/${key(slashed)}`);
        expect(b.inputs.condition).to.deep.equal(slashed);
        expect(b.inputs.members).to.deep.equal(["user:jane@example.com"]);
    });

    it("an ID two of whose readings Google both holds is refused, naming both and the form that reads one way", async () => {
        const e = await stack.plugin.read(SERVICE_IAM.member, `services/${S}/${CUSTOM}/user:jane@example.com/a/b//true`)
            .then(() => undefined, (err: { details?: string }) => err.details ?? String(err));
        expect(e).to.be.a("string").and.contain("reads 2 ways, each a grant Google holds").and.contain("space-separated form");
    });
});
