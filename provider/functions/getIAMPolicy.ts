import { crc32 } from "zlib";
import { property, types } from "../declare/define";
import { policyProperties } from "../iam/model";
import { canonicalParts } from "../iam/policy";
import { defineFunction } from "./function";
import { adminPolicyStatement, policyDataOutputs } from "./policyRecord";
import { token } from "../package/tokens";

const TOKEN = token("organizations", "getIAMPolicy");

export const getIAMPolicy = defineFunction({
    token: TOKEN,
    description: [
        "Generates an IAM policy document that may be referenced by and applied to other IAM resources, such as",
        "the `cloud.endpoints.ServiceIamPolicy` and `cloud.endpoints.ConsumersIamPolicy` resources. Makes no request.",
        "",
        "`policyData` is in the same canonical form the endpoints lookups return, so a policy built here and the",
        "lookup of a policy set from it are byte-equal.",
    ].join("\n"),
    // Pulumi GCP's organizations module has an IAMPolicy resource, so its Go SDK says LookupIAMPolicy.
    goName: "LookupIAMPolicy",
    examples: [{
        title: "Build a policy",
        program: [adminPolicyStatement(TOKEN), { kind: "export", name: "policyData", value: { from: "admin", prop: "policyData" } }],
    }],
    inputs: policyProperties,
    outputs: {
        ...policyDataOutputs("The above bindings serialized in a format suitable for referencing from a resource that supports IAM."),
        id: property(types.string, "A stable hash of `policyData` (CRC-32, as the Terraform provider computes it).", { required: true }),
    },
    async invoke({ auditConfigs, bindings }) {
        const parts = canonicalParts({ auditConfigs, bindings });
        return { ...parts, id: String(crc32(parts.policyData)) };
    },
});
