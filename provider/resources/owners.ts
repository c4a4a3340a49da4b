// Who manages which policy in this deployment. A Policy resource is authoritative for its whole parent, so a
// Binding or Member on the same parent fights it forever: each update of the Policy removes the grant, each
// refresh brings it back. Terraform's docs warn about this; the plugin sees both resources and says so.

export type Scope = "policy" | "grant";

/** `type::name` of a URN (`urn:pulumi:stack::project::type::name`): what a person recognises. */
function shortUrn(urn: string): string {
    return urn.split("::").slice(-2).join("::");
}

export class PolicyOwners {
    private readonly byParent = new Map<string, Record<Scope, Set<string>>>();
    private readonly warned = new Set<string>();

    /** Records that `urn` manages `parent`; returns a warning the first time a Policy and a grant resource meet. */
    note(urn: string, parent: string, scope: Scope): string | undefined {
        let owners = this.byParent.get(parent);
        if (!owners) this.byParent.set(parent, (owners = { policy: new Set(), grant: new Set() }));
        owners[scope].add(urn);
        const [policy] = owners.policy;
        const [grant] = owners.grant;
        if (policy === undefined || grant === undefined) return undefined;
        const pair = `${policy}\n${grant}`;
        if (this.warned.has(pair)) return undefined;
        this.warned.add(pair);
        return `${shortUrn(policy)} and ${shortUrn(grant)} both manage the IAM policy of ${parent}: the Policy resource ` +
            "owns the whole policy, so every update of it removes the other's grant and every refresh shows the grant " +
            "again, without end. Manage one parent either with its Policy resource or with Bindings and Members, not both.";
    }
}
