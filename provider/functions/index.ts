// Every function the provider offers. Adding one here is all it takes to appear in schema.json and
// be dispatched by Invoke.

import { FunctionDefinition } from "./function";
import { getIAMPolicy } from "./getIAMPolicy";
import { policyLookup } from "./lookup";

export const functions: readonly FunctionDefinition[] = [
    policyLookup("service"),
    policyLookup("consumer"),
    getIAMPolicy,
];
