// The canonical form: property tests over random policies (fast-check), plus the exact bytes.

import { expect } from "chai";
import fc from "fast-check";
import { Binding, canonicalPolicy, Policy, policyData } from "../../provider/iam/policy";

const member = fc.constantFrom("user:a@example.com", "user:b@example.com", "group:g@example.com",
    "serviceAccount:s@p.iam.gserviceaccount.com", "allUsers", "domain:example.com");
const role = fc.constantFrom("roles/viewer", "roles/editor", "roles/servicemanagement.serviceConsumer", "projects/p/roles/custom");
const condition = fc.option(fc.record({
    expression: fc.constantFrom("request.time < timestamp(\"2030-01-01T00:00:00Z\")", "resource.name.startsWith(\"x\")"),
    title: fc.constantFrom("t1", "t2"),
    description: fc.option(fc.constantFrom("d1", "d2", ""), { nil: undefined }),
}, { requiredKeys: ["expression", "title"] }), { nil: undefined });
const binding: fc.Arbitrary<Binding> = fc.record({ role, members: fc.array(member, { maxLength: 5 }), condition })
    .map((b) => (b.condition ? b : { role: b.role, members: b.members }));
const auditConfig = fc.record({
    service: fc.constantFrom("allServices", "storage.googleapis.com"),
    auditLogConfigs: fc.array(fc.record({
        logType: fc.constantFrom("ADMIN_READ", "DATA_READ", "DATA_WRITE"),
        exemptedMembers: fc.option(fc.array(member, { maxLength: 3 }), { nil: undefined }),
    }), { maxLength: 3 }),
});
const policy: fc.Arbitrary<Policy> = fc.record({
    bindings: fc.array(binding, { maxLength: 8 }),
    auditConfigs: fc.array(auditConfig, { maxLength: 3 }),
    etag: fc.base64String(),
    version: fc.constantFrom(1, 3),
});

/** A semantically equal policy: order shuffled, bindings split and duplicated, etag and version changed. */
function scramble(p: Policy, seed: number): Policy {
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % Math.max(n, 1);
    const shuffle = <T>(xs: T[]) => xs.map((x) => [rnd(1000), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
    const bindings = shuffle((p.bindings ?? []).flatMap((b) =>
        b.members.length > 1 ? [{ ...b, members: shuffle(b.members.slice(1)) }, { ...b, members: [b.members[0], b.members[0]] }] : [b]));
    return { bindings, auditConfigs: shuffle([...(p.auditConfigs ?? [])]), etag: "other", version: 3 };
}

describe("canonical policy form", () => {
    it("gives byte-equal policyData for semantically equal policies", () => {
        fc.assert(fc.property(policy, fc.integer({ min: 1, max: 1e6 }), (p, seed) => {
            expect(policyData(scramble(p, seed))).to.equal(policyData(p));
        }), { numRuns: 500 });
    });

    it("is idempotent, and keeps every grant", () => {
        fc.assert(fc.property(policy, (p) => {
            const once = canonicalPolicy(p);
            expect(policyData(once)).to.equal(policyData(p));
            const grants = (q: Policy) => new Set((q.bindings ?? []).flatMap((b) => b.members.map((m) => `${b.role} ${JSON.stringify(b.condition?.expression)} ${m}`)));
            expect([...grants(once)].sort()).to.deep.equal([...grants(p)].sort());
        }), { numRuns: 300 });
    });

    it("tells different policies apart", () => {
        const a = policyData({ bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }] });
        const b = policyData({ bindings: [{ role: "roles/viewer", members: ["user:b@example.com"] }] });
        const c = policyData({ bindings: [{ role: "roles/viewer", members: ["user:a@example.com"], condition: { expression: "true", title: "t" } }] });
        expect(new Set([a, b, c]).size).to.equal(3);
    });

    it("has a fixed key order and drops etag, version and empty parts", () => {
        expect(policyData({
            version: 3,
            etag: "BwXyz",
            bindings: [
                { role: "roles/z", members: [] },
                { role: "roles/a", members: ["user:b@example.com", "user:a@example.com"], condition: { title: "t", expression: "e", description: "" } },
                { role: "roles/a", members: ["user:c@example.com"] },
            ],
            auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: [] }] }, { service: "x", auditLogConfigs: [] }],
        })).to.equal('{"auditConfigs":[{"auditLogConfigs":[{"logType":"DATA_READ"}],"service":"allServices"}],' +
            '"bindings":[{"members":["user:c@example.com"],"role":"roles/a"},' +
            '{"condition":{"expression":"e","title":"t"},"members":["user:a@example.com","user:b@example.com"],"role":"roles/a"}]}');
        expect(policyData({ etag: "ACAB", version: 1 })).to.equal("{}");
    });
});
