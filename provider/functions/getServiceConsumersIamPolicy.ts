import { property, types } from "../define";
import { parentName, parentOf, projectIdProblem, serviceNameProblem } from "../iam/names";
import { defineFunction } from "./function";
import { EXAMPLE_VALUES, lookupDescription, PARENT_HINT, policyRecord, policyRecordOutputs } from "./policyRecord";
import { token } from "../tokens";

const TOKEN = token("endpoints", "getServiceConsumersIamPolicy");

export const getServiceConsumersIamPolicy = defineFunction({
    token: TOKEN,
    description: lookupDescription("Retrieves the current IAM policy data for consumers"),
    examples: [{
        title: "Read the policy",
        program: [
            { kind: "invoke", name: "policy", token: TOKEN, args: { serviceName: EXAMPLE_VALUES.serviceName, consumerProject: EXAMPLE_VALUES.consumerProject } },
            { kind: "export", name: "policyData", value: { from: "policy", prop: "policyData" } },
        ],
    }],
    inputs: {
        consumerProject: property(types.string, PARENT_HINT, {
            required: true,
            check: projectIdProblem,
        }),
        serviceName: property(types.string,
            `The name of the service. ${PARENT_HINT}`, {
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
