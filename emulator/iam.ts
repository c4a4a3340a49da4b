// IAM policy rules of the API: what setIamPolicy accepts, how getIamPolicy shows a stored policy at each
// requested version, and what an account deletion does to stored policies. Pure functions over parsed
// request messages (protojson.ts) and the emulator's own rule tables (rules.ts, cel.ts).

import { createHash } from "crypto";
import { expressionProblem } from "./cel";
import { decodeBase64, isMessage, type Message, type Value } from "./protojson";
import {
    BASIC_ROLES, deletedForm, isDeletable, isGroupLike, isMember, LIMITS, LOG_TYPES, PUBLIC_PRINCIPALS, roleProblem,
    storedMember,
} from "./rules";
import type { AuditConfig, AuditLogConfig, Binding, Condition, Policy } from "./types";

/** A policy as stored: checked, members as IAM stores them, never carrying a stale version. */
export interface StoredPolicy {
    bindings: Binding[];
    auditConfigs: AuditConfig[];
    /** Base64 (standard alphabet, padded) of the etag bytes. */
    etag: string;
}

/** The policy of a parent that never had one set. */
export const EMPTY_ETAG = "ACAB";

/** A checked setIamPolicy `policy`. */
export interface PolicyInput {
    version?: number;
    etag?: Buffer;
    bindings: Binding[];
    auditConfigs: AuditConfig[];
}

/** A request IAM refuses: the message, and the request field it concerns (for google.rpc.BadRequest). */
export class PolicyProblem extends Error {
    constructor(message: string, readonly field: string) {
        super(message);
    }
}

/** What the checks need to know of the world: accounts that were deleted cannot be granted. */
export interface Accounts {
    isDeleted(member: string): boolean;
}

/** What a policy is checked against: the accounts, and the resource it is for. */
export interface PolicyContext {
    accounts: Accounts;
    /** The resource's name (`services/S` or `services/S/consumers/P`), as refusals name it. */
    resource: string;
    /** Whether the resource takes conditional role bindings at all. */
    conditionsAllowed: boolean;
}

const POLICY_VERSIONS = new Set([0, 1, 3]);
export const SETTABLE_PATHS: ReadonlySet<string> = new Set(["bindings", "etag", "auditConfigs", "version"]);
const DEFAULT_MASK = ["bindings", "etag"];

// Typed reads of a parsed message; protojson.ts has already checked every field's type.
function str(m: Message, f: string): string | undefined {
    const v = m[f];
    return typeof v === "string" ? v : undefined;
}
function list(m: Message, f: string): Value[] {
    const v = m[f];
    return Array.isArray(v) ? v : [];
}
const strings = (m: Message, f: string): string[] => list(m, f).filter((v): v is string => typeof v === "string");
const messages = (m: Message, f: string): Message[] => list(m, f).filter(isMessage);


function checkMember(member: string, where: string, accounts: Accounts): string {
    if (!isMember(member)) {
        throw new PolicyProblem(`Invalid member ${JSON.stringify(member)}${member.includes(":") ? "" : ": a member needs a type prefix such as user:"}.`, where);
    }
    const stored = storedMember(member);
    if (accounts.isDeleted(stored)) {
        throw new PolicyProblem(`Principal ${member} does not exist (it was deleted); its grants show as deleted:… members.`, where);
    }
    return stored;
}

function checkCondition(raw: Message, where: string): Condition {
    const expression = str(raw, "expression") ?? "";
    const title = str(raw, "title") ?? "";
    if (expression.trim() === "") throw new PolicyProblem("Condition expression is required.", `${where}.expression`);
    if (title.trim() === "") throw new PolicyProblem("Condition title is required.", `${where}.title`);
    const problem = expressionProblem(expression);
    if (problem) throw new PolicyProblem(problem, `${where}.expression`);
    const c: Condition = { expression, title };
    const description = str(raw, "description");
    if (description) c.description = description;
    const location = str(raw, "location");
    if (location) c.location = location;
    return c;
}

function checkBindings(raw: Message[], accounts: Accounts): Binding[] {
    const out: Binding[] = [];
    raw.forEach((b, i) => {
        const where = `policy.bindings[${i}]`;
        const role = str(b, "role") ?? "";
        const problem = role ? roleProblem(role) : "Role is required.";
        if (problem) throw new PolicyProblem(problem, `${where}.role`);
        const members = [...new Set(strings(b, "members").map((m, j) => checkMember(m, `${where}.members[${j}]`, accounts)))];
        const binding: Binding = { role, members };
        if (isMessage(b.condition)) {
            binding.condition = checkCondition(b.condition, `${where}.condition`);
            if (BASIC_ROLES.has(role)) throw new PolicyProblem(`Role ${role} is a basic role and cannot be granted with a condition.`, `${where}.condition`);
            const open = members.find((m) => PUBLIC_PRINCIPALS.has(m));
            if (open) throw new PolicyProblem(`${open} cannot be granted a role with a condition.`, `${where}.members`);
        }
        // IAM drops bindings left without members rather than storing them. Duplicate role entries are kept
        // as written: IAM reads them back that way.
        if (members.length > 0) out.push(binding);
    });
    return out;
}

