// Every resource the provider manages. Adding one here is all it takes to appear in schema.json and be
// dispatched by the resource RPCs.

import { bindingResource } from "./binding";
import { memberResource } from "./member";
import { policyResource } from "./policy";
import { Resource } from "./lifecycle";

export const resources: readonly Resource[] = [
    policyResource("service"),
    bindingResource("service"),
    memberResource("service"),
    policyResource("consumer"),
    bindingResource("consumer"),
    memberResource("consumer"),
];
