// The emulator behaves as Google's Service Management IAM does where the provider's own rules would differ:
// proto3 JSON, etag bytes, IAM's limits and version rules, CEL conditions, every member form, the states
// Google writes itself (deleted accounts, case-folded emails, duplicate role entries), propagation delay.

import { expect } from "chai";
import { startEmulator, type Emulator, type Policy } from "../../emulator";
import { apiError, body, call, type Reply } from "./http";

const TOKEN = "google-behaviour-token";
const ROLE = "roles/servicemanagement.serviceConsumer";
const WHEN = { title: "until-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };

describe("emulator: Google's behaviour", function () {
    this.timeout(20_000);
    let emu: Emulator;
    let n = 0;
    let parent = "";

    const post = (path: string, payload: unknown, token = TOKEN): Promise<Reply> => call("POST", emu.url + path, { token, body: payload });
    const set = (payload: unknown): Promise<Reply> => post(`${parent}:setIamPolicy`, payload);
    const get = async (version = 3): Promise<Policy> => body<Policy>(await post(`${parent}:getIamPolicy`, { options: { requestedPolicyVersion: version } }));
    const refused = (r: Reply, ...parts: string[]): void => {
        expect(r.status, r.text).to.equal(400);
        expect(apiError(r).status).to.equal("INVALID_ARGUMENT");
        // The message, or the field violation that names where (google.rpc.BadRequest).
        for (const p of parts) expect(r.text).to.contain(JSON.stringify(p).slice(1, -1));
    };

    before(async () => {
        // The rules of conditional bindings are checked as if Google took them (it refuses them by default).
        emu = await startEmulator({ accessTokens: [TOKEN], allowConditions: true });
    });
    after(() => emu.close());
    beforeEach(() => {
        const name = `g${++n}.endpoints.my-project.cloud.goog`;
        emu.createService(name, "my-project");
        parent = `services/${name}`;
    });

    it("compares etags as bytes: unpadded and URL-safe forms of the current etag match; malformed is 400", async () => {
        // An etag whose base64 has '+' or '/' and padding, so every form differs as text.
        let etag = "";
        for (let i = 0; i < 200 && !/[+/]/.test(etag); i++) {
            etag = body<Policy>(await set({ policy: { bindings: [{ role: ROLE, members: [`user:u${i}@example.com`] }] } })).etag!;
        }
        expect(etag).to.match(/[+/]/).and.match(/=$/);
        const unpadded = etag.replace(/=+$/, "");
        const urlSafe = unpadded.replace(/\+/g, "-").replace(/\//g, "_");
        const first = await set({ policy: { etag: urlSafe, bindings: [{ role: ROLE, members: ["user:a@example.com"] }] } });
        expect(first.status, first.text).to.equal(200);
        const again = body<Policy>(first).etag!;
        expect((await set({ policy: { etag: again.replace(/=+$/, ""), bindings: [] } })).status).to.equal(200);
        const stale = await set({ policy: { etag: again, bindings: [] } });
        expect(stale.status).to.equal(409);
        expect(apiError(stale).status).to.equal("ABORTED");
        for (const bad of ["not base64!!", "A", "AB=C"]) refused(await set({ policy: { etag: bad, bindings: [] } }), "policy.etag");
    });

    it("takes proto field names at every depth and in update_mask, and names any unknown field", async () => {
        const stored = await set({
            policy: {
                bindings: [{ role: ROLE, members: ["user:a@example.com"] }],
                audit_configs: [{ service: "allServices", audit_log_configs: [{ log_type: "DATA_READ", exempted_members: ["user:b@example.com"] }] }],
            },
            update_mask: "bindings,audit_configs",
        });
        expect(stored.status, stored.text).to.equal(200);
        expect((await get()).auditConfigs).to.deep.equal([{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:b@example.com"] }] }]);
        expect(body<Policy>(await post(`${parent}:getIamPolicy`, { options: { requested_policy_version: "3" } })).bindings).to.have.length(1);

        for (const [payload, where] of [
            [{ policy: { bogus: 1 } }, "at 'policy'"],
            [{ policy: { bindings: [{ role: ROLE, members: ["user:a@example.com"], condition: { ...WHEN, bogus: "x" } }] } }, "at 'policy.bindings[0].condition'"],
            [{ policy: { auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", bogus: [] }] }] } }, "at 'policy.auditConfigs[0].auditLogConfigs[0]'"],
            [{ policy: {}, bogus: true }, "Unknown name \"bogus\": Cannot find field"],
        ] as const) {
            const r = await set(payload);
            refused(r, "bogus", where);
            expect(JSON.stringify(apiError(r).details)).to.contain("google.rpc.BadRequest");
        }
        refused(await set({ policy: { auditConfigs: [], audit_configs: [] } }), "given twice");
        refused(await set({ policy: { version: "three" } }), "policy.version");
        refused(await set({ policy: {}, updateMask: "bindings,owner" }), "owner");
        // Nothing above changed the policy.
        expect((await get()).auditConfigs).to.have.length(1);
    });

    it("enforces IAM's limits: 1,500 principals, 250 groups and domains, 20 conditional bindings per role and principal", async () => {
        const users = (k: number, prefix = "user:u") => Array.from({ length: k }, (_, i) => `${prefix}${i}@example.com`);
        expect((await set({ policy: { bindings: [{ role: ROLE, members: users(1500) }] } })).status).to.equal(200);
        refused(await set({ policy: { bindings: [{ role: ROLE, members: users(1400) }, { role: "roles/viewer", members: users(101) }] } }), "1501", "1500");
        // Audit exemptions count too.
        refused(await set({
            policy: { bindings: [{ role: ROLE, members: users(1500) }], auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:x@example.com"] }] }] },
            updateMask: "bindings,auditConfigs",
        }), "1501");
        expect((await set({ policy: { bindings: [{ role: ROLE, members: users(250, "group:g") }] } })).status).to.equal(200);
        refused(await set({ policy: { bindings: [{ role: ROLE, members: [...users(250, "group:g"), "domain:example.org"] }] } }), "251", "250");
        const conditional = (k: number) => Array.from({ length: k }, (_, i) => ({ role: ROLE, members: ["user:a@example.com"], condition: { title: `t${i}`, expression: `request.time.getHours("UTC") != ${i}` } }));
        expect((await set({ policy: { version: 3, bindings: conditional(20) } })).status).to.equal(200);
        refused(await set({ policy: { version: 3, bindings: conditional(21) } }), "More than 20 conditional role bindings");
    });

    it("parses conditions as CEL and allows at most 12 logical operators", async () => {
        const write = (expression: string) => set({ policy: { version: 3, bindings: [{ role: ROLE, members: ["user:a@example.com"], condition: { title: "t", expression } }] } });
        refused(await write("this is (not CEL"), "not valid CEL", "policy.bindings[0].condition.expression");
        const clauses = (k: number) => Array.from({ length: k }, (_, i) => `request.time.getHours("UTC") != ${i}`).join(" && ");
        expect((await write(clauses(13))).status, "12 operators").to.equal(200);
        refused(await write(clauses(14)), "13 logical operators", "at most 12");
        // Operators inside string literals are not operators.
        expect((await write(`resource.name.startsWith("a&&b||c!d&&e||f&&g||h&&i||j&&k||l&&m||n")`)).status).to.equal(200);
        refused(await set({ policy: { version: 3, bindings: [{ role: "roles/viewer", members: ["user:a@example.com"], condition: WHEN }] } }), "basic role");
        refused(await set({ policy: { version: 3, bindings: [{ role: ROLE, members: ["allUsers"], condition: WHEN }] } }), "allUsers");
    });

    it("requires version 3 to add a conditional binding, and to remove one from a policy that has conditions", async () => {
        const conditional = [{ role: ROLE, members: ["user:a@example.com"] }, { role: ROLE, members: ["user:b@example.com"], condition: WHEN }];
        refused(await set({ policy: { version: 1, bindings: conditional } }), "requires policy version 3");
        const v3 = body<Policy>(await set({ policy: { version: 3, bindings: conditional } }));
        // A version-1 read shows the conditional binding under a `_withcond_` role of 20 hex digits.
        const v1 = await get(1);
        expect(v1.bindings![1].role).to.match(/^roles\/servicemanagement\.serviceConsumer_withcond_[0-9a-f]{20}$/);
        // Removing with version 1 (and the etag, as a careful writer does): refused; with version 3: allowed.
        refused(await set({ policy: { version: 1, etag: v3.etag, bindings: [conditional[0]] } }), "requires policy version 3");
        refused(await set({ policy: { version: 1, etag: v3.etag, bindings: v1.bindings } }), "_withcond_");
        const removed = await set({ policy: { version: 3, etag: v3.etag, bindings: [conditional[0]] } });
        expect(removed.status, removed.text).to.equal(200);
        // Without an etag IAM lets a version-1 write overwrite a conditional policy: the conditions are lost.
        await set({ policy: { version: 3, bindings: conditional } });
        expect((await set({ policy: { version: 1, bindings: [conditional[0]] } })).status).to.equal(200);
        expect((await get()).bindings).to.deep.equal([conditional[0]]);
    });

    it("accepts every member form of Binding.members, and refuses others and unknown roles", async () => {
        const forms = [
            "allUsers", "allAuthenticatedUsers", "user:alice@example.com", "serviceAccount:app@my-project.iam.gserviceaccount.com",
            "serviceAccount:my-project.svc.id.goog[my-namespace/my-kubernetes-sa]", "group:admins@example.com", "domain:example.com",
            "principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/my-subject",
            "principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/group/my-group",
            "principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/attribute.department/eng",
            "principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/*",
            "principal://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/my-pool/subject/sub",
            "principalSet://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/my-pool/group/g",
            "principalSet://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/my-pool/attribute.repo/x",
            "principalSet://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/my-pool/*",
            "deleted:user:bob@example.com?uid=123456789012345678901", "deleted:serviceAccount:old@my-project.iam.gserviceaccount.com?uid=1",
            "deleted:group:gone@example.com?uid=2", "deleted:principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/s",
            "projectOwner:my-project", "projectEditor:my-project", "projectViewer:my-project",
        ];
        const r = await set({ policy: { bindings: [{ role: ROLE, members: forms }] } });
        expect(r.status, r.text).to.equal(200);
        expect((await get()).bindings![0].members).to.deep.equal(forms);
        for (const bad of ["alice@example.com", "user:", "user:alice", "projectOwner:x", "principal://example.com/x", "deleted:user:a@example.com", "everyone"]) {
            refused(await set({ policy: { bindings: [{ role: ROLE, members: [bad] }] } }), "Invalid member", "policy.bindings[0].members[0]");
        }
        for (const role of ["roles/a", "roles/storage.admin", "viewer", "projects/my-project/roles/x"]) {
            refused(await set({ policy: { bindings: [{ role, members: ["user:a@example.com"] }] } }), role);
        }
    });

    it("stores emails in lower case and keeps duplicate role entries as written", async () => {
        const bindings = [{ role: ROLE, members: ["user:Alice@Example.COM"] }, { role: ROLE, members: ["group:Team@Example.com", "principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/MixedCase"] }];
        await set({ policy: { bindings } });
        expect((await get()).bindings).to.deep.equal([
            { role: ROLE, members: ["user:alice@example.com"] },
            { role: ROLE, members: ["group:team@example.com", "principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/MixedCase"] },
        ]);
    });

    it("testIamPermissions refuses wildcards and grants only real permissions", async () => {
        refused(await post(`${parent}:testIamPermissions`, { permissions: ["servicemanagement.*"] }), "wildcards");
        const r = await post(`${parent}:testIamPermissions`, { permissions: ["servicemanagement.services.get", "servicemanagement.nosuch.perm"] });
        expect(r.json).to.deep.equal({ permissions: ["servicemanagement.services.get"] });
    });

    it("sends error JSON as Google does: details only when there are some, distinct reasons for an unknown and an expired token", async () => {
        const stale = await set({ policy: { etag: "BwWWja0YfJA=", bindings: [] } });
        expect(stale.json).to.deep.equal({ error: { code: 409, message: apiError(stale).message, status: "ABORTED" } });
        const reason = async (token: string): Promise<string> => {
            const r = await post(`${parent}:getIamPolicy`, {}, token);
            expect(r.status).to.equal(401);
            return JSON.stringify(apiError(r).details);
        };
        expect(await reason("ya29.never-issued")).to.contain("ACCESS_TOKEN_TYPE_UNSUPPORTED");
        expect(await reason(emu.issueToken({ lifetimeSeconds: 0 }))).to.contain("ACCESS_TOKEN_EXPIRED");
        const wrongMethod = await call("PUT", `${emu.url}${parent}:setIamPolicy`, { token: TOKEN });
        expect(wrongMethod.status).to.equal(404);
        expect(apiError(wrongMethod).status).to.equal("NOT_FOUND");
    });

    it("deletes an account as Google does: every grant and exemption becomes deleted:…?uid=N; undelete reverts", async () => {
        const consumer = `${parent}/consumers/consumer-project`;
        emu.setPolicy(parent, {
            bindings: [{ role: ROLE, members: ["user:bob@example.com", "user:carol@example.com"] }, { role: "roles/viewer", members: ["user:Bob@example.com"] }],
            auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:bob@example.com"] }] }],
        });
        emu.setPolicy(consumer, { bindings: [{ role: "roles/servicemanagement.serviceController", members: ["user:bob@example.com"] }] });
        const before = emu.getPolicy(parent).etag;
        const deleted = emu.deletePrincipal("user:bob@example.com");
        expect(deleted).to.match(/^deleted:user:bob@example\.com\?uid=\d{21}$/);
        const after = emu.getPolicy(parent);
        expect(after.etag).to.not.equal(before);
        expect(after.bindings).to.deep.equal([{ role: ROLE, members: [deleted, "user:carol@example.com"] }, { role: "roles/viewer", members: [deleted] }]);
        expect(after.auditConfigs![0].auditLogConfigs[0].exemptedMembers).to.deep.equal([deleted]);
        expect(emu.getPolicy(consumer).bindings![0].members).to.deep.equal([deleted]);
        // The deleted account cannot be granted again; its deleted form can be written back as read.
        refused(await set({ policy: { bindings: [{ role: ROLE, members: ["user:bob@example.com"] }] } }), "does not exist");
        expect((await set({ policy: { bindings: after.bindings } })).status).to.equal(200);
        // Over HTTP too (the admin surface for an emulator run as its own process).
        const again = await call("POST", `${emu.origin}/__emulator/principals:undelete`, { body: { member: "user:bob@example.com" } });
        expect(again.status, again.text).to.equal(200);
        expect(emu.getPolicy(consumer).bindings![0].members).to.deep.equal(["user:bob@example.com"]);
        expect(emu.getPolicy(parent).bindings![0].members).to.deep.equal(["user:bob@example.com", "user:carol@example.com"]);
        expect(() => emu.deletePrincipal("domain:example.com")).to.throw(/not a deletable principal/);
    });

    it("propagation delay: reads return the previous policy for the window; the etag check sees the newest", async () => {
        emu.setBehavior({ propagationMs: 400 });
        try {
            const first = body<Policy>(await set({ policy: { bindings: [{ role: ROLE, members: ["user:a@example.com"] }] } }));
            const stale = await get();
            expect(stale).to.deep.equal({ version: 1, etag: "ACAB" });
            expect((await set({ policy: { etag: stale.etag, bindings: [] } })).status).to.equal(409);
            await new Promise((r) => setTimeout(r, 450));
            expect((await get()).etag).to.equal(first.etag);
        } finally {
            emu.setBehavior({ propagationMs: 0 });
        }
    });
});
