// A policy's canonical form: the one way this package turns a policy into `policyData`, so semantically equal
// policies always give byte-equal strings; and policyData's parsing. The policy's shape is model.ts's.

import { checkProperties } from "../declare/check";
import { Value } from "../declare/properties";
import { AuditConfig, Binding, CanonicalPolicy, Condition, Policy, policyDataProperties } from "./model";
import { memberKey } from "./names";

export type { AuditConfig, AuditLogConfig, Binding, CanonicalPolicy, Condition, Policy } from "./model";

const sortedUnique = (values: readonly string[]): string[] => [...new Set(values)].sort(compare);

function compare(a: string, b: string): number {
    return a < b ? -1 : a > b ? 1 : 0;
}

/** A condition with its keys in canonical order and an empty description dropped. (The API's output-only
 * `location` is not part of a condition's meaning, so it is dropped too.) */
export function canonicalCondition(c: Condition): Condition {
    const { expression, title } = c;
    return c.description ? { description: c.description, expression, title } : { expression, title };
}

function conditionKey(c: Condition | undefined): string {
    return c ? JSON.stringify([c.expression, c.title, c.description ?? ""]) : "";
}

function compareBindings(a: Binding, b: Binding): number {
    if (a.role !== b.role) return compare(a.role, b.role);
    if (!a.condition || !b.condition) return (a.condition ? 1 : 0) - (b.condition ? 1 : 0);
    return compare(a.condition.expression, b.condition.expression)
        || compare(a.condition.title, b.condition.title)
        || compare(a.condition.description ?? "", b.condition.description ?? "");
}

/** Bindings merged by role + condition, members sorted and deduplicated, empty bindings dropped, sorted. */
export function canonicalBindings(bindings: readonly Binding[] | undefined): Binding[] {
    const merged = new Map<string, Binding>();
    for (const b of bindings ?? []) {
        const key = `${b.role}\n${conditionKey(b.condition)}`;
        const prior = merged.get(key);
        if (prior) prior.members.push(...(b.members ?? []));
        else merged.set(key, { role: b.role, members: [...(b.members ?? [])], condition: b.condition });
    }
    const out: Binding[] = [];
    for (const b of merged.values()) {
        const members = sortedUnique(b.members);
        if (members.length === 0) continue;
        // Keys in canonical (alphabetical) order: condition, members, role.
        out.push({ ...(b.condition ? { condition: canonicalCondition(b.condition) } : {}), members, role: b.role });
    }
    return out.sort(compareBindings);
}

/** Audit configs merged by service, log configs merged by log type, exemptions sorted; empty parts dropped. */
export function canonicalAuditConfigs(configs: readonly AuditConfig[] | undefined): AuditConfig[] {
    const byService = new Map<string, Map<string, Set<string>>>();
    for (const c of configs ?? []) {
        const logs = byService.get(c.service) ?? new Map<string, Set<string>>();
        byService.set(c.service, logs);
        for (const l of c.auditLogConfigs ?? []) {
            const exempted = logs.get(l.logType) ?? new Set<string>();
            logs.set(l.logType, exempted);
            for (const m of l.exemptedMembers ?? []) exempted.add(m);
        }
    }
    const out: AuditConfig[] = [];
    for (const service of [...byService.keys()].sort(compare)) {
        const logs = byService.get(service)!;
        if (logs.size === 0) continue;
        const auditLogConfigs = [...logs.keys()].sort(compare).map((logType) => {
            const exemptedMembers = sortedUnique([...logs.get(logType)!]);
            return exemptedMembers.length ? { exemptedMembers, logType } : { logType };
        });
        out.push({ auditLogConfigs, service });
    }
    return out;
}

/** A policy's canonical form once, in the three shapes the outputs need: lists for the structured outputs and
 * the JSON string for policyData. */
export function canonicalParts(policy: Policy): { auditConfigs: AuditConfig[]; bindings: Binding[]; policyData: string } {
    const c = canonicalPolicy(policy);
    return { auditConfigs: c.auditConfigs ?? [], bindings: c.bindings ?? [], policyData: JSON.stringify(c) };
}

/** The canonical form of a policy (etag and version excluded). */
export function canonicalPolicy(policy: Policy): CanonicalPolicy {
    const out: CanonicalPolicy = {};
    const auditConfigs = canonicalAuditConfigs(policy.auditConfigs);
    const bindings = canonicalBindings(policy.bindings);
    if (auditConfigs.length) out.auditConfigs = auditConfigs;
    if (bindings.length) out.bindings = bindings;
    return out;
}

/** `policyData`: the canonical policy as compact JSON. Equal policies give byte-equal strings. */
export function policyData(policy: Policy): string {
    return JSON.stringify(canonicalPolicy(policy));
}

/**
 * policyData with every member as IAM tells members apart (emails in lower case): what a Policy resource
 * compares, so a policy Google stored with its own letter case is the one that was written.
 */
export function comparablePolicyData(policy: Policy): string {
    return policyData({
        bindings: (policy.bindings ?? []).map((b) => ({ ...b, members: (b.members ?? []).map(memberKey) })),
        auditConfigs: (policy.auditConfigs ?? []).map((a) => ({
            ...a,
            auditLogConfigs: (a.auditLogConfigs ?? []).map((l) => (l.exemptedMembers ? { ...l, exemptedMembers: l.exemptedMembers.map(memberKey) } : l)),
        })),
    });
}

/** True when a policy has any conditional binding (it must then be read and written at version 3). */
export function hasConditions(policy: Policy): boolean {
    return (policy.bindings ?? []).some((b) => b.condition !== undefined);
}

// Checking a policy given as data (policyData): the parsed JSON is checked against the policy's declared
// shape (model.ts), with every problem named by its path.

export const MAX_POLICY_DATA = 1024 * 1024;

/** JSON as the protocol's property values hold it: a null member of an object is an absent one. */
function parseJson(text: string): Value | undefined {
    return JSON.parse(text, function (this: unknown, _key: string, value: Value) {
        return value === null && !Array.isArray(this) ? undefined : value;
    }) as Value | undefined;
}

/** Parses policyData; the problem is written for a person (the text itself is not repeated). */
export function parsePolicyData(text: string): { policy: Policy } | { problem: string } {
    if (text.length > MAX_POLICY_DATA) return { problem: `policyData is ${text.length} bytes; at most ${MAX_POLICY_DATA} are accepted` };
    let parsed: Value | undefined;
    try {
        parsed = parseJson(text);
    } catch (e) {
        return { problem: `policyData is not JSON (${e instanceof RangeError ? "nested too deeply" : (e as Error).message}); use the policyData of cloud.organizations.getIAMPolicy` };
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        return { problem: "policyData: the policy must be a JSON object with `bindings` (and optionally `auditConfigs`)" };
    }
    const checked = checkProperties(policyDataProperties, parsed);
    // In a JSON text the engine's unknown-value marker is only a string, and no valid one.
    const problems = [...checked.failures.map((f) => f.reason), ...checked.unknowns.map((p) => `\`${p}\` is the engine's unknown-value marker, not a value`)];
    if (problems.length === 0) return { policy: checked.values };
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
    return { problem: `policyData: ${problems[0]}${more}` };
}

/** The form property checks take. */
export function policyDataProblem(text: string): string | undefined {
    const r = parsePolicyData(text);
    return "problem" in r ? r.problem : undefined;
}
