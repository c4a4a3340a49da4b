// The canonical form: property tests over random policies (fast-check), plus the exact bytes; and policyData
// checked against the declared policy shape.

import { expect } from "chai";
import fc from "fast-check";
import { Binding, canonicalPolicy, parsePolicyData, Policy, policyData } from "../../provider/iam/policy";

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

describe("policyData checking", () => {
    const problem = (data: unknown) => {
        const r = parsePolicyData(typeof data === "string" ? data : JSON.stringify(data));
        return "problem" in r ? r.problem : undefined;
    };
    const grant = { role: "roles/viewer", members: ["user:a@example.com"] };

    it("accepts a lookup's policy fed back in, etag and version included, and gives the policy typed", () => {
        const policy: Policy = {
            etag: "BwXyz", version: 3,
            bindings: [{ ...grant, condition: { expression: "true", title: "t", description: "d" } }],
            auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:b@example.com"] }] }],
        };
        expect(parsePolicyData(JSON.stringify(policy))).to.deep.equal({ policy });
        expect(problem(policyData(policy))).to.equal(undefined);
        expect(problem("{}")).to.equal(undefined);
        // A null field is an absent one, as in the protocol's property values.
        expect(parsePolicyData('{"bindings":[{"role":"roles/viewer","members":["user:a@example.com"],"condition":null}],"etag":null}'))
            .to.deep.equal({ policy: { bindings: [grant] } });
    });

    it("names each problem by its path and the rule it broke, counting the others", () => {
        const cases: [unknown, RegExp][] = [
            [{ bindings: [grant, { role: "viewer", members: ["user:a@example.com"] }] }, /^policyData: `bindings\[1\]\.role`: .*not a valid role/],
            [{ bindings: [{ role: "roles/viewer", members: [] }] }, /^policyData: `bindings\[0\]\.members`: give at least one member$/],
            [{ bindings: [{ role: "roles/viewer", members: "user:a@example.com" }] }, /`bindings\[0\]\.members` must be a list of strings, but a string was given/],
            [{ bindings: [{ ...grant, condition: { expression: "true", title: "t", location: "x" } }] }, /`bindings\[0\]\.condition\.location` is not a known property/],
            [{ bindings: [{ ...grant, condition: { expression: " ", title: "t" } }] }, /`bindings\[0\]\.condition\.expression`: give a CEL expression/],
            [{ auditConfigs: [{ service: "", auditLogConfigs: [] }] }, /`auditConfigs\[0\]\.service`: give a service name/],
            [{ auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "ALL" }] }] }, /`auditConfigs\[0\]\.auditLogConfigs\[0\]\.logType`: "ALL" is not ADMIN_READ, DATA_WRITE or DATA_READ/],
            [{ auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["bob"] }] }] }, /`auditConfigs\[0\]\.auditLogConfigs\[0\]\.exemptedMembers`: .*not a valid member/],
            [{ auditConfigs: [{ service: "allServices" }] }, /`auditConfigs\[0\]\.auditLogConfigs` is required/],
            [{ version: "3" }, /`version` must be an integer, but a string was given/],
            [{ bindings: [{ role: "04da6b54-80e4-46f7-96ec-b56ff0331ba9", members: ["user:a@example.com"] }] }, /`bindings\[0\]\.role` is the engine's unknown-value marker/],
            [{ bindings: [{ role: "viewer", members: ["a"] }], bogus: 1 }, /^policyData: `bogus` is not a known property.* \(and 2 more problems\)$/],
            ["null", /must be a JSON object/],
        ];
        for (const [data, rule] of cases) expect(problem(data), JSON.stringify(data)).to.match(rule);
    });
});
