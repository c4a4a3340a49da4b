// The Service Management API subset over real HTTP: services, IAM policies of services and consumers.

import { expect } from "chai";
import { startEmulator, type Emulator, type Policy } from "../../emulator";
import { apiError, body, call, type Reply } from "./http";

const FULL = "full-token";
const DENIED = "denied-token";

describe("emulator: Service Management API", function () {
    this.timeout(10_000);
    let emu: Emulator;
    let n = 0;
    /** A fresh, valid service name per test, so tests never see each other's policies. */
    const fresh = (): string => `api${++n}.endpoints.my-project.cloud.goog`;

    const post = (path: string, body?: unknown, token: string = FULL): Promise<Reply> =>
        call("POST", emu.url + path, { token, body });
    const create = async (name: string): Promise<void> => {
        const r = await post("services", { serviceName: name, producerProjectId: "my-project" });
        expect(r.status, r.text).to.equal(200);
    };
    const getPolicy = (parent: string, version?: number): Promise<Reply> =>
        post(`${parent}:getIamPolicy`, version === undefined ? undefined : { options: { requestedPolicyVersion: version } });
    const setPolicy = (parent: string, policy: Policy, extra: Record<string, unknown> = {}): Promise<Reply> =>
        post(`${parent}:setIamPolicy`, { policy, ...extra });

    before(async () => {
        // Some tests write conditional bindings, which Service Management refuses by default.
        emu = await startEmulator({ accessTokens: [FULL], deniedTokens: [DENIED], allowConditions: true });
    });
    after(async () => {
        await emu.close();
    });

    it("exposes url, origin, tokenUrl and port consistently", () => {
        expect(emu.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/v1\/$/);
        expect(emu.url).to.equal(`${emu.origin}/v1/`);
        expect(emu.tokenUrl).to.equal(`${emu.origin}/token`);
        expect(emu.origin).to.equal(`http://127.0.0.1:${emu.port}`);
    });

    it("creates a service (an Operation, done) and gets it", async () => {
        const name = fresh();
        const r = await post("services", { serviceName: name, producerProjectId: "my-project" });
        expect(r.status).to.equal(200);
        expect(r.headers["content-type"]).to.equal("application/json; charset=UTF-8");
        const op = body<{ name: string; done: boolean; response: Record<string, string> }>(r);
        expect(op.name).to.match(new RegExp(`^operations/services\\.${name.replace(/\./g, "\\.")}\\.\\d+$`));
        expect(op.done).to.equal(true);
        expect(op.response).to.deep.equal({
            "@type": "type.googleapis.com/google.api.servicemanagement.v1.ManagedService",
            serviceName: name,
            producerProjectId: "my-project",
        });
        const got = await call("GET", `${emu.url}services/${name}`, { token: FULL });
        expect(got.status).to.equal(200);
        expect(got.json).to.deep.equal({ serviceName: name, producerProjectId: "my-project" });
        const again = await post("services", { serviceName: name, producerProjectId: "my-project" });
        expect(again.status).to.equal(409);
        expect(apiError(again).status).to.equal("ALREADY_EXISTS");
    });

    it("answers 403 'not found or permission denied' for an unknown service (404 with missingService: 404)", async () => {
        const r = await call("GET", `${emu.url}services/nope.example.com`, { token: FULL });
        expect(r.status).to.equal(403);
        expect(r.json).to.deep.equal({
            error: { code: 403, message: "Service 'nope.example.com' not found or permission denied.", status: "PERMISSION_DENIED" },
        });
        const iam = await getPolicy("services/nope.example.com");
        expect(iam.status).to.equal(403);
        expect(apiError(iam).message).to.contain("nope.example.com");
        emu.setBehavior({ missingService: 404 });
        try {
            const consumer = await getPolicy("services/nope.example.com/consumers/my-project");
            expect(consumer.status).to.equal(404);
            expect(apiError(consumer).status).to.equal("NOT_FOUND");
            expect(apiError(consumer).message).to.contain("'nope.example.com'");
        } finally {
            emu.setBehavior({ missingService: 403 });
        }
    });

    it("answers 400 INVALID_ARGUMENT with the naming rule for bad names", async () => {
        const name = fresh();
        await create(name);
        for (const bad of ["a%2F..%2Fb", "Bad_Name", "services%2Ffoo.example.com", "bad%ZZname"]) {
            const r = await getPolicy(`services/${bad}`);
            expect(r.status, bad).to.equal(400);
            expect(apiError(r).status).to.equal("INVALID_ARGUMENT");
        }
        const rule = apiError(await getPolicy("services/Bad_Name")).message;
        expect(rule).to.contain("\"Bad_Name\"").and.contain("lowercase");
        const consumer = await getPolicy(`services/${name}/consumers/Bad_Project`);
        expect(consumer.status).to.equal(400);
        expect(apiError(consumer).message).to.contain("project ID");
        const create400 = await post("services", { serviceName: "Bad_Name", producerProjectId: "my-project" });
        expect(create400.status).to.equal(400);
    });

    it("round-trips a policy; every write gives a new etag; an unset policy is version 1 with etag ACAB", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const empty = await getPolicy(parent);
        expect(empty.json).to.deep.equal({ version: 1, etag: "ACAB" });

        const policy: Policy = {
            bindings: [{ role: "roles/servicemanagement.serviceConsumer", members: ["user:a@example.com", "group:g@example.com"] }],
        };
        const etags = new Set<string>(["ACAB"]);
        for (let i = 0; i < 5; i++) {
            const set = await setPolicy(parent, policy);
            expect(set.status, set.text).to.equal(200);
            const stored = body<Policy>(set);
            expect(stored.version).to.equal(1);
            expect(stored.bindings).to.deep.equal(policy.bindings);
            expect(stored.etag).to.be.a("string").and.match(/^[A-Za-z0-9+/]{11}=$/);
            expect(etags.has(stored.etag!), "etag reused").to.equal(false);
            etags.add(stored.etag!);
            const read = body<Policy>(await getPolicy(parent, 3));
            expect(read).to.deep.equal({ version: 1, bindings: policy.bindings, etag: stored.etag });
        }
        expect(emu.getPolicy(parent).bindings).to.deep.equal(policy.bindings);
    });

    it("refuses a stale etag with 409 ABORTED and overwrites unconditionally without one", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const first = body<Policy>(await setPolicy(parent, { bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }] }));
        const second = body<Policy>(await setPolicy(parent, {
            etag: first.etag, bindings: [{ role: "roles/viewer", members: ["user:b@example.com"] }],
        }));
        expect(second.etag).to.not.equal(first.etag);

        const stale = await setPolicy(parent, { etag: first.etag, bindings: [{ role: "roles/viewer", members: ["user:c@example.com"] }] });
        expect(stale.status).to.equal(409);
        expect(apiError(stale)).to.deep.equal({
            code: 409,
            message: "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
            status: "ABORTED",
        });
        expect(body<Policy>(await getPolicy(parent)).bindings![0].members).to.deep.equal(["user:b@example.com"]);

        const blind = await setPolicy(parent, { bindings: [{ role: "roles/editor", members: ["user:d@example.com"] }] });
        expect(blind.status).to.equal(200);
        expect(body<Policy>(await getPolicy(parent)).bindings).to.deep.equal([{ role: "roles/editor", members: ["user:d@example.com"] }]);
    });

    it("checks etags exactly under concurrent read-modify-writes: one winner per etag", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const { etag } = body<Policy>(await getPolicy(parent));
        const writes = await Promise.all(Array.from({ length: 10 }, (_, i) =>
            setPolicy(parent, { etag, bindings: [{ role: "roles/viewer", members: [`user:u${i}@example.com`] }] })));
        expect(writes.filter((w) => w.status === 200)).to.have.length(1);
        expect(writes.filter((w) => w.status === 409)).to.have.length(9);
    });

    it("drops bindings with no members and validates roles and members", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const ok = await setPolicy(parent, {
            bindings: [
                { role: "roles/viewer", members: [] },
                { role: "projects/my-project/roles/custom.role", members: ["serviceAccount:sa@my-project.iam.gserviceaccount.com"] },
                { role: "organizations/123/roles/xyz", members: ["allUsers", "allAuthenticatedUsers", "domain:example.com",
                    "principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/s", "projectOwner:my-project",
                    "deleted:user:gone@example.com?uid=123456"] },
            ],
        });
        expect(ok.status, ok.text).to.equal(200);
        expect(body<Policy>(ok).bindings!.map((b) => b.role)).to.deep.equal(["projects/my-project/roles/custom.role", "organizations/123/roles/xyz"]);
        for (const binding of [
            { role: "viewer", members: ["user:a@example.com"] },
            { role: "roles/viewer", members: ["alice@example.com"] },
            { role: "roles/viewer", members: [""] },
            { role: "roles/viewer_withcond_0123456789abcdef0123", members: ["user:a@example.com"] },
            { role: "roles/a", members: ["user:a@example.com"] },
            { role: "roles/viewer", members: ["projectOwner:x"] },
        ]) {
            const r = await setPolicy(parent, { bindings: [binding] });
            expect(r.status, JSON.stringify(binding)).to.equal(400);
            expect(apiError(r).status).to.equal("INVALID_ARGUMENT");
        }
        const noPolicy = await post(`${parent}:setIamPolicy`, {});
        expect(noPolicy.status).to.equal(400);
    });

    it("requires version 3 for conditions, and shows _withcond_ roles below version 3", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const condition = { title: "expires", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
        const role = "roles/servicemanagement.serviceConsumer";
        const bindings = [
            { role, members: ["user:a@example.com"] },
            { role, members: ["user:b@example.com"], condition },
        ];
        for (const version of [undefined, 1]) {
            const r = await setPolicy(parent, { version, bindings });
            expect(r.status).to.equal(400);
            expect(apiError(r).message).to.contain("requires policy version 3");
        }
        const noTitle = await setPolicy(parent, { version: 3, bindings: [{ ...bindings[1], condition: { expression: "true" } as never }] });
        expect(noTitle.status).to.equal(400);

        const set = await setPolicy(parent, { version: 3, bindings });
        expect(set.status, set.text).to.equal(200);
        expect(body<Policy>(set).version).to.equal(3);
        expect(body<Policy>(set).bindings).to.deep.equal(bindings);

        const v3 = body<Policy>(await getPolicy(parent, 3));
        expect(v3.version).to.equal(3);
        expect(v3.bindings).to.deep.equal(bindings);
        for (const version of [undefined, 0, 1]) {
            const low = body<Policy>(await getPolicy(parent, version));
            expect(low.version).to.equal(1);
            expect(low.bindings![0]).to.deep.equal(bindings[0]);
            expect(low.bindings![1].role).to.match(/^roles\/servicemanagement\.serviceConsumer_withcond_[0-9a-f]{20}$/);
            expect(low.bindings![1]).to.not.have.property("condition");
            expect(low.etag).to.equal(v3.etag);
        }
        const bad = await getPolicy(parent, 2);
        expect(bad.status).to.equal(400);
    });

    it("returns version 1 when version 3 is asked of a policy without conditions", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        await setPolicy(parent, { version: 3, bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }] });
        expect(body<Policy>(await getPolicy(parent, 3)).version).to.equal(1);
    });

    it("replaces auditConfigs only when the updateMask names them", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}`;
        const auditConfigs = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:a@example.com"] }] }];
        const bindings = [{ role: "roles/viewer", members: ["user:a@example.com"] }];
        const ignored = body<Policy>(await setPolicy(parent, { bindings, auditConfigs }));
        expect(ignored).to.not.have.property("auditConfigs");
        const masked = await setPolicy(parent, { bindings, auditConfigs }, { updateMask: "bindings,etag,auditConfigs" });
        expect(body<Policy>(masked).auditConfigs).to.deep.equal(auditConfigs);
        // A set without auditConfigs in its mask keeps them.
        const kept = body<Policy>(await setPolicy(parent, { bindings: [] }));
        expect(kept.auditConfigs).to.deep.equal(auditConfigs);
        expect(kept).to.not.have.property("bindings");
        // Only auditConfigs in the mask: bindings are left alone.
        await setPolicy(parent, { bindings });
        const onlyAudit = body<Policy>(await setPolicy(parent, { bindings: [], auditConfigs: [] }, { updateMask: "auditConfigs" }));
        expect(onlyAudit.bindings).to.deep.equal(bindings);
        expect(onlyAudit).to.not.have.property("auditConfigs");
        const badMask = await setPolicy(parent, { bindings }, { updateMask: "bindings,owner" });
        expect(badMask.status).to.equal(400);
    });

    it("testIamPermissions returns the servicemanagement subset, and {} for a missing service or a denied caller", async () => {
        const name = fresh();
        await create(name);
        const permissions = ["servicemanagement.services.getIamPolicy", "servicemanagement.services.setIamPolicy", "storage.buckets.get"];
        const r = await post(`services/${name}:testIamPermissions`, { permissions });
        expect(r.status).to.equal(200);
        expect(r.json).to.deep.equal({ permissions: permissions.slice(0, 2) });
        const consumer = await post(`services/${name}/consumers/my-project:testIamPermissions`, { permissions });
        expect(consumer.json).to.deep.equal({ permissions: permissions.slice(0, 2) });
        const missing = await post("services/missing.example.com:testIamPermissions", { permissions });
        expect(missing.status).to.equal(200);
        expect(missing.json).to.deep.equal({});
        const denied = await post(`services/${name}:testIamPermissions`, { permissions }, DENIED);
        expect(denied.status).to.equal(200);
        expect(denied.json).to.deep.equal({});
    });

    it("addresses any valid consumer of an existing service, with an empty policy until set", async () => {
        const name = fresh();
        await create(name);
        const parent = `services/${name}/consumers/other-project`;
        expect((await getPolicy(parent)).json).to.deep.equal({ version: 1, etag: "ACAB" });
        const bindings = [{ role: "roles/servicemanagement.serviceController", members: ["serviceAccount:x@y.iam.gserviceaccount.com"] }];
        const set = await setPolicy(parent, { bindings, etag: "ACAB" });
        expect(set.status).to.equal(200);
        expect(body<Policy>(await getPolicy(parent)).bindings).to.deep.equal(bindings);
        // The service's own policy is a different one.
        expect((await getPolicy(`services/${name}`)).json).to.deep.equal({ version: 1, etag: "ACAB" });
    });

    it("handles a domain-scoped consumer sent percent-encoded (example.com%3Amy-proj)", async () => {
        const name = fresh();
        await create(name);
        const bindings = [{ role: "roles/viewer", members: ["user:a@example.com"] }];
        const set = await setPolicy(`services/${name}/consumers/example.com%3Amy-proj`, { bindings });
        expect(set.status, set.text).to.equal(200);
        expect(emu.getPolicy(`services/${name}/consumers/example.com:my-proj`).bindings).to.deep.equal(bindings);
        const read = await getPolicy(`services/${name}/consumers/example.com%3Amy-proj`);
        expect(body<Policy>(read).bindings).to.deep.equal(bindings);
        // The same consumer written with a literal colon is the same resource.
        const literal = await getPolicy(`services/${name}/consumers/example.com:my-proj`);
        expect(body<Policy>(literal).etag).to.equal(body<Policy>(read).etag);
    });

    it("answers 403 PERMISSION_DENIED naming the permission to a denied token", async () => {
        const name = fresh();
        await create(name);
        const r = await post(`services/${name}:getIamPolicy`, {}, DENIED);
        expect(r.status).to.equal(403);
        expect(apiError(r).status).to.equal("PERMISSION_DENIED");
        expect(apiError(r).message).to.equal(
            `Permission 'servicemanagement.services.getIamPolicy' denied on resource 'services/${name}' (or it may not exist).`);
        const set = await post(`services/${name}/consumers/my-project:setIamPolicy`, { policy: {} }, DENIED);
        expect(set.status).to.equal(403);
        expect(apiError(set).message).to.contain("'servicemanagement.services.setIamPolicy'").and.contain(`services/${name}/consumers/my-project`);
        expect(emu.getPolicy(`services/${name}/consumers/my-project`).etag).to.equal("ACAB");
    });

    it("answers unknown paths and wrong methods with 404, bad JSON and unknown fields with 400, big bodies with 413", async () => {
        const name = fresh();
        await create(name);
        const unknown = await call("GET", `${emu.url}nothing/here`, { token: FULL });
        expect(unknown.status).to.equal(404);
        expect(apiError(unknown).status).to.equal("NOT_FOUND");
        const wrongVerb = await post(`services/${name}:deleteIamPolicy`);
        expect(wrongVerb.status).to.equal(404);
        const wrongMethod = await call("GET", `${emu.url}services/${name}:getIamPolicy`, { token: FULL });
        expect(wrongMethod.status).to.equal(404);
        expect(apiError(wrongMethod).status).to.equal("NOT_FOUND");
        const badJson = await call("POST", `${emu.url}services/${name}:getIamPolicy`, { token: FULL, rawBody: "{nope" });
        expect(badJson.status).to.equal(400);
        expect(apiError(badJson).status).to.equal("INVALID_ARGUMENT");
        const misspelt = await post(`services/${name}:getIamPolicy`, { requestedPolicyVersion: 3 });
        expect(misspelt.status).to.equal(400);
        expect(apiError(misspelt).message).to.contain("requestedPolicyVersion");
        const big = await call("POST", `${emu.url}services/${name}:setIamPolicy`, { token: FULL, rawBody: Buffer.alloc(1_100_000, 32) });
        expect(big.status).to.equal(413);
    });

    it("seeds services and policies in-process", () => {
        const name = fresh();
        emu.createService(name, "my-project");
        expect(() => emu.createService(name, "my-project")).to.throw(/exists/);
        expect(() => emu.createService("Bad_Name", "my-project")).to.throw(/Invalid service name "Bad_Name"/);
        const stored = emu.setPolicy(`services/${name}`, {
            bindings: [{ role: "roles/servicemanagement.reporter", members: ["user:a@example.com"], condition: { title: "t", expression: "true" } }],
        });
        expect(stored.version).to.equal(3);
        expect(emu.getPolicy(`services/${name}`)).to.deep.equal(stored);
        expect(() => emu.getPolicy("services/missing.example.com")).to.throw(/does not exist/);
    });
});
