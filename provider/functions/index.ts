// Every function the provider offers. Adding one here is all it takes to appear in schema.json and
// be dispatched by Invoke.

import { FunctionDefinition } from "./function";
import { getIAMPolicy } from "./getIAMPolicy";
import { getServiceConsumersIamPolicy } from "./getServiceConsumersIamPolicy";
import { getServiceIamPolicy } from "./getServiceIamPolicy";

export const functions: readonly FunctionDefinition[] = [
    getServiceIamPolicy,
    getServiceConsumersIamPolicy,
    getIAMPolicy,
];
