// The plugin executable, driven over the provider protocol as the engine drives it, against the emulator.

import { expect } from "chai";
import * as fs from "fs";
import * as grpc from "@grpc/grpc-js";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import * as pluginPb from "@pulumi/pulumi/proto/plugin_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { policyData } from "../../provider/iam/policy";
import { SECRET_SIG_KEY, UNKNOWN_VALUE } from "../../provider/declare/properties";
import { CONSUMERS_FN, rpcError, SERVICE_FN, useStack } from "../support/plugin";

const TOKEN = "ya29.test-token-DO-NOT-PRINT-7f3a9c";
const SERVICE = "myapi.endpoints.my-project.cloud.goog";
const CONSUMER = "consumer-project-1";

describe("provider protocol", function () {
    const stack = useStack(TOKEN, [SERVICE, "other.endpoints.my-project.cloud.goog"]);
    after(() => {
        expect(stack.exitCode, "exit code after SIGINT").to.equal(0);
        expect(stack.plugin.stdout + stack.plugin.stderr).not.to.contain(TOKEN);
    });
    beforeEach(() => stack.emu.resetRequests());

    it("prints only the port on stdout line 1", () => {
        expect(stack.plugin.stdout).to.match(/^\d+\n$/);
        expect(Number(stack.plugin.stdout.trim())).to.equal(stack.plugin.port);
    });

    it("answers Handshake, GetPluginInfo and GetSchema with the committed schema.json", async () => {
        const hs = await stack.plugin.call<pb.ProviderHandshakeResponse>("handshake", new pb.ProviderHandshakeRequest());
        expect(hs.getAcceptSecrets()).to.equal(true);
        const info = await stack.plugin.empty<pluginPb.PluginInfo>("getPluginInfo");
        expect(info.getVersion()).to.equal("8.38.0");
        const schema = await stack.plugin.call<pb.GetSchemaResponse>("getSchema", new pb.GetSchemaRequest());
        expect(schema.getSchema()).to.equal(fs.readFileSync(`${__dirname}/../../../schema.json`, "utf8"));
        const err = await rpcError(stack.plugin.call("getSchema", new pb.GetSchemaRequest().setVersion(1)));
        expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
        expect(err.details).to.contain("schema version 1");
    });

    it("CheckConfig returns typed failures and keeps secret keys secret", async () => {
        const res = await stack.plugin.checkConfig({ accessToken: TOKEN, requestTimeout: "forever", version: "8.38.0" });
        expect(res.failures.map((f) => f.property)).to.deep.equal(["requestTimeout"]);
        expect(res.failures[0].reason).to.contain("duration");
        expect(res.inputs.accessToken).to.deep.equal({ [SECRET_SIG_KEY]: "1b47061264138c4ac30d75fd1eb44270", value: TOKEN });
        expect(JSON.stringify(res.failures)).not.to.contain(TOKEN);
    });

    it("DiffConfig reports changed keys, never a replacement", async () => {
        const diff = await stack.plugin.call<pb.DiffResponse>("diffConfig", new pb.DiffRequest()
            .setUrn("urn:pulumi:dev::proj::pulumi:providers:cloud::default")
            .setOlds(Struct.fromJavaScript({ project: "a", requestTimeout: "60s", version: "8.38.0" }))
            .setNews(Struct.fromJavaScript({ project: "b", requestTimeout: "60s", billingProject: "c", version: "8.38.0" })));
        expect(diff.getChanges()).to.equal(pb.DiffResponse.DiffChanges.DIFF_SOME);
        expect(diff.getDiffsList()).to.deep.equal(["billingProject", "project"]);
        expect(diff.getReplacesList()).to.deep.equal([]);
        expect(diff.getDetaileddiffMap().get("billingProject")!.getKind()).to.equal(pb.PropertyDiff.Kind.ADD);
        const same = await stack.plugin.call<pb.DiffResponse>("diffConfig", new pb.DiffRequest()
            .setOlds(Struct.fromJavaScript({ project: "a" })).setNews(Struct.fromJavaScript({ project: "a" })));
        expect(same.getChanges()).to.equal(pb.DiffResponse.DiffChanges.DIFF_NONE);
    });

    it("Configure says it accepts secrets and supports preview; rejects bad config naming the key", async () => {
        const res = await stack.plugin.configure(undefined, stack.vars());
        expect(res.getAcceptsecrets()).to.equal(true);
        expect(res.getSupportspreview()).to.equal(true);
        const err = await rpcError(stack.plugin.configure(undefined, stack.vars({ "cloud:config:requestTimeout": "soon" })));
        expect(err.details).to.contain("requestTimeout").and.contain("duration");
        await stack.plugin.configure(undefined, stack.vars());
    });

    it("bills quota to billingProject with userProjectOverride (X-Goog-User-Project), and not without it", async () => {
        await stack.configure({ "cloud:config:billingProject": "billed-project", "cloud:config:userProjectOverride": "true" });
        await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        await stack.configure({ "cloud:config:billingProject": "billed-project" });
        await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        await stack.configure();
        expect(stack.emu.requests.map((r) => r.userProject)).to.deep.equal(["billed-project", undefined]);
    });

    it("answers Cancel and Attach", async () => {
        await stack.plugin.empty("cancel");
        await stack.plugin.call("attach", new pluginPb.PluginAttach().setAddress(""));
        const res = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
    });

    it("returns the service record: exact echo, id, etag and canonical policyData", async () => {
        const stored = stack.emu.setPolicy(`services/${SERVICE}`, {
            bindings: [
                { role: "roles/viewer", members: ["user:b@example.com", "user:a@example.com", "user:a@example.com"] },
                { role: "roles/servicemanagement.serviceConsumer", members: ["group:devs@example.com"] },
            ],
        });
        const res = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
        const r = res.return!;
        expect(r.serviceName).to.equal(SERVICE);
        expect(r.id).to.equal(`services/${SERVICE}`);
        expect(r.etag).to.equal(stored.etag).and.to.be.a("string").and.not.equal("");
        expect(r.policyData).to.equal(
            '{"bindings":[{"members":["group:devs@example.com"],"role":"roles/servicemanagement.serviceConsumer"},' +
            '{"members":["user:a@example.com","user:b@example.com"],"role":"roles/viewer"}]}');
        expect(r.bindings).to.deep.equal([
            { members: ["group:devs@example.com"], role: "roles/servicemanagement.serviceConsumer" },
            { members: ["user:a@example.com", "user:b@example.com"], role: "roles/viewer" },
        ]);
        expect(r.auditConfigs).to.deep.equal([]);
        expect(stack.emu.requests.map((q) => q.path)).to.deep.equal([`/v1/services/${SERVICE}:getIamPolicy`]);
        expect(stack.emu.requests[0].userAgent).to.equal("pulumi-resource-cloud/8.38.0");
        expect(stack.emu.requests[0].userProject).to.equal(undefined);
    });

    it("returns the consumer record, conditions included, and accepts the services/ prefix", async () => {
        const condition = { expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")", title: "until-2030" };
        stack.emu.setPolicy(`services/${SERVICE}/consumers/${CONSUMER}`, {
            version: 3,
            bindings: [{ role: "roles/servicemanagement.serviceController", members: ["serviceAccount:sa@p.iam.gserviceaccount.com"], condition }],
        });
        const res = await stack.plugin.invoke(CONSUMERS_FN, { serviceName: `services/${SERVICE}`, consumerProject: CONSUMER });
        expect(res.failures).to.deep.equal([]);
        const r = res.return!;
        expect(r.serviceName).to.equal(`services/${SERVICE}`);
        expect(r.consumerProject).to.equal(CONSUMER);
        expect(r.id).to.equal(`services/${SERVICE}/consumers/${CONSUMER}`);
        expect(r.bindings).to.deep.equal([{ condition: { expression: condition.expression, title: condition.title },
            members: ["serviceAccount:sa@p.iam.gserviceaccount.com"], role: "roles/servicemanagement.serviceController" }]);
        expect(JSON.parse(String(r.policyData)).bindings[0].condition.title).to.equal("until-2030");
    });

    it("gives an unset consumer policy as empty, and domain-scoped project IDs work", async () => {
        const res = await stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: "example.com:my-proj" });
        expect(res.failures).to.deep.equal([]);
        expect(res.return!.policyData).to.equal("{}");
        expect(res.return!.id).to.equal(`services/${SERVICE}/consumers/example.com:my-proj`);
        expect(stack.emu.requests[0].path).to.equal(`/v1/services/${SERVICE}/consumers/example.com%3Amy-proj:getIamPolicy`);
    });

    it("gives byte-equal policyData for policies that differ only in order and duplicates", async () => {
        stack.emu.setPolicy(`services/${SERVICE}`, { bindings: [
            { role: "roles/servicemanagement.reporter", members: ["user:z@example.com", "user:y@example.com"] },
            { role: "roles/servicemanagement.admin", members: ["user:x@example.com"] },
        ] });
        stack.emu.setPolicy("services/other.endpoints.my-project.cloud.goog", { bindings: [
            { role: "roles/servicemanagement.admin", members: ["user:x@example.com", "user:x@example.com"] },
            { role: "roles/servicemanagement.reporter", members: ["user:y@example.com"] },
            { role: "roles/servicemanagement.reporter", members: ["user:z@example.com"] },
        ] });
        const a = await stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        const b = await stack.plugin.invoke(SERVICE_FN, { serviceName: "other.endpoints.my-project.cloud.goog" });
        expect(a.return!.policyData).to.equal(b.return!.policyData);
        expect(a.return!.etag).not.to.equal(b.return!.etag);
        expect(a.return!.policyData).to.equal(policyData({ bindings: [
            { role: "roles/servicemanagement.admin", members: ["user:x@example.com"] },
            { role: "roles/servicemanagement.reporter", members: ["user:y@example.com", "user:z@example.com"] },
        ] }));
    });

    for (const [missingService, code] of [[403, grpc.status.PERMISSION_DENIED], [404, grpc.status.NOT_FOUND]] as const) {
        it(`names the service when it does not exist (API answers ${missingService})`, async () => {
            stack.emu.setBehavior({ missingService });
            const err = await rpcError(stack.plugin.invoke(SERVICE_FN, { serviceName: "missing.endpoints.p.cloud.goog" }))
                .finally(() => stack.emu.setBehavior({ missingService: 403 }));
            expect(err.code).to.equal(code);
            expect(err.details).to.contain('service "missing.endpoints.p.cloud.goog" was not found').and.match(/[Cc]heck serviceName/);
        });
    }

    it("rejects an unknown function token, naming it and the known ones", async () => {
        const err = await rpcError(stack.plugin.invoke("cloud:endpoints/getNope:getNope", {}));
        expect(err.details).to.contain("cloud:endpoints/getNope:getNope").and.contain(SERVICE_FN).and.contain(CONSUMERS_FN);
    });

    it("answers resource RPCs for an undeclared type with a clear unknown resource type", async () => {
        const type = "cloud:endpoints/serviceIamAudit:ServiceIamAudit";
        const err = await rpcError(stack.plugin.call("check", new pb.CheckRequest()
            .setUrn(`urn:pulumi:dev::proj::${type}::p`).setType(type).setNews(Struct.fromJavaScript({}))));
        expect(err.details).to.contain(`unknown resource type "${type}"`).and.contain("cloud:endpoints/serviceIamPolicy:ServiceIamPolicy");
    });

    it("names the full token when a resource type is given in a short form", async () => {
        for (const type of ["cloud:endpoints:ServiceIamMember", "cloud:endpoints/ServiceIamMember", "cloud:endpoints:serviceIamMember"]) {
            const err = await rpcError(stack.plugin.call("check", new pb.CheckRequest()
                .setUrn(`urn:pulumi:dev::proj::${type}::p`).setType(type).setNews(Struct.fromJavaScript({}))));
            expect(err.details, type).to.contain(`unknown resource type "${type}" (use the full token "cloud:endpoints/serviceIamMember:ServiceIamMember")`);
        }
        const fn = await rpcError(stack.plugin.invoke("cloud:endpoints:getServiceIamPolicy", {}));
        expect(fn.details).to.contain(`(use the full token "${SERVICE_FN}")`);
    });

    it("answers a preview lookup whose argument is not known yet with unknowns, sending nothing", async () => {
        const res = await stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: UNKNOWN_VALUE }, true);
        expect(res.failures).to.deep.equal([]);
        expect(res.return).to.deep.include({ serviceName: SERVICE, consumerProject: UNKNOWN_VALUE, policyData: UNKNOWN_VALUE, etag: UNKNOWN_VALUE });
        const outside = await stack.plugin.invoke(SERVICE_FN, { serviceName: UNKNOWN_VALUE });
        expect(outside.failures.map((f) => f.property)).to.deep.equal(["serviceName"]);
        expect(stack.emu.requests).to.have.length(0);
    });

    it("keeps outputs secret when the argument was a secret", async () => {
        const res = await stack.plugin.invoke(SERVICE_FN, { serviceName: { [SECRET_SIG_KEY]: "1b47061264138c4ac30d75fd1eb44270", value: SERVICE } });
        expect(res.failures).to.deep.equal([]);
        const echo = res.return!.serviceName as Record<string, unknown>;
        expect(echo[SECRET_SIG_KEY]).to.equal("1b47061264138c4ac30d75fd1eb44270");
        expect(echo.value).to.equal(SERVICE);
    });

    it("coalesces identical concurrent lookups into one request", async () => {
        stack.emu.setFaults({ latencyMs: 300, minLatencyMs: 300 });
        try {
            const all = await Promise.all(Array.from({ length: 40 }, () => stack.plugin.invoke(SERVICE_FN, { serviceName: SERVICE })));
            expect(new Set(all.map((r) => r.return!.etag)).size).to.equal(1);
            const distinct = await Promise.all(["a-proj-1", "a-proj-2", "a-proj-3"].map((c) =>
                stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: c })));
            expect(distinct.every((r) => r.failures.length === 0)).to.equal(true);
        } finally {
            stack.emu.setFaults({ latencyMs: 0 });
        }
        const paths = stack.emu.requests.map((r) => r.path);
        expect(paths.filter((p) => p === `/v1/services/${SERVICE}:getIamPolicy`)).to.have.length(1);
        expect(paths.filter((p) => p.includes("/consumers/a-proj-"))).to.have.length(3);
    });
});
