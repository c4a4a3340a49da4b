// Google's documented limits through the real plugin and the emulator: the API's rate quota (a call whose turn
// under it would come too late fails at once, saying whose quota and what to do, and refused calls are not
// retried into a storm), and conditional role bindings, which Google does not list Service Management as taking
// (Check warns; Google's refusal is explained). The pacing itself, minute by minute: tests/iam/quota.test.ts and
// `npm run bench -- --only quota`.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { Engine, startEngine, warningsSoFar } from "../support/engine";
import { apiError, call } from "../emulator/http";
import { CONSUMERS_FN, MEMBER, ROLE, rpcError, Stack, startStack, useStack } from "../support/plugin";

const TOKEN = "ya29.limits-test-token";
const SERVICE = "limits.endpoints.my-project.cloud.goog";
const CONDITION = { title: "until-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
/** The emulator's rate quota (calls per rolling minute) in the quota tests. */
const QUOTA = 5;

describe("Google's limits", function () {
    this.timeout(60_000);

    describe("the API's rate quota", () => {
        const stack = useStack(TOKEN, [SERVICE], { emulator: { quotaPerMinute: QUOTA } });
        before(() => stack.configure({ "cloud:config:requestTimeout": "5s" }));

        it("a lookup whose turn under a spent quota comes after requestTimeout fails at once, naming the quota, whose it is and what to do", async () => {
            const consumers = Array.from({ length: 8 }, (_, i) => `consumer-${i}`);
            const started = Date.now();
            const results = await Promise.all(consumers.map((c) =>
                stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: c }).then(() => undefined, (e: grpc.ServiceError) => e)));
            const failed = results.filter((r): r is grpc.ServiceError => r !== undefined);
            expect(results.length - failed.length, "lookups within the quota").to.equal(QUOTA);
            expect(failed).to.have.length(consumers.length - QUOTA);
            // What the emulator answered: QUOTA reads, then its 429 for each call past the quota.
            const statuses = stack.emu.requests.filter((r) => r.path.endsWith(":getIamPolicy")).map((r) => r.status).sort();
            expect(statuses, "the emulator's answers").to.deep.equal([...Array(QUOTA).fill(200), ...Array(consumers.length - QUOTA).fill(429)]);
            for (const e of failed) {
                expect(e.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
                // The limit the emulator's 429 named (its quota_limit_value), not one the plugin assumes.
                expect(e.details).to.match(new RegExp(`rate quota of projects/\\S+ is spent \\(${QUOTA} requests per minute`))
                    .and.contain("after the request timeout").and.contain("Raise cloud:requestTimeout")
                    .and.contain("pulumi up --parallel N").and.contain("servicemanagement.googleapis.com/quotas");
            }
            // Each refused lookup was refused once: the plugin waits for room instead of retrying into the quota.
            expect(stack.emu.quotaRefusals).to.equal(consumers.length - QUOTA);
            expect(Date.now() - started, "failing at once, not at the deadline").to.be.lessThan(4000);
        });
    });

    describe("conditional role bindings", () => {
        let engine: Engine;
        let stack: Stack;
        before(async () => {
            engine = await startEngine();
            stack = await startStack(TOKEN, [SERVICE], { engine: engine.address });
        });
        after(async () => {
            await stack?.stop();
            engine?.close();
        });
        const warningsOn = (name: string) => warningsSoFar(stack.plugin, engine, SERVICE, name);

        it("Check warns of a condition on these resources, and does not fail", async () => {
            const checked = await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:a@example.com", condition: CONDITION }, {}, "conditional");
            expect(checked.failures).to.deep.equal([]);
            const warnings = await warningsOn("conditional");
            expect(warnings).to.have.length(1);
            expect(warnings[0]).to.contain(`declares a conditional role binding on services/${SERVICE}`)
                .and.contain("not among the services Google lists as allowing conditional role bindings")
                .and.contain("grant it on the project with that condition instead");
            await stack.plugin.check(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:b@example.com" }, {}, "plain");
            expect(await warningsOn("plain")).to.deep.equal([]);
        });

        it("Google's refusal of a conditional binding says why and what to do instead, and nothing is written", async () => {
            const before = stack.emu.getPolicy(`services/${SERVICE}`);
            // Google's own refusal of such a policy, asked of the emulator directly: its reason.
            const direct = await call("POST", `${stack.emu.url}services/${SERVICE}:setIamPolicy`, { token: TOKEN, body: {
                policy: { version: 3, bindings: [{ role: ROLE, members: ["user:a@example.com"], condition: CONDITION }] },
            } });
            expect(direct.status).to.equal(400);
            const reason = apiError(direct).message;
            expect(reason).to.contain("Conditional role bindings are not supported");
            stack.emu.resetRequests();
            const e = await rpcError(stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:a@example.com", condition: CONDITION }));
            // The plugin sent the write, the emulator refused it, and the error is built on that answer.
            const writes = stack.emu.requests.filter((r) => r.path.endsWith(":setIamPolicy")).map((r) => r.status);
            expect(writes, "the emulator's answers to the plugin's writes").to.deep.equal([400]);
            expect(e.code).to.equal(grpc.status.INVALID_ARGUMENT);
            expect(e.details).to.contain(`Google refused the policy of services/${SERVICE} for its conditional role bindings (HTTP 400 INVALID_ARGUMENT: ${reason})`)
                .and.contain("grant it on the project with that condition instead");
            expect(stack.emu.getPolicy(`services/${SERVICE}`)).to.deep.equal(before);
        });
    });
});
