// A provider function: token, description, typed inputs and outputs, and the handler, in one value.

import { Properties, Values } from "../declare/define";
import type { Example } from "../declare/examples";
import type { IamFetcher } from "../iam/fetcher";

/** What a handler may use: the one IAM fetcher (built from the provider's configuration on first use). */
export interface InvokeContext {
    iam(): IamFetcher;
}

export interface FunctionDefinition<I extends Properties = Properties, O extends Properties = Properties> {
    readonly token: string;
    readonly description: string;
    /** Rendered into the description's `## Example Usage`, in every language (declare/examples.ts). */
    readonly examples: readonly Example[];
    readonly inputs: I;
    readonly outputs: O;
    /**
     * The Go name Pulumi GCP's SDK gives this function where Go's generator names it otherwise (it says
     * `Lookup…` only when a resource of that name is in the module, and Pulumi GCP's module has one ours does
     * not). The SDK generation step adds thin aliases under this name (scripts/sdk-finish.ts).
     */
    readonly goName?: string;
    /** Runs with inputs already checked against `inputs` (including each property's rule). */
    invoke(args: Values<I>, ctx: InvokeContext): Promise<Values<O>>;
}

export function defineFunction<I extends Properties, O extends Properties>(
    definition: FunctionDefinition<I, O>,
): FunctionDefinition<I, O> {
    return definition;
}
