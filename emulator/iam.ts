// IAM policy rules of the API: what setIamPolicy accepts, and how getIamPolicy shows a stored policy at each
// requested version. Pure functions, so the HTTP layer and the seeding API share one definition.

import { createHash } from "crypto";
import { isValidMember, isValidRole, MEMBER_FORMS, ROLE_FORMS } from "../provider/iam/names";
import { hasConditions, type AuditConfig, type Binding, type Condition, type Policy } from "../provider/iam/policy";

/** A policy as stored: validated, normalized, never carrying a stale version. */
export interface StoredPolicy {
    bindings: Binding[];
    auditConfigs: AuditConfig[];
    etag: string;
}

/** The policy of a parent that never had one set. */
export const EMPTY_ETAG = "ACAB";

/** A validated setIamPolicy `policy`. */
export interface PolicyInput {
    version?: number;
    etag?: string;
    bindings: Binding[];
    auditConfigs: AuditConfig[];
}

/** The API's condition also has an optional `location`; kept whatever the shared type declares. */
type ApiCondition = Condition & { location?: string };

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const LOG_TYPES = new Set(["ADMIN_READ", "DATA_WRITE", "DATA_READ"]);
const POLICY_VERSIONS = new Set([0, 1, 3]);

function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

function checkCondition(raw: unknown, where: string): Checked<Condition> {
    if (!isObject(raw)) return fail(`${where}: condition must be an object.`);
    const { expression, title, description, location } = raw;
    if (typeof expression !== "string" || expression.trim() === "") {
        return fail(`${where}: condition.expression is required.`);
    }
    if (typeof title !== "string" || title.trim() === "") return fail(`${where}: condition.title is required.`);
    const c: ApiCondition = { expression, title };
    if (description !== undefined) {
        if (typeof description !== "string") return fail(`${where}: condition.description must be a string.`);
        if (description) c.description = description;
    }
    if (location !== undefined) {
        if (typeof location !== "string") return fail(`${where}: condition.location must be a string.`);
        if (location) c.location = location;
    }
    return ok(c);
}

function checkBindings(raw: unknown): Checked<Binding[]> {
    if (raw === undefined || raw === null) return ok([]);
    if (!Array.isArray(raw)) return fail("policy.bindings must be a list.");
    const out: Binding[] = [];
    for (let i = 0; i < raw.length; i++) {
        const b: unknown = raw[i];
        const where = `policy.bindings[${i}]`;
        if (!isObject(b)) return fail(`${where} must be an object.`);
        if (typeof b.role !== "string" || !isValidRole(b.role)) {
            return fail(`${where}: role ${JSON.stringify(b.role ?? "")} is not valid; ${ROLE_FORMS}.`);
        }
        // A `_withcond_` role only comes from reading a conditional policy below version 3; writing it back
        // would silently strip the conditions, which IAM refuses.
        if (b.role.includes("_withcond_")) {
            return fail(`${where}: role ${b.role} is not a real role: it is how a conditional binding reads at ` +
                "policy version 1. Read the policy with requestedPolicyVersion 3 and write it back at version 3.");
        }
        const members = b.members ?? [];
        if (!Array.isArray(members)) return fail(`${where}.members must be a list.`);
        for (const m of members) {
            if (typeof m !== "string" || m.length === 0) return fail(`${where}: members must be non-empty strings.`);
            if (!isValidMember(m, { allowDeleted: true })) {
                return fail(`${where}: invalid member ${JSON.stringify(m)} for role ${b.role}; ${MEMBER_FORMS}.`);
            }
        }
        const binding: Binding = { role: b.role, members: [...new Set(members as string[])] };
        if (b.condition !== undefined && b.condition !== null) {
            const c = checkCondition(b.condition, where);
            if (!c.ok) return c;
            binding.condition = c.value;
        }
        // IAM drops bindings left without members rather than storing them.
        if (binding.members.length > 0) out.push(binding);
    }
    return ok(out);
}

