// The warning of a Delete that leaves grants another resource of the stack declares (resources/parent.ts): said as
// certain where the journal knows that resource holds the grant, as what may be where only a run that may have been a
// preview saw it there (journal/journal.ts, `preview-holds-nothing`).

import { expect } from "chai";
import { keptGrants } from "../../provider/resources/parent";
import type { Kept } from "../../provider/resources/resource";

const BINDING = "urn:pulumi:dev::p::cloud:endpoints/serviceIamBinding:ServiceIamBinding::b";
const MEMBER = "urn:pulumi:dev::p::cloud:endpoints/serviceIamMember:ServiceIamMember::m";
const PARENT = "services/s.endpoints.p.cloud.goog";
const grant = (member: string) => ({ role: "roles/viewer", member });

/** The warnings a Delete of the Member says, the Binding declaring `declared`, of which `maybe` only may be. */
function warningsOf(declared: string[], maybe: string[], leaves: string[]): string[] {
    const warnings: string[] = [];
    const keyOf = (m: string) => JSON.stringify(["roles/viewer", m, null]);
    const kept: Kept = {
        declaredBy: (key) => (declared.some((m) => keyOf(m) === key) ? BINDING : undefined),
        maybe: (key) => maybe.some((m) => keyOf(m) === key),
    };
    const k = keptGrants({ urn: MEMBER, kept: () => kept, warn: (w) => warnings.push(w) }, PARENT);
    for (const m of leaves) k.keeps(grant(m));
    k.report();
    return warnings;
}

describe("a Delete's warning of the grants it left", () => {
    it("says the stack still declares a grant the journal knows another resource holds", () => {
        const [w] = warningsOf(["user:ann@example.com"], [], ["user:ann@example.com"]);
        expect(w).to.match(/because the stack still declares it:\n  roles\/viewer user:ann@example.com: declared by .*ServiceIamBinding::b$/);
    });

    it("says the stack may still declare one only a run that may have been a preview saw held, and what to do if not", () => {
        const [w] = warningsOf(["user:ann@example.com"], ["user:ann@example.com"], ["user:ann@example.com"]);
        expect(w).to.match(/because the stack may still declare it:\n  roles\/viewer user:ann@example.com: may be declared by .*ServiceIamBinding::b \(only a run that may have been a preview saw its state hold it: if that resource is no longer in the stack, remove the grant by hand\)$/);
    });

    it("says each grant as it is known, and the stack still declares them where one is certain", () => {
        const [w] = warningsOf(["user:ann@example.com", "user:bob@example.com"], ["user:bob@example.com"], ["user:ann@example.com", "user:bob@example.com"]);
        expect(w).to.match(/^deleted, but left 2 grants on services\/s.endpoints.p.cloud.goog in place, because the stack still declares them:/);
        expect(w).to.match(/user:ann@example.com: declared by /);
        expect(w).to.match(/user:bob@example.com: may be declared by /);
    });
});
