// The IAM policy shape of the API, and its canonical form: the one way this package turns a policy into
// `policyData`, so semantically equal policies always give byte-equal strings.

import { memberKey, memberProblem, roleProblem } from "./names";

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
export function canonicalCondition(c: Condition): Condition {
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

// Checking a policy given as data (policyData, getIAMPolicy's inputs): the shape, roles, members and
// conditions, with every problem named by its path.


const LOG_TYPES = ["ADMIN_READ", "DATA_WRITE", "DATA_READ"];
const MAX_POLICY_DATA = 1024 * 1024;

function isRecord(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

function unknownKeys(v: Record<string, unknown>, allowed: string[], where: string): string | undefined {
    const extra = Object.keys(v).find((k) => !allowed.includes(k));
    return extra === undefined ? undefined
        : `${where} has an unknown field ${JSON.stringify(extra)} (allowed: ${allowed.join(", ")})`;
}

/** The problems of one binding (role, members, condition), or undefined. */
export function bindingProblem(b: unknown, where: string): string | undefined {
    if (!isRecord(b)) return `${where} must be an object with role and members`;
    const extra = unknownKeys(b, ["role", "members", "condition"], where);
    if (extra) return extra;
    if (typeof b.role !== "string") return `${where}.role must be a string`;
    const role = roleProblem(b.role);
    if (role) return `${where}.role: ${role}`;
    if (!Array.isArray(b.members) || b.members.length === 0) return `${where}.members must be a non-empty list of members`;
    for (const [i, m] of b.members.entries()) {
        if (typeof m !== "string") return `${where}.members[${i}] must be a string`;
        const problem = memberProblem(m);
        if (problem) return `${where}.members[${i}]: ${problem}`;
    }
    return b.condition === undefined || b.condition === null ? undefined : conditionProblem(b.condition, `${where}.condition`);
}

/** A condition needs a CEL expression and a title (IAM refuses it otherwise). */
export function conditionProblem(c: unknown, where: string): string | undefined {
    if (!isRecord(c)) return `${where} must be an object with expression and title`;
    const extra = unknownKeys(c, ["expression", "title", "description", "location"], where);
    if (extra) return extra;
    if (typeof c.expression !== "string" || c.expression.trim() === "") return `${where}.expression is required (a CEL expression)`;
    if (typeof c.title !== "string" || c.title.trim() === "") return `${where}.title is required`;
    if (c.description !== undefined && typeof c.description !== "string") return `${where}.description must be a string`;
    return undefined;
}

function auditConfigProblem(a: unknown, where: string): string | undefined {
    if (!isRecord(a)) return `${where} must be an object with service and auditLogConfigs`;
    const extra = unknownKeys(a, ["service", "auditLogConfigs"], where);
    if (extra) return extra;
    if (typeof a.service !== "string" || a.service === "") return `${where}.service is required`;
    if (!Array.isArray(a.auditLogConfigs)) return `${where}.auditLogConfigs must be a list`;
    for (const [i, l] of a.auditLogConfigs.entries()) {
        const at = `${where}.auditLogConfigs[${i}]`;
        if (!isRecord(l)) return `${at} must be an object with logType`;
        const more = unknownKeys(l, ["logType", "exemptedMembers"], at);
        if (more) return more;
        if (typeof l.logType !== "string" || !LOG_TYPES.includes(l.logType)) return `${at}.logType must be one of ${LOG_TYPES.join(", ")}`;
        if (l.exemptedMembers !== undefined) {
            if (!Array.isArray(l.exemptedMembers)) return `${at}.exemptedMembers must be a list`;
            const bad = l.exemptedMembers.find((m) => typeof m !== "string" || memberProblem(m));
            if (bad !== undefined) return `${at}.exemptedMembers: ${typeof bad === "string" ? memberProblem(bad) : "members are strings"}`;
        }
    }
    return undefined;
}

/** Checks a parsed policy's shape; returns the first problem, or undefined. */
export function policyProblem(p: unknown): string | undefined {
    if (!isRecord(p)) return "the policy must be a JSON object with `bindings` (and optionally `auditConfigs`)";
    const extra = unknownKeys(p, ["bindings", "auditConfigs", "etag", "version"], "the policy");
    if (extra) return extra;
    if (p.bindings !== undefined && !Array.isArray(p.bindings)) return "bindings must be a list";
    for (const [i, b] of ((p.bindings as unknown[] | undefined) ?? []).entries()) {
        const problem = bindingProblem(b, `bindings[${i}]`);
        if (problem) return problem;
    }
    if (p.auditConfigs !== undefined && !Array.isArray(p.auditConfigs)) return "auditConfigs must be a list";
    for (const [i, a] of ((p.auditConfigs as unknown[] | undefined) ?? []).entries()) {
        const problem = auditConfigProblem(a, `auditConfigs[${i}]`);
        if (problem) return problem;
    }
    return undefined;
}

/** Parses policyData; the problem is written for a person (the text itself is not repeated). */
export function parsePolicyData(text: string): { policy: Policy } | { problem: string } {
    if (text.length > MAX_POLICY_DATA) return { problem: `policyData is ${text.length} bytes; at most ${MAX_POLICY_DATA} are accepted` };
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (e) {
        return { problem: `policyData is not JSON (${e instanceof RangeError ? "nested too deeply" : (e as Error).message}); use the policyData of cloud.organizations.getIAMPolicy` };
    }
    const problem = policyProblem(parsed);
    return problem ? { problem: `policyData: ${problem}` } : { policy: parsed as Policy };
}

/** The form property checks take. */
export function policyDataProblem(text: string): string | undefined {
    const r = parsePolicyData(text);
    return "problem" in r ? r.problem : undefined;
}
