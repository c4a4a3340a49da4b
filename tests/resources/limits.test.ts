// Google's documented limits through the real plugin and the emulator: the API's rate quota (a call whose turn
// under it would come too late fails at once, saying whose quota and what to do, and refused calls are not
// retried into a storm), and conditional role bindings, which Google does not list Service Management as taking
// (Check warns; Google's refusal is explained). The pacing itself, minute by minute: tests/iam/quota.test.ts and
// `npm run bench -- --only quota`.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { Engine, startEngine, warningsSoFar } from "../support/engine";
import { CONSUMERS_FN, MEMBER, ROLE, rpcError, Stack, startStack, useStack } from "../support/plugin";

const TOKEN = "ya29.limits-test-token";
const SERVICE = "limits.endpoints.my-project.cloud.goog";
const CONDITION = { title: "until-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };

describe("Google's limits", function () {
    this.timeout(60_000);

    describe("the API's rate quota", () => {
        const stack = useStack(TOKEN, [SERVICE], { emulator: { quotaPerMinute: 5 } });
        before(() => stack.configure({ "cloud:config:requestTimeout": "5s" }));

        it("a lookup whose turn under a spent quota comes after requestTimeout fails at once, naming the quota, whose it is and what to do", async () => {
            const consumers = Array.from({ length: 8 }, (_, i) => `consumer-${i}`);
            const started = Date.now();
            const results = await Promise.all(consumers.map((c) =>
                stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: c }).then(() => undefined, (e: grpc.ServiceError) => e)));
            const failed = results.filter((r): r is grpc.ServiceError => r !== undefined);
            expect(results.length - failed.length, "lookups within the quota").to.equal(5);
            expect(failed).to.have.length(3);
            for (const e of failed) {
                expect(e.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
                expect(e.details).to.match(/rate quota of projects\/\S+ is spent \(5 requests per minute/)
                    .and.contain("after the request timeout").and.contain("Raise cloud:requestTimeout")
                    .and.contain("pulumi up --parallel N").and.contain("servicemanagement.googleapis.com/quotas");
            }
            // Each refused lookup was refused once: the plugin waits for room instead of retrying into the quota.
            expect(stack.emu.quotaRefusals).to.equal(3);
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
            const e = await rpcError(stack.plugin.create(MEMBER, { serviceName: SERVICE, role: ROLE, member: "user:a@example.com", condition: CONDITION }));
            expect(e.code).to.equal(grpc.status.INVALID_ARGUMENT);
            expect(e.details).to.contain(`Google refused the policy of services/${SERVICE} for its conditional role bindings (HTTP 400 INVALID_ARGUMENT`)
                .and.contain("grant it on the project with that condition instead");
            expect(stack.emu.getPolicy(`services/${SERVICE}`)).to.deep.equal(before);
        });
    });
});
