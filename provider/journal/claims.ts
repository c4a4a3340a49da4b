// The claims of a deployment's resources (each resource's, from Check: resources/resource.ts), what the rest of a
// deployment still declares on a parent (for a Delete), and when two claims fight. The deployment (deployment.ts) gathers the
// claims of every plugin process of one engine run.

import { describeGrant, Grant, grantKey, roleKey } from "../iam/grants";
import { Claim, Kept, shortUrn } from "../resources/resource";

/**
 * Whether a resource of claim `c` sets `g` when it writes: a Policy sets every grant of its parent, a Binding every
 * grant of its role and condition, a Member only its own.
 */
export function covers(c: Claim, g: Grant): boolean {
    if (c.scope === "policy") return true;
    if (c.scope === "binding") return roleKey(g.role, g.condition) === roleKey(c.role ?? "", c.condition);
    return c.grants.some((own) => grantKey(own) === grantKey(g));
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

interface ParentClaims {
    all: Map<string, Claim>;
    policies: Map<string, Claim>;
    /** roleKey → URN → claim, for Bindings and Members apart. */
    bindings: Map<string, Map<string, Claim>>;
    members: Map<string, Map<string, Claim>>;
    /** grantKey → URN → claim of every resource that declares the grant. */
    grants: Map<string, Map<string, Claim>>;
}

function inner<K, V>(m: Map<K, Map<string, V>>, key: K): Map<string, V> {
    let v = m.get(key);
    if (!v) m.set(key, (v = new Map()));
    return v;
}

/**
 * Every resource's current claim, indexed by parent, role and grant: a Check looks only at the claims it can fight
 * with, and a Delete asks about its own grants, so neither scans the run's every claim (a stack of thousands).
 */
export class ClaimIndex {
    private readonly byUrn = new Map<string, Claim>();
    private readonly parents = new Map<string, ParentClaims>();

    /** Whether `urn` declared something in this run (it was Checked). */
    has(urn: string): boolean {
        return this.byUrn.has(urn);
    }

    /** What `urn` declared in this run, if it was Checked. */
    get(urn: string): Claim | undefined {
        return this.byUrn.get(urn);
    }

    set(urn: string, claim: Claim): void {
        const old = this.byUrn.get(urn);
        if (old) this.place(urn, old, false);
        this.byUrn.set(urn, claim);
        this.place(urn, claim, true);
    }

    private place(urn: string, c: Claim, add: boolean): void {
        let p = this.parents.get(c.parent);
        if (!p) this.parents.set(c.parent, (p = { all: new Map(), policies: new Map(), bindings: new Map(), members: new Map(), grants: new Map() }));
        const role = roleKey(c.role ?? "", c.condition);
        const maps = [p.all, ...(c.scope === "policy" ? [p.policies] : [inner(c.scope === "binding" ? p.bindings : p.members, role)]),
            ...c.grants.map((g) => inner(p.grants, grantKey(g)))];
        for (const m of maps) {
            if (add) m.set(urn, c);
            else m.delete(urn);
        }
    }

    /** The claims that may fight with `c` (conflictOf judges): on its parent, a Policy, or one of its role or grants. */
    *rivals(c: Claim): Iterable<[string, Claim]> {
        const p = this.parents.get(c.parent);
        if (!p) return;
        if (c.scope === "policy") return yield* p.all;
        const role = roleKey(c.role ?? "", c.condition);
        yield* p.policies;
        yield* p.bindings.get(role) ?? [];
        if (c.scope === "binding") yield* p.members.get(role) ?? [];
        else for (const g of c.grants) yield* p.grants.get(grantKey(g)) ?? [];
    }

    /** What the claims declare on `parent`, for a Delete. */
    kept(parent: string): Kept {
        const p = this.parents.get(parent);
        const first = (m: Map<string, Claim> | undefined) => (m?.size ? m.keys().next().value : undefined);
        return { policy: first(p?.policies), declaredBy: (key) => first(p?.grants.get(key)) };
    }
}
