// A provider resource: token, description, declared inputs and outputs, and its lifecycle, in one value.
// Check, Diff, preview and secret handling are generic (lifecycle.ts, whose defineResource registers a
// definition); a definition says only what is particular to it. Handlers get the value types the declarations describe (Values<I> for the inputs,
// Values<O> for the outputs), as a function's handler does: lifecycle.ts only calls them with inputs that
// passed checking against `inputs`.

import { Properties, Values } from "../declare/define";
import type { Example } from "../declare/examples";
import type { InvokeContext } from "../functions/function";
import type { Grant } from "../iam/grants";
import type { Parent } from "../iam/names";
import type { Recorded } from "../iam/parentPolicy";
import type { Condition, Policy } from "../iam/policy";

export type Scope = "policy" | "binding" | "member";

/** What one resource declares of one parent's policy (the deployment gathers every resource's: journal/claims.ts). */
export interface Claim {
    /** The parent's name (`services/S` or `services/S/consumers/P`). */
    parent: string;
    scope: Scope;
    /** The grants it declares (a Policy: all of its bindings'; a Binding: its role's members; a Member: one). */
    grants: Grant[];
    /** A Binding's or Member's role and condition. */
    role?: string;
    condition?: Condition;
}

/**
 * What the rest of the stack still declares on a parent, for a Delete: what the run's other resources declare, and,
 * where the run does not Check every resource it keeps, what their state held when last seen (deployment/).
 */
export interface Kept {
    /** The resource (URN) that declares the whole policy, if any. */
    policy?: string;
    /** The resource (URN) that declares the grant of this grantKey, if any. */
    declaredBy(key: string): string | undefined;
    /** Whether that resource may no longer hold it: only a run that may have been a preview saw it there. */
    maybe?(key: string): boolean;
}

/**
 * What a resource operation may use beyond the fetcher: which resource it is, and the deployment around it (what the
 * rest of the deployment still declares on a parent, the journal of its writes), which journal/journal.ts
 * gives it.
 */
export interface ResourceContext extends InvokeContext {
    readonly urn: string;
    warn(message: string): void;
    /** The resource's ID, once its inputs are known (said in what the journal tells the user). */
    named(id: string): void;
    kept(parent: string): Kept;
    wrote(parent: Parent, before: Policy, after: Policy, deadline: number): Recorded;
    /** Whether a change that leaves `current` as it is writes it all the same (see ChangeOptions.fence). */
    fenced(parent: Parent, current: Policy): boolean;
}

/** `type::name` of a URN (`urn:pulumi:stack::project::type::name`): what a person recognises. */
export function shortUrn(urn: string): string {
    return urn.split("::").slice(-2).join("::");
}

type Record_ = Record<string, unknown>;

/** What a read found: the inputs that would produce the resource as it is, and its outputs. */
export interface ReadResult<V, R> {
    inputs: V;
    outputs: R;
}

/** One line of a detailed diff: a property path (`members[2]`, `policyData["roles/x user:a"]`) and its change. */
export interface PathChange {
    path: string;
    kind: "add" | "delete" | "update";
}

export interface ResourceDefinition<I extends Properties = Properties, O extends Properties = Properties> {
    readonly token: string;
    readonly description: string;
    /** Rendered into the description's `## Example Usage`, in every language (declare/examples.ts). */
    readonly examples: readonly Example[];
    /** The description's `## Import`: what the ID is made of, and one example ID per accepted form. */
    readonly importDoc: { readonly text: string; readonly ids: readonly string[] };
    readonly inputs: I;
    /** Outputs beyond the inputs (the state holds both). */
    readonly outputs: O;
    /** The input that holds its grants (`members`, `member`, `policyData`): what a Diff names when the journal asks for an update. */
    readonly grantProperty: keyof I & string;
    /** What the resource declares of its parent's policy (journal/claims.ts: conflicts are warned of, Deletes keep it). */
    claims(inputs: Values<I>): Claim;
    /** The ID of the resource the inputs describe (Terraform's form). */
    id(inputs: Values<I>): string;
    /**
     * The inputs an import ID names (possibly partly, e.g. a condition by its title), one per reading of it, the
     * likeliest first (a Terraform ID may read several ways: the read tells which Google holds), or the rule it broke.
     */
    parseId(id: string): Values<I>[] | string;
    /** Per-property values that compare equal exactly when the meaning is equal (for Diff). */
    canonical(inputs: Values<I>): Record_;
    /**
     * How a changed property that holds grants changed, grant by grant: the preview (and refresh, which the
     * engine shows through Diff too) then lists the grants added and removed, where the engine would compare
     * list positions or a JSON string's. Undefined for a property compared whole.
     */
    grantChanges?(property: keyof I & string, olds: Values<I>, news: Values<I>): PathChange[] | undefined;
    create(inputs: Values<I>, ctx: ResourceContext): Promise<Values<O>>;
    /** The resource as it is now, or undefined when it is gone. */
    read(inputs: Values<I>, ctx: ResourceContext): Promise<ReadResult<Values<I>, Values<O>> | undefined>;
    update(olds: Values<I>, news: Values<I>, ctx: ResourceContext): Promise<Values<O>>;
    delete(inputs: Values<I>, ctx: ResourceContext): Promise<void>;
}
