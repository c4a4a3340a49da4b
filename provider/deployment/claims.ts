// What a resource declares of a parent's policy (its claim, from Check), what the rest of a deployment still
// declares on a parent (for a Delete), and when two claims fight. The deployment (deployment.ts) gathers the
// claims of every plugin process of one engine run.

import { describeGrant, Grant, grantKey, roleKey } from "../iam/grants";
import { Condition } from "../iam/policy";

export type Scope = "policy" | "binding" | "member";

/** What one resource declares of one parent's policy. */
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

/** What the rest of the deployment still declares on a parent, for a Delete. */
export interface Kept {
    /** The resource (URN) that declares the whole policy, if any. */
    policy?: string;
    /** grantKey → the resource (URN) that declares the grant. */
    grants: Map<string, string>;
}

/**
 * Whether a resource of claim `c` sets `g` when it writes: a Policy sets every grant of its parent, a Binding every
 * grant of its role and condition, a Member only its own.
 */
export function covers(c: Claim, g: Grant): boolean {
    if (c.scope === "policy") return true;
    if (c.scope === "binding") return roleKey(g.role, g.condition) === roleKey(c.role ?? "", c.condition);
    return c.grants.some((own) => grantKey(own) === grantKey(g));
}

/** `type::name` of a URN (`urn:pulumi:stack::project::type::name`): what a person recognises. */
export function shortUrn(urn: string): string {
    return urn.split("::").slice(-2).join("::");
}

/** A warning for one resource. */
export interface Notice {
    urn: string;
    message: string;
}

/** How two claims on one parent conflict, if they do, with the warning for one side naming the other. */
export function conflictOf(mine: Claim, theirs: Claim): { kind: string; message(other: string): string } | undefined {
    const parent = mine.parent;
    if (mine.scope === "policy" || theirs.scope === "policy") {
        return {
            kind: "policy",
            message: (other) => `${shortUrn(other)} also manages the IAM policy of ${parent}. A Policy resource owns the ` +
                "whole policy, so every update of it removes the other's grants and every refresh shows them again. " +
                "Manage one parent either with its Policy resource or with Bindings and Members, not both.",
        };
    }
    const sameRole = roleKey(mine.role ?? "", mine.condition) === roleKey(theirs.role ?? "", theirs.condition);
    if (!sameRole) return undefined;
    const role = `${mine.role}${mine.condition ? ` [if ${JSON.stringify(mine.condition.title)}]` : ""}`;
    if (mine.scope === "binding" && theirs.scope === "binding") {
        return {
            kind: "binding",
            message: (other) => `${shortUrn(other)} also sets the members of ${role} on ${parent}: each Binding is ` +
                "authoritative for its role, so every update of one removes the other's members. Keep one Binding per role.",
        };
    }
    if (mine.scope !== theirs.scope) {
        return {
            kind: "binding-member",
            message: (other) => `${shortUrn(other)} and this resource both manage ${role} on ${parent}: the Binding sets ` +
                "the role's members exactly, so it removes the Member's grant on every update and the Member adds it back " +
                "on the next; `pulumi up --refresh` flip-flops. List the member in the Binding, or use Members only for this role.",
        };
    }
    const mineKeys = new Set(mine.grants.map(grantKey));
    const shared = theirs.grants.find((g) => mineKeys.has(grantKey(g)));
    if (!shared) return undefined;
    return {
        kind: "grant",
        message: (other) => `${shortUrn(other)} declares the same grant (${describeGrant(shared)} on ${parent}; IAM ` +
            "compares emails without regard to case): remove one of the two resources. While both are declared, " +
            "deleting one leaves the grant in place for the other.",
    };
}
