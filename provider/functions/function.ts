// A provider function: token, description, typed inputs and outputs, and the handler, in one value.

import { Properties, Values } from "../define";
import type { IamFetcher } from "../iam/fetcher";

/** What a handler may use: the one IAM fetcher (built from the provider's configuration on first use). */
export interface InvokeContext {
    iam(): IamFetcher;
}

export interface FunctionDefinition<I extends Properties = Properties, O extends Properties = Properties> {
    readonly token: string;
    readonly description: string;
    readonly inputs: I;
    readonly outputs: O;
    /** Runs with inputs already checked against `inputs` (including each property's rule). */
    invoke(args: Values<I>, ctx: InvokeContext): Promise<Values<O>>;
}

export function defineFunction<I extends Properties, O extends Properties>(
    definition: FunctionDefinition<I, O>,
): FunctionDefinition<I, O> {
    return definition;
}