function checkAuditConfigs(raw: Message[], accounts: Accounts): AuditConfig[] {
    return raw.map((a, i) => {
        const where = `policy.auditConfigs[${i}]`;
        const service = str(a, "service") ?? "";
        if (service === "") throw new PolicyProblem("Audit config service is required (a service name or allServices).", `${where}.service`);
        const auditLogConfigs = messages(a, "auditLogConfigs").map((l, j): AuditLogConfig => {
            const logType = str(l, "logType") ?? "LOG_TYPE_UNSPECIFIED";
            if (!LOG_TYPES.has(logType)) {
                throw new PolicyProblem(`Invalid log type ${logType}: it must be ADMIN_READ, DATA_WRITE or DATA_READ.`, `${where}.auditLogConfigs[${j}].logType`);
            }
            const exempted = strings(l, "exemptedMembers").map((m, k) => checkMember(m, `${where}.auditLogConfigs[${j}].exemptedMembers[${k}]`, accounts));
            return exempted.length ? { logType, exemptedMembers: [...new Set(exempted)] } : { logType };
        });
        return { service, auditLogConfigs };
    });
}

/**
 * A resource that takes no condition refuses a binding for carrying one, whatever the condition says and
 * whatever the policy's version: checked before every other rule of the policy.
 */
function refuseConditions(raw: Message, resource: string): void {
    const i = list(raw, "bindings").findIndex((b) => isMessage(b) && b.condition !== undefined);
    if (i >= 0) {
        throw new PolicyProblem(`Conditional role bindings are not supported for this resource (${resource}): ` +
            "remove the condition from the binding.", `policy.bindings[${i}].condition`);
    }
}

/** Checks the `policy` of a setIamPolicy request (or of a seeded policy). */
export function checkPolicy(raw: Message, { accounts, resource, conditionsAllowed }: PolicyContext): PolicyInput {
    if (!conditionsAllowed) refuseConditions(raw, resource);
    const version = typeof raw.version === "number" ? raw.version : undefined;
    if (version !== undefined && !POLICY_VERSIONS.has(version)) {
        throw new PolicyProblem(`Invalid policy version ${version}: it must be 0, 1 or 3.`, "policy.version");
    }
    const input: PolicyInput = {
        bindings: checkBindings(messages(raw, "bindings"), accounts),
        auditConfigs: checkAuditConfigs(messages(raw, "auditConfigs"), accounts),
    };
    if (version !== undefined) input.version = version;
    if (Buffer.isBuffer(raw.etag) && raw.etag.length > 0) input.etag = raw.etag;
    return input;
}

/** The paths of an updateMask; the default is `bindings,etag`. */
export function checkUpdateMask(paths: string[] | undefined): Set<string> {
    if (!paths || paths.length === 0) return new Set(DEFAULT_MASK);
    for (const p of paths) {
        if (!SETTABLE_PATHS.has(p)) {
            throw new PolicyProblem(`Invalid update_mask path ${JSON.stringify(p)}: the paths of a policy are bindings, etag, audit_configs and version.`, "update_mask");
        }
    }
    return new Set(paths);
}

const hasConditions = (bindings: readonly Binding[]): boolean => bindings.some((b) => b.condition !== undefined);

/** True when `etag` is the same bytes as the stored etag, however it was base64-encoded. */
export function etagMatches(stored: StoredPolicy, etag: Buffer): boolean {
    return decodeBase64(stored.etag)?.equals(etag) ?? false;
}

/**
 * The new stored policy after a set. The mask decides which parts of the request replace the current ones;
 * Policy.version's rules decide whether the request may touch conditional bindings at all; the limits apply
 * to the policy that would result.
 */
