// The six policy resources through their whole lifecycle over the provider protocol, against the
// emulator: check, diff, create, read, update, import, delete; conditions round-tripped unchanged.

import { expect } from "chai";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { policyData } from "../../provider/iam/policy";
import { PropertyMap, UNKNOWN_VALUE } from "../../provider/declare/properties";
import * as grpc from "@grpc/grpc-js";
import { CONSUMERS_FN, listGrants, rpcError, SERVICE_FN, useStack } from "../support/plugin";

const TOKEN = "ya29.resources-test-token";
const SERVICE = "res.endpoints.my-project.cloud.goog";
const CONSUMER = "consumer-proj-9";
const NONE = pb.DiffResponse.DiffChanges.DIFF_NONE;
const SOME = pb.DiffResponse.DiffChanges.DIFF_SOME;

const cond = { expression: "request.time < timestamp(\"2031-01-01T00:00:00Z\")", title: "until-2031", description: "temporary" };

type Kind = "service" | "consumer";
const parents: { kind: Kind; prefix: string; type: string; inputs: PropertyMap; name: string; id: string; short: string }[] = [
    { kind: "service", prefix: "service", type: "Service", inputs: { serviceName: SERVICE }, name: `services/${SERVICE}`, id: `services/${SERVICE}`, short: SERVICE },
    { kind: "consumer", prefix: "consumers", type: "Consumers", inputs: { serviceName: SERVICE, consumerProject: CONSUMER },
        name: `services/${SERVICE}/consumers/${CONSUMER}`, id: `services/${SERVICE}/consumers/${CONSUMER}`, short: `${SERVICE}/${CONSUMER}` },
];

