// The IAM policy shape of the API, and its canonical form: the one way this package turns a policy into
// `policyData`, so semantically equal policies always give byte-equal strings.

export interface Condition {
    expression: string;
    title: string;
    description?: string;
}

export interface Binding {
    role: string;
    members: string[];
    condition?: Condition;
}

export interface AuditLogConfig {
    logType: string;
    exemptedMembers?: string[];
}

export interface AuditConfig {
    service: string;
    auditLogConfigs: AuditLogConfig[];
}

/** A policy as the API sends and takes it. */
export interface Policy {
    version?: number;
    etag?: string;
    bindings?: Binding[];
    auditConfigs?: AuditConfig[];
}

/** The canonical policy: no etag or version, merged, sorted, deduplicated, empty parts dropped. */
export interface CanonicalPolicy {
    auditConfigs?: AuditConfig[];
    bindings?: Binding[];
}

const sortedUnique = (values: readonly string[]): string[] => [...new Set(values)].sort(compare);

function compare(a: string, b: string): number {
    return a < b ? -1 : a > b ? 1 : 0;
}

/** A condition with its keys in canonical order and an empty description dropped. (The API's output-only
 * `location` is not part of a condition's meaning, so it is dropped too.) */
function canonicalCondition(c: Condition): Condition {
    const out: Condition = {} as Condition;
    if (c.description) out.description = c.description;
    out.expression = c.expression;
    out.title = c.title;
    return out;
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
        const binding = {} as Binding;
        if (b.condition) binding.condition = canonicalCondition(b.condition);
        binding.members = members;
        binding.role = b.role;
        out.push(binding);
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

/** True when a policy has any conditional binding (it must then be read and written at version 3). */
export function hasConditions(policy: Policy): boolean {
    return (policy.bindings ?? []).some((b) => b.condition !== undefined);
}
