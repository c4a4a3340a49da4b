// Google's limit of 1,500 principals per IAM policy (and 250 groups and domains among them): a Binding or Policy
// that declares more fails at Check, naming the property, the count and what to do, instead of previewing cleanly
// and failing at `up` with Google's 400. At the limit, the write goes through (the emulator enforces the same
// limits as Google: tests/emulator/google.test.ts).

import { expect } from "chai";
import { BINDING, POLICY, useStack } from "../support/plugin";

const SERVICE = "limit.endpoints.my-project.cloud.goog";
const ROLE = "roles/servicemanagement.serviceConsumer";
const users = (k: number, prefix = "user:u") => Array.from({ length: k }, (_, i) => `${prefix}${i}@example.com`);
const policyData = (bindings: { role: string; members: string[] }[], exempted: string[] = []) => JSON.stringify({
    bindings, ...(exempted.length ? { auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: exempted }] }] } : {}),
});

describe("1,500 principals per policy, checked at Check", function () {
    this.timeout(60_000);
    const stack = useStack("ya29.principal-limit-token", [SERVICE]);

    it("a Binding of 1,501 members fails on `members`, with the count, the limit and what to do", async () => {
        const r = await stack.plugin.check(BINDING, { serviceName: SERVICE, role: ROLE, members: users(1501) });
        expect(r.failures).to.have.length(1);
        expect(r.failures[0].property).to.equal("members");
        expect(r.failures[0].reason).to.contain("`members` names 1,501 principals").and.contain("at most 1,500")
            .and.contain("400 INVALID_ARGUMENT").and.contain("Google groups");
    });

    it("duplicates (as IAM compares members) count once", async () => {
        const r = await stack.plugin.check(BINDING, { serviceName: SERVICE, role: ROLE, members: [...users(1500), "user:U0@example.com"] });
        expect(r.failures).to.deep.equal([]);
    });

    it("a Binding of 251 groups and domains fails, naming that limit", async () => {
        const r = await stack.plugin.check(BINDING, { serviceName: SERVICE, role: ROLE, members: [...users(250, "group:g"), "domain:example.org"] });
        expect(r.failures.map((f) => f.property)).to.deep.equal(["members"]);
        expect(r.failures[0].reason).to.contain("251 Google groups and domains").and.contain("at most 250");
    });

    it("a Policy counts every binding's members and every audit exemption: 1,501 fails on `policyData`", async () => {
        const over = policyData([{ role: ROLE, members: users(1400) }, { role: "roles/viewer", members: users(100) }], ["user:x@example.com"]);
        const r = await stack.plugin.check(POLICY, { serviceName: SERVICE, policyData: over });
        expect(r.failures.map((f) => f.property)).to.deep.equal(["policyData"]);
        expect(r.failures[0].reason).to.contain("`policyData` names 1,501 principals").and.contain("Google groups");
    });

    it("at the limit a Binding checks clean and is written (Google, and the emulator, take 1,500)", async () => {
        const inputs = { serviceName: SERVICE, role: ROLE, members: users(1500) };
        expect((await stack.plugin.check(BINDING, inputs)).failures).to.deep.equal([]);
        await stack.plugin.create(BINDING, inputs);
        expect(stack.emu.getPolicy(`services/${SERVICE}`).bindings?.[0]?.members).to.have.length(1500);
    });
});