describe("policy resources", function () {
    const stack = useStack(TOKEN, [SERVICE]);
    // These resources write conditional bindings, which the emulator refuses by default as Google does.
    before(() => stack.emu.setBehavior({ allowConditions: true }));

    // Each test waits for what it caused: a lookup of a parent waits until the plugin has read back (confirmed)
    // the last write to it, so no request of this test reaches the next one's log.
    afterEach(async () => {
        await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE }).catch(() => undefined);
        await stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: CONSUMER }).catch(() => undefined);
    });

    const other = { role: "roles/viewer", members: ["user:bystander@example.com"] };
    const grants = listGrants;

    for (const parent of parents) {
        describe(`${parent.type}IamPolicy`, () => {
            const type = `cloud:endpoints/${parent.prefix}IamPolicy:${parent.type}IamPolicy`;
            const data = JSON.stringify({ bindings: [
                { role: "roles/servicemanagement.serviceConsumer", members: ["user:b@example.com", "user:a@example.com"] },
                { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:sa@p.iam.gserviceaccount.com"], condition: cond },
            ] });

            it("checks policyData before anything is sent", async () => {
                stack.emu.resetRequests();
                for (const [bad, rule] of [["not json", /not JSON/], ['{"bindings":[{"role":"viewer","members":["user:a@example.com"]}]}', /not a valid role/],
                    ['{"bindings":[{"role":"roles/viewer","members":["deleted:user:x@example.com?uid=1"]}]}', /deleted principal/],
                    ['{"bindings":[{"role":"roles/viewer","members":["user:a@example.com"],"condition":{"expression":"true"}}]}', /`bindings\[0\]\.condition\.title` is required/],
                    ['{"bindingz":[]}', /`bindingz` is not a known property/], ["[]", /JSON object/]] as const) {
                    const res = await stack.plugin.check(type, { ...parent.inputs, policyData: bad });
                    expect(res.failures.map((f) => f.property), bad).to.deep.equal(["policyData"]);
                    expect(res.failures[0].reason).to.match(rule);
                }
                const missing = await stack.plugin.check(type, { policyData: "{}" });
                expect(missing.failures.map((f) => f.property)).to.include("serviceName");
                expect(stack.emu.requests).to.deep.equal([]);
            });

            it("creates, reads, shows no diff for order-only changes, updates, imports and deletes", async () => {
                stack.emu.setPolicy(parent.name, { bindings: [other] });
                const inputs = { ...parent.inputs, policyData: data };
                expect((await stack.plugin.check(type, inputs)).failures).to.deep.equal([]);
                const created = await stack.plugin.create(type, inputs);
                expect(created.id).to.equal(parent.id);
                expect(created.properties.etag).to.equal(stack.emu.getPolicy(parent.name).etag);
                // Authoritative: the bystander binding is gone, the conditional binding is stored as given.
                expect(policyData(stack.emu.getPolicy(parent.name))).to.equal(policyData(JSON.parse(data)));

                const read = await stack.plugin.read(type, created.id, created.properties, inputs);
                expect(read.id).to.equal(parent.id);
                expect(read.inputs.policyData).to.equal(policyData(JSON.parse(data)));
                const reordered = JSON.stringify({ bindings: [...JSON.parse(data).bindings].reverse().map((b: { members: string[] }) => ({ ...b, members: [...b.members].reverse() })) });
                expect((await stack.plugin.diff(type, read.id, read.properties, { ...parent.inputs, policyData: reordered })).changes).to.equal(NONE);
                expect((await stack.plugin.diff(type, read.id, { ...read.properties, etag: "stale" }, inputs)).changes).to.equal(NONE);

                const next = JSON.stringify({ bindings: [{ role: "roles/servicemanagement.serviceConsumer", members: ["user:c@example.com"] }] });
                const d = await stack.plugin.diff(type, read.id, read.properties, { ...parent.inputs, policyData: next });
                expect(d).to.deep.include({ changes: SOME, diffs: ["policyData"], replaces: [] });
                const updated = await stack.plugin.update(type, read.id, read.properties, { ...parent.inputs, policyData: next });
                expect(grants(stack.emu.getPolicy(parent.name))).to.deep.equal(["roles/servicemanagement.serviceConsumer user:c@example.com"]);
                expect(updated.etag).to.equal(stack.emu.getPolicy(parent.name).etag);

                for (const id of [parent.id, parent.short]) {
                    const imported = await stack.plugin.read(type, id);
                    expect(imported.id).to.equal(parent.id);
                    expect(imported.inputs).to.deep.equal({ ...parent.inputs, policyData: policyData(JSON.parse(next)) });
                }

                // The program no longer has it: a later deployment, which did not declare it.
                await stack.nextDeployment();
                await stack.plugin.delete(type, parent.id, updated);
                expect(policyData(stack.emu.getPolicy(parent.name))).to.equal("{}");
            });

            it("replaces when the parent changes, but not for a services/ prefix", async () => {
                const olds = { ...parent.inputs, policyData: "{}" };
                const prefixed = await stack.plugin.diff(type, parent.id, olds, { ...olds, serviceName: `services/${SERVICE}` });
                expect(prefixed.changes).to.equal(NONE);
                const moved = await stack.plugin.diff(type, parent.id, olds, { ...olds, serviceName: "elsewhere.endpoints.p.cloud.goog" });
                expect(moved.replaces).to.deep.equal(["serviceName"]);
            });
        });

        describe(`${parent.type}IamBinding`, () => {
            const type = `cloud:endpoints/${parent.prefix}IamBinding:${parent.type}IamBinding`;
            const role = "roles/servicemanagement.serviceConsumer";

            it("manages one role (+condition) and leaves the rest alone, through the lifecycle", async () => {
                stack.emu.setPolicy(parent.name, { bindings: [other, { role, members: ["user:old@example.com"] }] });
                const inputs = { ...parent.inputs, role, members: ["user:b@example.com", "user:a@example.com"], condition: cond };
                expect((await stack.plugin.check(type, inputs)).failures).to.deep.equal([]);
                const created = await stack.plugin.create(type, inputs);
                expect(created.id).to.equal(`${parent.id} ${role} ${cond.title}`);
                expect(grants(stack.emu.getPolicy(parent.name))).to.deep.equal([
                    `${role} user:old@example.com`, `${role}[until-2031] user:a@example.com`, `${role}[until-2031] user:b@example.com`,
                    "roles/viewer user:bystander@example.com"]);
                const stored = stack.emu.getPolicy(parent.name).bindings!.find((b) => b.condition)!;
                expect(stored.condition).to.deep.equal(cond);

                const read = await stack.plugin.read(type, created.id, created.properties, inputs);
                expect(read.inputs).to.deep.equal({ ...parent.inputs, role, members: ["user:a@example.com", "user:b@example.com"], condition: cond });
                expect((await stack.plugin.diff(type, read.id, read.properties, { ...inputs, members: ["user:a@example.com", "user:b@example.com", "user:a@example.com"] })).changes).to.equal(NONE);

                const d = await stack.plugin.diff(type, read.id, read.properties, { ...inputs, members: ["user:c@example.com"] });
                expect(d).to.deep.include({ changes: SOME, diffs: ["members"], replaces: [] });
                const updated = await stack.plugin.update(type, read.id, read.properties, { ...inputs, members: ["user:c@example.com"] });
                expect(grants(stack.emu.getPolicy(parent.name))).to.include(`${role}[until-2031] user:c@example.com`).and.not.include(`${role}[until-2031] user:a@example.com`);

                const replace = await stack.plugin.diff(type, read.id, read.properties, { ...inputs, role: "roles/editor" });
                expect(replace).to.deep.include({ replaces: ["role"], deleteBeforeReplace: false });

                const imported = await stack.plugin.read(type, `${parent.short} ${role} ${cond.title}`);
                expect(imported.inputs).to.deep.equal({ ...parent.inputs, role, members: ["user:c@example.com"], condition: cond });
                expect(imported.id).to.equal(created.id);

                await stack.plugin.delete(type, created.id, updated);
                expect(grants(stack.emu.getPolicy(parent.name))).to.deep.equal([`${role} user:old@example.com`, "roles/viewer user:bystander@example.com"]);
                const gone = await stack.plugin.read(type, created.id, updated, inputs);
                expect(gone.id, "a deleted binding reads as gone").to.equal("");
            });

            it("refuses bad roles, members and conditions, sending nothing", async () => {
                stack.emu.resetRequests();
                const base = { ...parent.inputs, role, members: ["user:a@example.com"] };
                const cases: [PropertyMap, string, RegExp][] = [
                    [{ ...base, role: "viewer" }, "role", /not a valid role/],
                    [{ ...base, role: "roles/viewer_withcond_0123456789abcdef" }, "role", /policy version 3/],
                    [{ ...base, members: [] }, "members", /at least one member/],
                    [{ ...base, members: ["deleted:user:a@example.com?uid=123"] }, "members", /deleted principal/],
                    [{ ...base, members: ["a@example.com"] }, "members", /not a valid member: an email address needs its kind in front, e\.g\. "user:a@example\.com"/],
                    [{ ...base, condition: { expression: "true" } }, "condition.title", /required/],
                    [{ ...base, condition: { title: "t", expression: " " } }, "condition.expression", /give a CEL expression; it is empty/],
                ];
                for (const [inputs, property, rule] of cases) {
                    const res = await stack.plugin.check(type, inputs);
                    expect(res.failures.map((f) => f.property), JSON.stringify(inputs)).to.include(property);
                    expect(res.failures.find((f) => f.property === property)!.reason).to.match(rule);
                }
                expect(stack.emu.requests).to.deep.equal([]);
            });
        });

        describe(`${parent.type}IamMember`, () => {
            const type = `cloud:endpoints/${parent.prefix}IamMember:${parent.type}IamMember`;
            const role = "roles/servicemanagement.serviceController";

            it("adds and removes one member only, through the lifecycle", async () => {
                stack.emu.setPolicy(parent.name, { bindings: [other, { role, members: ["user:keep@example.com"] }] });
                const inputs = { ...parent.inputs, role, member: "serviceAccount:esp@p.iam.gserviceaccount.com" };
                const created = await stack.plugin.create(type, inputs);
                expect(created.id).to.equal(`${parent.id} ${role} serviceAccount:esp@p.iam.gserviceaccount.com`);
                expect(grants(stack.emu.getPolicy(parent.name))).to.deep.equal([
                    `${role} serviceAccount:esp@p.iam.gserviceaccount.com`, `${role} user:keep@example.com`, "roles/viewer user:bystander@example.com"]);
                const read = await stack.plugin.read(type, created.id, created.properties, inputs);
                expect(read.inputs).to.deep.equal(inputs);
                expect((await stack.plugin.diff(type, read.id, read.properties, inputs)).changes).to.equal(NONE);
                const replace = await stack.plugin.diff(type, read.id, read.properties, { ...inputs, member: "user:new@example.com" });
                expect(replace).to.deep.include({ replaces: ["member"], deleteBeforeReplace: false });

                const imported = await stack.plugin.read(type, `${parent.short} ${role} serviceAccount:esp@p.iam.gserviceaccount.com`);
                expect(imported.inputs).to.deep.equal(inputs);

                await stack.plugin.delete(type, created.id, created.properties);
                expect(grants(stack.emu.getPolicy(parent.name))).to.deep.equal([`${role} user:keep@example.com`, "roles/viewer user:bystander@example.com"]);
            });

            it("keeps a conditional member's condition, and imports it by title", async () => {
                stack.emu.setPolicy(parent.name, {});
                const inputs = { ...parent.inputs, role, member: "user:temp@example.com", condition: cond };
                const created = await stack.plugin.create(type, inputs);
                expect(stack.emu.getPolicy(parent.name).bindings).to.deep.equal([{ role, members: ["user:temp@example.com"], condition: cond }]);
                const imported = await stack.plugin.read(type, `${parent.id} ${role} user:temp@example.com ${cond.title}`);
                expect(imported.inputs).to.deep.equal(inputs);
                await stack.plugin.delete(type, created.id, created.properties);
                expect(stack.emu.getPolicy(parent.name).bindings ?? []).to.deep.equal([]);
            });
        });
    }

    it("previews with unknown inputs without calling the API, returning unknowns", async () => {
        stack.emu.resetRequests();
        const type = "cloud:endpoints/serviceIamMember:ServiceIamMember";
        const inputs = { serviceName: SERVICE, role: "roles/viewer", member: UNKNOWN_VALUE };
        const checked = await stack.plugin.check(type, inputs);
        expect(checked.failures).to.deep.equal([]);
        const created = await stack.plugin.create(type, inputs, true);
        expect(created.properties.etag).to.equal(UNKNOWN_VALUE);
        expect(created.properties.member).to.equal(UNKNOWN_VALUE);
        const d = await stack.plugin.diff(type, "x", { serviceName: SERVICE, role: "roles/viewer", member: "user:a@example.com" }, inputs);
        expect(d.replaces).to.deep.equal(["member"]);
        expect(stack.emu.requests).to.deep.equal([]);
    });

    it("builds with getIAMPolicy exactly the policyData a lookup returns after ServiceIamPolicy applies it", async () => {
        const built = await stack.plugin.invoke("cloud:organizations/getIAMPolicy:getIAMPolicy", { bindings: [
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:z@example.com", "group:g@example.com", "user:z@example.com"] },
            { role: "roles/servicemanagement.admin", members: ["user:admin@example.com"], condition: { title: "t", expression: "true", description: "" } },
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:a@example.com"] },
        ] });
        expect(built.failures).to.deep.equal([]);
        expect(built.return!.id).to.match(/^\d+$/);
        const type = "cloud:endpoints/serviceIamPolicy:ServiceIamPolicy";
        await stack.plugin.create(type, { serviceName: SERVICE, policyData: built.return!.policyData });
        const looked = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(looked.return!.policyData).to.equal(built.return!.policyData);
        expect(looked.return!.bindings).to.deep.equal(built.return!.bindings);
        const again = await stack.plugin.invoke("cloud:organizations/getIAMPolicy:getIAMPolicy", { bindings: (looked.return!.bindings as PropertyMap[]).reverse() });
        expect(again.return!.id).to.equal(built.return!.id);
    });

    it("refuses bad getIAMPolicy bindings with failures", async () => {
        const res = await stack.plugin.invoke("cloud:organizations/getIAMPolicy:getIAMPolicy", { bindings: [{ role: "owner", members: ["deleted:user:x@example.com?uid=1"] }] });
        expect(res.failures.map((f) => f.property).sort()).to.deep.equal(["bindings[0].members", "bindings[0].role"]);
    });

    it("judges getIAMPolicy's inputs and a Policy's policyData by the same rules, naming the same path", async () => {
        const grant = { role: "roles/viewer", members: ["user:a@example.com"] };
        const bad: PropertyMap[] = [
            { bindings: [{ ...grant, condition: { expression: "true", title: " " } }] },
            { bindings: [{ ...grant, condition: { expression: "true", title: "t", location: "x" } }] },
            { auditConfigs: [{ service: "", auditLogConfigs: [{ logType: "DATA_READ" }] }] },
            { auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READS" }] }] },
        ];
        for (const args of bad) {
            const fn = await stack.plugin.invoke("cloud:organizations/getIAMPolicy:getIAMPolicy", args);
            expect(fn.failures, JSON.stringify(args)).to.have.length(1);
            const res = await stack.plugin.check("cloud:endpoints/serviceIamPolicy:ServiceIamPolicy", { serviceName: SERVICE, policyData: JSON.stringify(args) });
            expect(res.failures.map((f) => f.property)).to.deep.equal(["policyData"]);
            expect(res.failures[0].reason).to.contain(`policyData: ${fn.failures[0].reason}`);
        }
    });

    it("answers a write with Google's answer, and confirms it through IAM's propagation delay before any read (reads lag by 1.5 s)", async () => {
        const type = "cloud:endpoints/serviceIamMember:ServiceIamMember";
        const inputs = { serviceName: SERVICE, role: "roles/servicemanagement.reporter", member: "user:lagging@example.com" };
        const id = `services/${SERVICE} ${inputs.role} ${inputs.member}`;
        // A lag well above what a create takes on a busy machine: the create must not wait it out, the read must.
        stack.emu.setBehavior({ propagationMs: 1500 });
        try {
            stack.emu.resetRequests();
            const started = Date.now();
            await stack.plugin.create(type, inputs);
            // The create has Google's answer to its write: it does not wait out the lag.
            expect(Date.now() - started).to.be.lessThan(1400);
            // A refresh right after waits for the confirming re-reads and sees the grant, though a plain read
            // would not show it yet.
            expect(grants(stack.emu.getPolicy(`services/${SERVICE}`))).to.include(`${inputs.role} ${inputs.member}`);
            const read = await stack.plugin.read(type, id, inputs, inputs);
            expect(read.id).to.equal(id);
            expect(Date.now() - started).to.be.greaterThan(1400);
            expect(stack.emu.requests.filter((r) => r.path.endsWith(":getIamPolicy")).length).to.be.greaterThan(2);
            // Likewise for the delete: the refresh after it finds the member gone.
            await stack.plugin.delete(type, id, inputs);
            expect((await stack.plugin.read(type, id, inputs, inputs)).id).to.equal("");
        } finally {
            stack.emu.setBehavior({ propagationMs: 0 });
        }
        expect(grants(stack.emu.getPolicy(`services/${SERVICE}`))).to.not.include(`roles/servicemanagement.reporter user:lagging@example.com`);
    });

    it("reports a missing service as gone on refresh and an unknown service on create (API answers 404)", async () => {
        const type = "cloud:endpoints/serviceIamMember:ServiceIamMember";
        const inputs = { serviceName: "gone.endpoints.p.cloud.goog", role: "roles/viewer", member: "user:a@example.com" };
        stack.emu.setBehavior({ missingService: 404 });
        try {
            const read = await stack.plugin.read(type, "services/gone.endpoints.p.cloud.goog roles/viewer user:a@example.com", inputs, inputs);
            expect(read.id).to.equal("");
            const err = await rpcError(stack.plugin.create(type, inputs));
            expect(err.details).to.contain('"gone.endpoints.p.cloud.goog"').and.contain("not found");
            // Deleting it has nothing left to do: one read finds the parent gone, and that is success.
            stack.emu.resetRequests();
            await stack.plugin.delete(type, "services/gone.endpoints.p.cloud.goog roles/viewer user:a@example.com", inputs);
            expect(stack.emu.requests.map((r) => r.status)).to.deep.equal([404]);
        } finally {
            stack.emu.setBehavior({ missingService: 403 });
        }
    });

    it("says a missing service may be gone or hidden when the API answers 403, on refresh, create and delete", async () => {
        // Google does not tell a deleted service from one the credentials may not see: nothing may be dropped
        // from the stack on that evidence, and the user is told both possibilities.
        const type = "cloud:endpoints/serviceIamMember:ServiceIamMember";
        const id = "services/gone.endpoints.p.cloud.goog roles/viewer user:a@example.com";
        const inputs = { serviceName: "gone.endpoints.p.cloud.goog", role: "roles/viewer", member: "user:a@example.com" };
        for (const err of [
            await rpcError(stack.plugin.read(type, id, inputs, inputs)),
            await rpcError(stack.plugin.create(type, inputs)),
            await rpcError(stack.plugin.delete(type, id, inputs)),
        ]) {
            expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
            expect(err.details).to.contain('service "gone.endpoints.p.cloud.goog" was not found, or')
                .and.contain("may not use it").and.contain("servicemanagement.services.getIamPolicy");
        }
    });
});
