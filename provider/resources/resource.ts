// A provider resource: token, description, typed inputs and outputs, and its lifecycle, in one value.
// Check, Diff, preview and secret handling are generic (lifecycle.ts); a definition says only what is
// particular to it.

import { Properties, Values } from "../define";
import type { InvokeContext } from "../functions/function";

export type ResourceContext = InvokeContext;

/** What a read found: the inputs that would produce the resource as it is, and its outputs. */
export interface ReadResult<I extends Properties, O extends Properties> {
    inputs: Values<I>;
    outputs: Values<O>;
}

export interface ResourceDefinition<I extends Properties = Properties, O extends Properties = Properties> {
    readonly token: string;
    readonly description: string;
    readonly inputs: I;
    /** Outputs beyond the inputs (the state holds both). */
    readonly outputs: O;
    /** Replace by deleting first: two resources with the same identity must never coexist (it would drop a grant). */
    readonly deleteBeforeReplace: boolean;
    /** The ID of the resource the inputs describe (Terraform's form). */
    id(inputs: Values<I>): string;
    /** The inputs an import ID names, or the rule it broke. */
    parseId(id: string): Values<I> | string;
    /** Per-property values that compare equal exactly when the meaning is equal (for Diff). */
    canonical(inputs: Values<I>): Record<string, unknown>;
    create(inputs: Values<I>, ctx: ResourceContext): Promise<Values<O>>;
    /** The resource as it is now, or undefined when it is gone. */
    read(inputs: Values<I>, ctx: ResourceContext): Promise<ReadResult<I, O> | undefined>;
    update(olds: Values<I>, news: Values<I>, ctx: ResourceContext): Promise<Values<O>>;
    delete(inputs: Values<I>, ctx: ResourceContext): Promise<void>;
}

export function defineResource<I extends Properties, O extends Properties>(
    definition: ResourceDefinition<I, O>,
): ResourceDefinition<I, O> {
    return definition;
}
