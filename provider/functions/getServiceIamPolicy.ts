import { property, types } from "../define";
import { parentName, parentOf, serviceNameProblem } from "../iam/names";
import { defineFunction } from "./function";
import { policyRecord, policyRecordOutputs } from "./policyRecord";

export const getServiceIamPolicy = defineFunction({
    token: "cloud:endpoints/getServiceIamPolicy:getServiceIamPolicy",
    description: [
        "Retrieves the current IAM policy data for service",
        "",
        "## example",
        "",
        "```yaml",
        "variables:",
        "  policy:",
        "    fn::invoke:",
        "      function: cloud:endpoints/getServiceIamPolicy:getServiceIamPolicy",
        "      arguments:",
        "        serviceName: ${default.serviceName}",
        "```",
        "",
        "Besides `policyData`, the result carries the policy's `bindings` and `auditConfigs` as structured lists,",
        "so a program can read them without parsing JSON (in YAML, `return: bindings`).",
    ].join("\n"),
    inputs: {
        serviceName: property(types.string, "Used to find the parent resource to bind the IAM policy to", {
            required: true,
            check: serviceNameProblem,
        }),
    },
    outputs: {
        ...policyRecordOutputs("cloud.endpoints.ServiceIamPolicy"),
        serviceName: property(types.string, undefined, { required: true }),
    },
    async invoke({ serviceName }, ctx) {
        const parent = parentOf(serviceName);
        const policy = await ctx.iam().getIamPolicy(parent);
        return { ...policyRecord(parentName(parent), policy), serviceName };
    },
});
