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

/** Whether any grant of the bindings satisfies `pred`: no keys built (a Delete asks this of policies of thousands). */
export function someGrant(bindings: readonly Binding[] | undefined, pred: (g: Grant) => boolean): boolean {
    for (const b of bindings ?? []) {
        for (const member of b.members ?? []) if (pred({ role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) })) return true;
    }
    return false;
}

/**
 * A members list's identities (memberKey), kept per list: a batch's next change starts from the list the last one
 * made, and every change of a batch is checked against the one written.
 */
const memberSets = new WeakMap<readonly string[], Set<string>>();
export function memberSet(members: readonly string[]): Set<string> {
    let set = memberSets.get(members);
    if (!set) memberSets.set(members, (set = new Set(members.map(memberKey))));
    return set;
}

/** Bindings by role and condition (IAM merges those that share them). */
function byRole(bindings: readonly Binding[] | undefined): Map<string, Binding[]> {
    const out = new Map<string, Binding[]>();
    for (const b of bindings ?? []) {
        const key = roleKey(b.role, b.condition);
        const had = out.get(key);
        if (had) had.push(b);
        else out.set(key, [b]);
    }
    return out;
}

/**
 * The grants the bindings `after` hold that `before` lack, and the other way round, each in grantKey order. Only
 * the roles whose bindings changed are compared, member by member: a change of one grant in a policy of
 * thousands costs one pass over its role.
 */
export function grantChanges(before: readonly Binding[] | undefined, after: readonly Binding[] | undefined): { added: Grant[]; removed: Grant[] } {
    const [was, now] = [byRole(before), byRole(after)];
    const lacking = (from: Map<string, Binding[]>, other: Map<string, Binding[]>): Grant[] => {
        const out = new Map<string, Grant>();
        for (const [key, bs] of from) {
            const others = other.get(key) ?? [];
            if (bs.length === others.length && bs.every((b, i) => b === others[i] || b.members === others[i].members)) continue;
            const there = others.length === 1 ? memberSet(others[0].members ?? []) : new Set(others.flatMap((b) => (b.members ?? []).map(memberKey)));
            for (const b of bs) {
                for (const member of b.members ?? []) {
                    if (there.has(memberKey(member))) continue;
                    const g: Grant = { role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) };
                    out.set(grantKey(g), g);
                }
            }
        }
        return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
    };
    return { added: lacking(now, was), removed: lacking(was, now) };
}

/** The grantKeys of a policy's bindings, kept per bindings list (every record of a batch asks of one answer). */
const keySets = new WeakMap<readonly Binding[], Set<string>>();
export function grantKeysOf(bindings: readonly Binding[] | undefined): Set<string> {
    if (!bindings) return new Set();
    let set = keySets.get(bindings);
    if (!set) keySets.set(bindings, (set = new Set(grantsOf(bindings).map(grantKey))));
    return set;
}

/** The bindings of a policy with only the grants `keep` accepts; bindings left empty are dropped. */
export function keepGrants(policy: Policy, keep: (g: Grant) => boolean): Binding[] {
    return (policy.bindings ?? [])
        .map((b) => ({ ...b, members: (b.members ?? []).filter((member) => keep({ role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) })) }))
        .filter((b) => b.members.length > 0);
}