export function applySet(current: StoredPolicy, input: PolicyInput, mask: Set<string>, etag: string): StoredPolicy {
    if (mask.has("bindings")) {
        const version = input.version ?? 1;
        if (hasConditions(input.bindings) && version < 3) {
            throw new PolicyProblem(`Policy version ${version} cannot hold conditional role bindings; adding or changing one ` +
                "requires policy version 3.", "policy.version");
        }
        // With an etag, a version-1 write over a conditional policy would remove its conditional bindings:
        // IAM requires version 3 for that. (Without an etag IAM lets it overwrite, and the conditions are lost.)
        if (hasConditions(current.bindings) && version < 3 && input.etag !== undefined) {
            throw new PolicyProblem(`The policy includes conditional role bindings; removing or changing role bindings of ` +
                `it requires policy version 3 (the request has version ${version}).`, "policy.version");
        }
    }
    const next: StoredPolicy = {
        bindings: mask.has("bindings") ? input.bindings : current.bindings,
        auditConfigs: mask.has("auditConfigs") ? input.auditConfigs : current.auditConfigs,
        etag,
    };
    checkLimits(next);
    return next;
}

function checkLimits(policy: StoredPolicy): void {
    const all = [
        ...policy.bindings.flatMap((b) => b.members),
        ...policy.auditConfigs.flatMap((a) => a.auditLogConfigs.flatMap((l) => l.exemptedMembers ?? [])),
    ];
    if (all.length > LIMITS.principals) {
        throw new PolicyProblem(`The number of principals in the policy (${all.length}) is larger than the maximum ` +
            `allowed (${LIMITS.principals}).`, "policy.bindings");
    }
    const groups = all.filter(isGroupLike).length;
    if (groups > LIMITS.groupsAndDomains) {
        throw new PolicyProblem(`The number of Google groups and domains in the policy (${groups}) is larger than the ` +
            `maximum allowed (${LIMITS.groupsAndDomains}).`, "policy.bindings");
    }
    const conditional = new Map<string, number>();
    for (const b of policy.bindings) {
        if (!b.condition) continue;
        for (const m of b.members) {
            const key = `${b.role} ${m}`;
            const n = (conditional.get(key) ?? 0) + 1;
            conditional.set(key, n);
            if (n > LIMITS.conditionalBindingsPerRoleAndPrincipal) {
                throw new PolicyProblem(`More than ${LIMITS.conditionalBindingsPerRoleAndPrincipal} conditional role bindings ` +
                    `grant ${b.role} to ${m}.`, "policy.bindings");
            }
        }
    }
}

/** `<role>_withcond_<20 hex>`: the name IAM gives a conditional binding read below version 3. */
function withcondRole(b: Binding & { condition: Condition }): string {
    const c = b.condition;
    const hash = createHash("sha256")
        .update(JSON.stringify([b.role, c.expression, c.title, c.description ?? "", c.location ?? ""]))
        .digest("hex")
        .slice(0, 20);
    return `${b.role}_withcond_${hash}`;
}

/** The policy as getIamPolicy returns it for a requested version (0, 1 or 3). */
export function viewPolicy(stored: StoredPolicy, requestedVersion: number): Policy {
    const conditional = hasConditions(stored.bindings);
    const out: Policy = { version: conditional && requestedVersion === 3 ? 3 : 1 };
    if (stored.bindings.length) {
        out.bindings = conditional && requestedVersion < 3
            ? stored.bindings.map((b) => (b.condition ? { role: withcondRole({ ...b, condition: b.condition }), members: b.members } : b))
            : stored.bindings;
    }
    if (stored.auditConfigs.length) out.auditConfigs = stored.auditConfigs;
    out.etag = stored.etag;
    return out;
}

/** Rewrites every occurrence of a member (grants and audit exemptions); undefined when nothing changed. */
export function renameMember(stored: StoredPolicy, from: string, to: string, etag: () => string): StoredPolicy | undefined {
    let changed = false;
    const swap = (members: string[]): string[] => members.map((m) => (m === from ? ((changed = true), to) : m));
    const bindings = stored.bindings.map((b) => ({ ...b, members: swap(b.members) }));
    const auditConfigs = stored.auditConfigs.map((a) => ({
        ...a,
        auditLogConfigs: a.auditLogConfigs.map((l) => (l.exemptedMembers ? { ...l, exemptedMembers: swap(l.exemptedMembers) } : l)),
    }));
    return changed ? { bindings, auditConfigs, etag: etag() } : undefined;
}

/** The member an account deletion rewrites, checked; and the `deleted:` form it becomes. */
export function deletion(member: string, uid: string): { member: string; deleted: string } {
    if (!isMember(member) || !isDeletable(member)) {
        throw new Error(`${JSON.stringify(member)} is not a deletable principal (user:, serviceAccount:, group: or a workforce principal://)`);
    }
    const stored = storedMember(member);
    return { member: stored, deleted: deletedForm(stored, uid) };
}
