// A policy seen as what a security reviewer reads: a set of grants, each one (role, member, condition). Two
// grants are the same when IAM would treat them so (members compared as IAM compares them, conditions by
// meaning). Used to say which grants a change adds and removes, and which resources declare the same grant.

import { Binding, canonicalCondition, Condition, Policy } from "./policy";
import { memberKey } from "./names";

export interface Grant {
    role: string;
    /** As written (the first spelling seen); compared through memberKey. */
    member: string;
    condition?: Condition;
}

/** The identity of a grant: equal exactly when IAM would hold them as one. */
export function grantKey(g: Grant): string {
    return JSON.stringify([g.role, memberKey(g.member), g.condition ? canonicalCondition(g.condition) : null]);
}

/** The identity of a role under a condition: what a Binding resource is authoritative for. */
export function roleKey(role: string, condition: Condition | undefined): string {
    return JSON.stringify([role, condition ? canonicalCondition(condition) : null]);
}

/**
 * `roles/x user:a@b.c`, with ` [if <title>]` for a conditional grant: one line a person can read (also a key of
 * a detailed diff's path, hence no quotes or brackets from the title).
 */
export function describeGrant(g: Grant): string {
    return `${g.role} ${g.member}${g.condition ? ` [if ${g.condition.title.replace(/["[\]\\]/g, "")}]` : ""}`;
}

/** The grants of some bindings, one per identity, in a stable order. */
export function grantsOf(bindings: readonly Binding[] | undefined): Grant[] {
    const out = new Map<string, Grant>();
    for (const b of bindings ?? []) {
        for (const member of b.members ?? []) {
            const g: Grant = { role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) };
            const key = grantKey(g);
            if (!out.has(key)) out.set(key, g);
        }
    }
    return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}

/** The grants `after` has that `before` lacks, and the other way round. */
export function changesBetween(before: readonly Grant[], after: readonly Grant[]): { added: Grant[]; removed: Grant[] } {
    const had = new Set(before.map(grantKey));
    const has = new Set(after.map(grantKey));
    return { added: after.filter((g) => !had.has(grantKey(g))), removed: before.filter((g) => !has.has(grantKey(g))) };
}

/** The bindings of a policy with only the grants `keep` accepts; bindings left empty are dropped. */
export function keepGrants(policy: Policy, keep: (g: Grant) => boolean): Binding[] {
    return (policy.bindings ?? [])
        .map((b) => ({ ...b, members: (b.members ?? []).filter((member) => keep({ role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) })) }))
        .filter((b) => b.members.length > 0);
}