function checkAuditConfigs(raw: unknown): Checked<AuditConfig[]> {
    if (raw === undefined || raw === null) return ok([]);
    if (!Array.isArray(raw)) return fail("policy.auditConfigs must be a list.");
    const out: AuditConfig[] = [];
    for (let i = 0; i < raw.length; i++) {
        const a: unknown = raw[i];
        const where = `policy.auditConfigs[${i}]`;
        if (!isObject(a)) return fail(`${where} must be an object.`);
        if (typeof a.service !== "string" || a.service === "") return fail(`${where}.service is required.`);
        const logs = a.auditLogConfigs ?? [];
        if (!Array.isArray(logs)) return fail(`${where}.auditLogConfigs must be a list.`);
        const auditLogConfigs = [];
        for (const l of logs) {
            if (!isObject(l) || typeof l.logType !== "string" || !LOG_TYPES.has(l.logType)) {
                return fail(`${where}: logType must be one of ADMIN_READ, DATA_WRITE, DATA_READ.`);
            }
            const exempted = l.exemptedMembers ?? [];
            if (!Array.isArray(exempted) || !exempted.every((m) => typeof m === "string" && isValidMember(m))) {
                return fail(`${where}: exemptedMembers must be a list of valid members.`);
            }
            auditLogConfigs.push(exempted.length
                ? { logType: l.logType, exemptedMembers: exempted as string[] }
                : { logType: l.logType });
        }
        out.push({ service: a.service, auditLogConfigs });
    }
    return ok(out);
}

/** Validates the `policy` of a setIamPolicy request. `strictVersion` enforces "conditions need version 3". */
export function checkPolicy(raw: unknown, strictVersion: boolean): Checked<PolicyInput> {
    if (!isObject(raw)) return fail("Invalid argument: 'policy' is required and must be an object.");
    const version = raw.version;
    if (version !== undefined && version !== null && (typeof version !== "number" || !POLICY_VERSIONS.has(version))) {
        return fail(`Invalid policy version ${JSON.stringify(version)}: it must be 0, 1 or 3.`);
    }
    if (raw.etag !== undefined && raw.etag !== null && typeof raw.etag !== "string") {
        return fail("policy.etag must be a base64 string.");
    }
    const bindings = checkBindings(raw.bindings);
    if (!bindings.ok) return bindings;
    const auditConfigs = checkAuditConfigs(raw.auditConfigs);
    if (!auditConfigs.ok) return auditConfigs;
    const input: PolicyInput = { bindings: bindings.value, auditConfigs: auditConfigs.value };
    if (typeof version === "number") input.version = version;
    if (typeof raw.etag === "string" && raw.etag !== "") input.etag = raw.etag;
    if (strictVersion && hasConditions(input) && input.version !== 3) {
        return fail(`Invalid policy: policy version ${input.version ?? 1} cannot hold conditional role bindings; ` +
            "conditions require policy version 3 or higher. Set policy.version to 3.");
    }
    return ok(input);
}

/** The paths of an updateMask, checked; the default is `bindings,etag`. */
export function checkUpdateMask(raw: unknown): Checked<Set<string>> {
    if (raw === undefined || raw === null || raw === "") return ok(new Set(["bindings", "etag"]));
    if (typeof raw !== "string") return fail("updateMask must be a comma-separated string of field paths.");
    const paths = new Set<string>();
    for (const p of raw.split(",")) {
        const path = p.trim().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
        if (path !== "bindings" && path !== "etag" && path !== "auditConfigs" && path !== "version") {
            return fail(`Invalid updateMask path ${JSON.stringify(p.trim())}: allowed paths are bindings, etag, ` +
                "auditConfigs and version.");
        }
        paths.add(path);
    }
    return ok(paths);
}

/** `<role>_withcond_<16 hex>`: the name IAM gives a conditional binding read below version 3. */
function withcondRole(b: Binding): string {
    const c = b.condition as ApiCondition;
    const hash = createHash("sha256")
        .update(JSON.stringify([c.expression, c.title, c.description ?? "", c.location ?? ""]))
        .digest("hex")
        .slice(0, 16);
    return `${b.role}_withcond_${hash}`;
}

/** The policy as getIamPolicy returns it for a requested version (0, 1 or 3). */
export function viewPolicy(stored: StoredPolicy, requestedVersion: number): Policy {
    const conditional = stored.bindings.some((b) => b.condition !== undefined);
    const out: Policy = { version: conditional && requestedVersion === 3 ? 3 : 1 };
    if (stored.bindings.length) {
        out.bindings = conditional && requestedVersion < 3
            ? stored.bindings.map((b) => (b.condition ? { role: withcondRole(b), members: b.members } : b))
            : stored.bindings;
    }
    if (stored.auditConfigs.length) out.auditConfigs = stored.auditConfigs;
    out.etag = stored.etag;
    return out;
}

/** The new stored policy after a set: the mask decides which parts of the request replace the current ones. */
export function applySet(current: StoredPolicy, input: PolicyInput, mask: Set<string>, etag: string): StoredPolicy {
    return {
        bindings: mask.has("bindings") ? input.bindings : current.bindings,
        auditConfigs: mask.has("auditConfigs") ? input.auditConfigs : current.auditConfigs,
        etag,
    };
}
