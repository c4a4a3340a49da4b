// What both lookups return about a policy, declared once: the record Pulumi GCP and Terraform users know
// (etag, id, policyData) plus the structured bindings and audit configs, in the types that
// organizations/getIAMPolicy uses for the same data.

import { objectToken, property, types } from "../define";
import type { Statement } from "../examples";
import { memberProblem, roleProblem } from "../iam/names";
import { canonicalParts, conditionProblem, Policy } from "../iam/policy";

/** The first problem of a list of members, or undefined (members as IAM accepts them in a grant). */
const membersProblem = (ms: string[]) => ms.map(memberProblem).find((p) => p !== undefined);

// The rules (check) apply where these types are inputs (getIAMPolicy); outputs are never checked.

export const conditionType = types.object(
    "cloud:organizations/getIAMPolicyBindingCondition:getIAMPolicyBindingCondition",
    "An IAM condition: the binding applies only when the CEL expression is true.",
    {
        description: property(types.string, "An optional description of the expression."),
        expression: property(types.string, "Textual representation of an expression in Common Expression Language syntax.", { required: true }),
        title: property(types.string, "A title for the expression, i.e. a short string describing its purpose.", { required: true }),
    },
);

export const bindingType = types.object(
    "cloud:organizations/getIAMPolicyBinding:getIAMPolicyBinding",
    "A role granted to a list of members, optionally under a condition.",
    {
        condition: property(conditionType, "An IAM condition for this binding.", { check: (c) => conditionProblem(c, "the condition") }),
        members: property(types.array(types.string),
            "The members granted the role, e.g. `user:{email}`, `serviceAccount:{email}`, `group:{email}`, " +
            "`domain:{domain}`, `allUsers`, `allAuthenticatedUsers`, `principal://…`, `principalSet://…`.", {
                required: true,
                check: (ms) => (ms.length === 0 ? "give at least one member" : membersProblem(ms)),
            }),
        role: property(types.string,
            "The role granted, e.g. `roles/servicemanagement.serviceConsumer`, `projects/{project}/roles/{role}` or " +
            "`organizations/{org}/roles/{role}`.", { required: true, check: roleProblem }),
    },
);

export const auditLogConfigType = types.object(
    "cloud:organizations/getIAMPolicyAuditConfigAuditLogConfig:getIAMPolicyAuditConfigAuditLogConfig",
    "Which kind of access is logged, and who is exempted.",
    {
        exemptedMembers: property(types.array(types.string), "Members whose access of this log type is not logged.", { check: membersProblem }),
        logType: property(types.string, "The log type: `ADMIN_READ`, `DATA_WRITE` or `DATA_READ`.", {
            required: true,
            check: (t) => (["ADMIN_READ", "DATA_WRITE", "DATA_READ"].includes(t) ? undefined : `${JSON.stringify(t)} is not ADMIN_READ, DATA_WRITE or DATA_READ`),
        }),
    },
);

export const auditConfigType = types.object(
    "cloud:organizations/getIAMPolicyAuditConfig:getIAMPolicyAuditConfig",
    "Audit logging configuration for one service.",
    {
        auditLogConfigs: property(types.array(auditLogConfigType), "The log types enabled, with their exemptions.", { required: true }),
        service: property(types.string, "The service audited, e.g. `storage.googleapis.com`, or `allServices`.", { required: true }),
    },
);

const POLICY_DATA_FORM =
    "It is canonical JSON of `{auditConfigs, bindings}` (etag and version left out; bindings merged by role and " +
    "condition and sorted; members sorted and deduplicated; empty parts dropped), so equal policies give equal strings.";

/** The values every example uses. */
export const EXAMPLE_VALUES = {
    serviceName: "bookstore.endpoints.example-project.cloud.goog",
    consumerProject: "consumer-project-1",
    role: "roles/servicemanagement.serviceConsumer",
    member: "user:jane@example.com",
} as const;

/** The example lookup that builds a policy granting EXAMPLE_VALUES.role to EXAMPLE_VALUES.member, named `admin`. */
export function adminPolicyStatement(getIAMPolicyToken: string): Statement {
    return {
        kind: "invoke", name: "admin", token: getIAMPolicyToken, args: {
            bindings: { type: objectToken(bindingType), items: [{ role: EXAMPLE_VALUES.role, members: [EXAMPLE_VALUES.member] }] },
        },
    };
}

/** A lookup's description: the summary users know, and what we return beyond the peers. */
export function lookupDescription(summary: string): string {
    return [
        summary,
        "",
        "Besides `policyData`, the result carries the policy's `bindings` and `auditConfigs` as structured lists,",
        "so a program can read them without parsing JSON (in YAML, `return: bindings`).",
    ].join("\n");
}

/** The canonical policy's outputs, shared by the lookups and getIAMPolicy; `takenBy` names who takes policyData. */
export function policyDataOutputs(takenBy: string) {
    return {
        auditConfigs: property(types.array(auditConfigType),
            "The policy's audit configurations, in canonical order (empty when there are none).", { required: true }),
        bindings: property(types.array(bindingType),
            "The policy's bindings, in canonical order: the structured form of `policyData`.", { required: true }),
        policyData: property(types.string, `${takenBy} ${POLICY_DATA_FORM}`, { required: true }),
    };
}

/** The outputs both lookups share; `resource` names the resource that takes `policyData`. */
export function policyRecordOutputs(resource: string) {
    return {
        ...policyDataOutputs(`(Required only by \`${resource}\`) The policy data generated by a ` +
            "`cloud.organizations.getIAMPolicy` data source."),
        etag: property(types.string, "(Computed) The etag of the IAM policy.", { required: true }),
        id: property(types.string, "The provider-assigned unique ID for this managed resource.", { required: true }),
    };
}

/** The shared part of a lookup's result, for a policy read from the API. */
export function policyRecord(id: string, policy: Policy) {
    return { ...canonicalParts(policy), etag: policy.etag ?? "", id };
}
