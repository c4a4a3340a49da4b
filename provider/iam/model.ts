// The shape of an IAM policy, declared once in the definition DSL: condition, binding, audit log config and
// audit config, with each field's rule. These declarations give schema.json its policy types, check
// getIAMPolicy's and the resources' inputs, validate `policyData` (policy.ts) and type the policy the code
// handles (the TypeScript types below are derived from them, not written again).

import { property, types, Values } from "../declare/define";
import { MEMBER_FORMS_DOC, memberProblem, roleProblem } from "./names";
import { typeToken } from "../package/tokens";

/** The first problem of a list of members, or undefined (members as IAM accepts them in a grant). */
const membersProblem = (ms: string[]) => ms.map(memberProblem).find((p) => p !== undefined);

/** A text IAM refuses when empty (or only blanks). */
const notBlank = (what: string) => (v: string) => (v.trim() === "" ? `give ${what}; it is empty` : undefined);

const LOG_TYPES: readonly string[] = ["ADMIN_READ", "DATA_WRITE", "DATA_READ"];

/** `a, b or c`. */
const listed = (xs: readonly string[]) => `${xs.slice(0, -1).join(", ")} or ${xs[xs.length - 1]}`;

const conditionProperties = {
    description: property(types.string, "An optional description of the expression."),
    expression: property(types.string, "Textual representation of an expression in Common Expression Language syntax.", {
        required: true, check: notBlank("a CEL expression"),
    }),
    title: property(types.string, "A title for the expression, i.e. a short string describing its purpose.", {
        required: true, check: notBlank("a title"),
    }),
};

/**
 * The condition type under a given token: Pulumi GCP names one per resource (and one for getIAMPolicy), so
 * the SDKs' names match; the shape is this one. `subject` is what the condition restricts, for its description.
 */
export function conditionType(token: string, subject: "binding" | "grant") {
    return types.object(token, `An IAM condition: the ${subject} applies only when the CEL expression is true.`, conditionProperties);
}

const bindingProperties = {
    condition: property(conditionType(typeToken("organizations", "getIAMPolicyBindingCondition"), "binding"),
        "An IAM condition for this binding."),
    members: property(types.array(types.string),
        `The members granted the role, e.g. ${MEMBER_FORMS_DOC}.`, {
            required: true,
            check: (ms) => (ms.length === 0 ? "give at least one member" : membersProblem(ms)),
        }),
    role: property(types.string,
        "The role granted, e.g. `roles/servicemanagement.serviceConsumer`, `projects/{project}/roles/{role}` or " +
        "`organizations/{org}/roles/{role}`.", { required: true, check: roleProblem }),
};

export const bindingType = types.object(
    typeToken("organizations", "getIAMPolicyBinding"),
    "A role granted to a list of members, optionally under a condition.",
    bindingProperties,
);

const auditLogConfigProperties = {
    exemptedMembers: property(types.array(types.string), "Members whose access of this log type is not logged.", { check: membersProblem }),
    logType: property(types.string, `The log type: ${listed(LOG_TYPES.map((t) => `\`${t}\``))}.`, {
        required: true,
        check: (t) => (LOG_TYPES.includes(t) ? undefined : `${JSON.stringify(t)} is not ${listed(LOG_TYPES)}`),
    }),
};

export const auditLogConfigType = types.object(
    typeToken("organizations", "getIAMPolicyAuditConfigAuditLogConfig"),
    "Which kind of access is logged, and who is exempted.",
    auditLogConfigProperties,
);

const auditConfigProperties = {
    auditLogConfigs: property(types.array(auditLogConfigType), "The log types enabled, with their exemptions.", { required: true }),
    service: property(types.string, "The service audited, e.g. `storage.googleapis.com`, or `allServices`.", {
        required: true, check: notBlank("a service name or `allServices`"),
    }),
};

export const auditConfigType = types.object(
    typeToken("organizations", "getIAMPolicyAuditConfig"),
    "Audit logging configuration for one service.",
    auditConfigProperties,
);

/** What a policy grants and audits: getIAMPolicy's inputs, and the canonical policy. */
export const policyProperties = {
    auditConfigs: property(types.array(auditConfigType), "A nested configuration block that defines logging additional configuration for your project."),
    bindings: property(types.array(bindingType), "A nested configuration block (described below) defining a binding to be included in the policy document."),
};

/** A policy as the API sends and takes it, and as `policyData` may carry it (a lookup's policy has an etag and version). */
export const policyDataProperties = {
    ...policyProperties,
    etag: property(types.string, "The etag of the policy read; not part of the policy's meaning."),
    version: property(types.integer, "The version of the policy read; not part of the policy's meaning."),
};

export type Condition = Values<typeof conditionProperties>;
export type Binding = Values<typeof bindingProperties>;
export type AuditLogConfig = Values<typeof auditLogConfigProperties>;
export type AuditConfig = Values<typeof auditConfigProperties>;
/** A policy as the API sends and takes it. */
export type Policy = Values<typeof policyDataProperties>;
/** The canonical policy: no etag or version, merged, sorted, deduplicated, empty parts dropped. */
export type CanonicalPolicy = Values<typeof policyProperties>;
