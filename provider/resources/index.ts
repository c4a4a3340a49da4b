// Every resource the provider manages. Adding one here is all it takes to appear in schema.json and be
// dispatched by the resource RPCs. (The policy resources arrive with their own definitions.)

import { Properties } from "../define";

export interface ResourceDefinition {
    readonly token: string;
    readonly description: string;
    readonly inputs: Properties;
    readonly outputs: Properties;
}

export const resources: readonly ResourceDefinition[] = [];
