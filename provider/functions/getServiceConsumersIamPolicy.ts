import { property, types } from "../define";
import { parentName, parentOf, projectIdProblem, serviceNameProblem } from "../iam/names";
import { defineFunction } from "./function";
import { policyRecord, policyRecordOutputs } from "./policyRecord";

export const getServiceConsumersIamPolicy = defineFunction({
    token: "cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy",
    description: [
        "Retrieves the current IAM policy data for consumers",
        "",
        "## example",
        "",
        "```yaml",
        "variables:",
        "  policy:",
        "    fn::invoke:",
        "      function: cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy",
        "      arguments:",
        "        serviceName: ${default.serviceName}",
        "        consumerProject: ${default.consumerProject}",
        "```",
        "",
        "Besides `policyData`, the result carries the policy's `bindings` and `auditConfigs` as structured lists,",
        "so a program can read them without parsing JSON (in YAML, `return: bindings`).",
    ].join("\n"),
    inputs: {
        consumerProject: property(types.string, "Used to find the parent resource to bind the IAM policy to", {
            required: true,
            check: projectIdProblem,
        }),
        serviceName: property(types.string,
            "The name of the service. Used to find the parent resource to bind the IAM policy to", {
                required: true,
                check: serviceNameProblem,
            }),
    },
    outputs: {
        consumerProject: property(types.string, undefined, { required: true }),
        ...policyRecordOutputs("cloud.endpoints.ConsumersIamPolicy"),
        serviceName: property(types.string, undefined, { required: true }),
    },
    async invoke({ consumerProject, serviceName }, ctx) {
        const parent = parentOf(serviceName, consumerProject);
        const policy = await ctx.iam().getIamPolicy(parent);
        return { consumerProject, ...policyRecord(parentName(parent), policy), serviceName };
    },
});
