// What the functions and resources say alike: the canonical policy's outputs (the lookups' and
// organizations/getIAMPolicy's), how a parent's properties are described, and the values every example uses.

import { objectToken, property, types } from "../declare/define";
import type { ExampleArgs, Statement } from "../declare/examples";
import { auditConfigType, bindingType } from "../iam/model";
import { ParentKind } from "../iam/names";

const POLICY_DATA_FORM =
    "It is canonical JSON of `{auditConfigs, bindings}` (etag and version left out; bindings merged by role and " +
    "condition and sorted; members sorted and deduplicated; empty parts dropped), so equal policies give equal strings.";

/** How Pulumi GCP describes a parent's properties (serviceName, consumerProject), in lookups and resources alike. */
export const PARENT_HINT = "Used to find the parent resource to bind the IAM policy to";

/** The values every example uses. */
export const EXAMPLE_VALUES = {
    serviceName: "bookstore.endpoints.example-project.cloud.goog",
    consumerProject: "consumer-project-1",
    role: "roles/servicemanagement.serviceConsumer",
    member: "user:jane@example.com",
} as const;

/** A parent's arguments in the examples. */
export const exampleParent = (kind: ParentKind): ExampleArgs => (kind === "service"
    ? { serviceName: EXAMPLE_VALUES.serviceName }
    : { serviceName: EXAMPLE_VALUES.serviceName, consumerProject: EXAMPLE_VALUES.consumerProject });

/** The example lookup that builds a policy granting EXAMPLE_VALUES.role to EXAMPLE_VALUES.member, named `admin`. */
export function adminPolicyStatement(getIAMPolicyToken: string): Statement {
    return {
        kind: "invoke", name: "admin", token: getIAMPolicyToken, args: {
            bindings: { type: objectToken(bindingType), items: [{ role: EXAMPLE_VALUES.role, members: [EXAMPLE_VALUES.member] }] },
        },
    };
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
