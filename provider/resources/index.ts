// Every resource the provider manages. Adding one here is all it takes to appear in schema.json and be
// dispatched by the resource RPCs.

import { bindingResource } from "./binding";
import { memberResource } from "./member";
import { policyResource } from "./policy";
import { ResourceDefinition } from "./resource";

export const resources: readonly ResourceDefinition[] = [
    policyResource("service"),
    bindingResource("service"),
    memberResource("service"),
    policyResource("consumer"),
    bindingResource("consumer"),
    memberResource("consumer"),
];
