// What a Binding and a Member share: the role, the optional condition, how a policy's binding is matched to
// them, their IDs, and how a change to their members is shown (members[i], not positions).

import { property, types } from "../define";
import { memberKey, Parent, parentName, roleProblem } from "../iam/names";
import { conditionType } from "../iam/model";
import { Binding, canonicalCondition, Condition } from "../iam/policy";
import { KEEPS, ParentKind, parentProperties } from "./parent";
import { typeToken } from "../tokens";
import { PathChange } from "./resource";

/** The condition type of a resource, under the token Pulumi GCP gives it (`<Resource>Condition`). */
export const resourceConditionType = (resource: string) =>
    conditionType(typeToken("endpoints", `${resource}Condition`), "grant");

/** A condition compared by meaning; null for none (for Diff and for matching a resource's own grant). */
export function conditionOf(c: Condition | undefined): Condition | null {
    return c ? canonicalCondition(c) : null;
}

/** Whether a binding is the one a resource owns: same role, same condition (by title only for an import). */
export function sameGrant(b: Binding, role: string, condition: Condition | undefined): boolean {
    if (b.role !== role) return false;
    if (!condition || !b.condition) return !condition && !b.condition;
    if (condition.expression === "") return b.condition.title === condition.title;
    return JSON.stringify(conditionOf(b.condition)) === JSON.stringify(conditionOf(condition));
}

export function withoutGrant(bindings: Binding[] | undefined, role: string, condition: Condition | undefined): Binding[] {
    return (bindings ?? []).filter((b) => !sameGrant(b, role, condition));
}

/** Members as IAM tells them apart, sorted and deduplicated: what Diff and confirmation compare. */
export function memberKeys(members: readonly string[]): string[] {
    return [...new Set(members.map(memberKey))].sort();
}

/** The members two lists differ by (as IAM compares them), as `members[i]` lines: i in the new list for an added one, in the old for a removed one. */
export function memberChanges(before: readonly string[], after: readonly string[]): PathChange[] {
    const lines = (from: readonly string[], other: readonly string[], kind: PathChange["kind"]) => {
        const there = new Set(other.map(memberKey));
        const seen = new Set<string>();
        return from.flatMap((m, i) => {
            const key = memberKey(m);
            if (there.has(key) || seen.has(key)) return [];
            seen.add(key);
            return [{ path: `members[${i}]`, kind }];
        });
    };
    return [...lines(after, before, "add"), ...lines(before, after, "delete")];
}

/** `<parent> <role>[ <member>][ <condition title>]`: Terraform's IDs for bindings and members. */
export function grantId(parent: Parent, parts: (string | undefined)[]): string {
    return [parentName(parent), ...parts.filter((p): p is string => p !== undefined && p !== "")].join(" ");
}


/** What a Binding and a Member share: the parent, the role, and an optional condition (each replaces). */
export function grantProperties(kind: ParentKind, resource: string, conditionMeaning: string) {
    const parent = parentProperties();
    return {
        condition: property(resourceConditionType(resource), `An IAM condition: ${conditionMeaning}.`, { replaceOnChanges: true }),
        ...(kind === "consumer" ? { consumerProject: parent.consumerProject } : {}),
        role: property(types.string, "The role granted, e.g. `roles/servicemanagement.serviceConsumer`.", {
            required: true, replaceOnChanges: true, check: roleProblem,
        }),
        serviceName: parent.serviceName,
    };
}


export const CONDITION_TITLE = "expires-2030";

export const NOT_WITH_POLICY = `${KEEPS} Do not combine it with the Policy resource of the same parent, which owns the whole ` +
    "policy and would remove this grant on every update (the plugin warns).";

