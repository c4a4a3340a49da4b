import { property, types } from "../define";
import { parentName, parentOf, serviceNameProblem } from "../iam/names";
import { defineFunction } from "./function";
import { EXAMPLE_VALUES, lookupDescription, PARENT_HINT, policyRecord, policyRecordOutputs } from "./policyRecord";
import { token } from "../tokens";

const TOKEN = token("endpoints", "getServiceIamPolicy");

export const getServiceIamPolicy = defineFunction({
    token: TOKEN,
    description: lookupDescription("Retrieves the current IAM policy data for service"),
    examples: [{
        title: "Read the policy",
        program: [
            { kind: "invoke", name: "policy", token: TOKEN, args: { serviceName: EXAMPLE_VALUES.serviceName } },
            { kind: "export", name: "policyData", value: { from: "policy", prop: "policyData" } },
        ],
    }],
    inputs: {
        serviceName: property(types.string, PARENT_HINT, {
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
