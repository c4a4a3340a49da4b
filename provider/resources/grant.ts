// The grant resources: a Binding (authoritative for the members of one role and condition) and a Member (one
// member of one role and condition, leaving the rest alone) are one declaration, grantResource, made twice
// per parent (binding.ts, member.ts say only what differs). Here: their shared inputs (parent, role,
// condition), how a policy's bindings are matched to them, their IDs, their writes, reads and deletes, and how a
// change to their members is shown (members[i], not positions).

import { property, Properties, types, Values } from "../declare/define";
import type { ExampleArgs } from "../declare/examples";
import { EXAMPLE_VALUES, exampleParent } from "../functions/policyRecord";
import { conditionType } from "../iam/model";
import { Grant, grantsOf, memberSet, roleKey } from "../iam/grants";
import { grantId, memberKey, Parent, parentName, PREFIX, roleProblem, sameMember, ParentKind } from "../iam/names";
import { Binding, canonicalCondition, Condition, Policy } from "../iam/policy";
import { token, typeToken } from "../package/tokens";
import { defineResource, Resource } from "./lifecycle";
import { importDocIds, importDocText, importReadings } from "./importId";
import {
    etagOutput, KEEPS, keptGrants, ParentInputs, parentInputs, parentOf, parentProperties, readOrGone, unlessGone,
} from "./parent";
import { PathChange, ResourceContext } from "./resource";

/** A condition compared by meaning; null for none (for Diff and for matching a resource's own grant). */
export function conditionOf(c: Condition | undefined): Condition | null {
    return c ? canonicalCondition(c) : null;
}

/** Whether a binding (or a grant) is of a resource's role and condition (the condition by title only, for an import). */
export function sameGrant(b: Pick<Binding, "role" | "condition">, role: string, condition: Condition | undefined): boolean {
    if (condition?.expression === "" && b.condition) return b.role === role && b.condition.title === condition.title;
    return roleKey(b.role, b.condition) === roleKey(role, condition);
}

/** Members as IAM tells them apart, sorted and deduplicated: what Diff and confirmation compare. */
export function memberKeys(members: readonly string[]): string[] {
    return [...new Set(members.map(memberKey))].sort();
}

/** The members two lists differ by (as IAM compares them), as `members[i]` lines: i in the new list for an added one, in the old for a removed one. */
export function memberChanges(before: readonly string[], after: readonly string[]): PathChange[] {
    const lines = (from: readonly string[], other: readonly string[], kind: PathChange["kind"]) => {
        const there = new Set(other.map(memberKey));
        const seen = new Set<string>();
        return from.flatMap((m, i) => {
            const key = memberKey(m);
            if (there.has(key) || seen.has(key)) return [];
            seen.add(key);
            return [{ path: `members[${i}]`, kind }];
        });
    };
    return [...lines(after, before, "add"), ...lines(before, after, "delete")];
}

/** What a Binding and a Member share: the parent, the role, and an optional condition (each replaces). */
export function grantProperties(kind: ParentKind, resource: string, conditionMeaning: string) {
    const parent = parentProperties();
    return {
        condition: property(conditionType(typeToken("endpoints", `${resource}Condition`), "grant"),
            `An IAM condition: ${conditionMeaning}.`, { replaceOnChanges: true }),
        ...(kind === "consumer" ? { consumerProject: parent.consumerProject } : {}),
        role: property(types.string, "The role granted, e.g. `roles/servicemanagement.serviceConsumer`.", {
            required: true, replaceOnChanges: true, check: roleProblem,
        }),
        serviceName: parent.serviceName,
    };
}

/** What a grant resource declares of its parent's policy. */
export interface Declared {
    parent: Parent;
    role: string;
    condition?: Condition;
    members: readonly string[];
}

/** The inputs a Binding and a Member share. */
type GrantInputs = ReturnType<typeof grantProperties>;
/** The inputs of a grant resource whose members' property is M. */
type In<M extends Properties> = Values<GrantInputs & M>;

/** What makes a Binding a Binding and a Member a Member (M: its members' property); everything else is grantResource's. */
export interface GrantForm<M extends Properties> {
    /** After the parent's prefix: `IamBinding`, `IamMember`. */
    readonly suffix: string;
    /**
     * Authoritative: the role's (and condition's) members are exactly the declared ones, and a Delete removes them
     * all. Otherwise the declared members are added to the role, the others left alone, and a Delete removes only
     * the declared ones. An authoritative resource's ID has no member; the other's names its member.
     */
    readonly authoritative: boolean;
    /** The members' own property, beside the parent, role and condition. */
    readonly members: M;
    /** What the condition means for this resource ("the member holds the role under this condition only"). */
    readonly conditionMeaning: string;
    declared(inputs: In<M>): Declared;
    /** The inputs for a parent, role, members and condition (from an import ID, or what a read found). */
    make(parent: ParentInputs, role: string, members: string[], condition: Condition | undefined): In<M>;
    /** The description's first sentences; `subject` names the parent ("a service", …). */
    summary(subject: string): string;
    /** The example's title and its members' argument. */
    readonly example: { readonly title: string; readonly args: ExampleArgs };
    grantChanges?(property: keyof (GrantInputs & M) & string, olds: In<M>, news: In<M>): PathChange[] | undefined;
}

export function grantResource<M extends Properties>(kind: ParentKind, form: GrantForm<M>): Resource {
    const name = `${PREFIX[kind]}${form.suffix}`;
    const inputs: GrantInputs & M = { ...grantProperties(kind, name, form.conditionMeaning), ...form.members };
    const resourceToken = token("endpoints", name);
    /** The members of the resource's role and condition that the resource owns: all of them, or the declared ones. */
    const owns = (d: Declared, member: string) => form.authoritative || d.members.some((m) => sameMember(m, member));
    /** The members of the resource's role and condition in a policy, as IAM compares them. */
    const held = (d: Declared, p: Policy) =>
        memberKeys((p.bindings ?? []).filter((b) => sameGrant(b, d.role, d.condition)).flatMap((b) => b.members));
    /** Whether a policy holds what the resource declares. */
    const holds = (d: Declared, p: Policy) => {
        if (!form.authoritative) {
            // A Member in a role of thousands: looked up in the role's members, not sorted with them.
            const mine = (p.bindings ?? []).filter((b) => sameGrant(b, d.role, d.condition)).map((b) => memberSet(b.members ?? []));
            return d.members.every((m) => mine.some((set) => set.has(memberKey(m))));
        }
        return JSON.stringify(held(d, p)) === JSON.stringify(memberKeys(d.members));
    };
    /**
     * The policy with the declared members given the role. A Binding's role and condition become one binding of
     * exactly its members, last (as Terraform writes it); a Member is folded into the first binding of its role
     * and condition, merging the duplicates Google may hold (as Terraform does), or a new binding last.
     */
    const granted = (d: Declared, p: Policy): Policy => {
        const bindings = p.bindings ?? [];
        const mine = bindings.filter((b) => sameGrant(b, d.role, d.condition));
        const rest = bindings.filter((b) => !mine.includes(b));
        const own = { role: d.role, ...(d.condition ? { condition: d.condition } : {}) };
        if (form.authoritative) return { ...p, bindings: [...rest, { ...own, members: [...new Set(d.members)].sort() }] };
        const binding: Binding = { ...(mine[0] ?? own), members: [...new Set([...mine.flatMap((b) => b.members), ...d.members])] };
        const at = mine.length ? bindings.indexOf(mine[0]) : bindings.length;
        return { ...p, bindings: [...rest.slice(0, at), binding, ...rest.slice(at)] };
    };
    const write = async (i: In<M>, ctx: ResourceContext) => {
        const d = form.declared(i);
        const policy = await ctx.iam().modify(d.parent, (current) => (holds(d, current) ? undefined : granted(d, current)), {
            record: ctx.wrote, fence: ctx.fenced,
            confirm: (p) => holds(d, p),
        });
        return { etag: policy.etag ?? "" };
    };
    const shape = form.authoritative ? "binding" : "member";
    return defineResource({
        token: resourceToken,
        description: `${form.summary(kind === "service" ? "a service" : "a consumer project of a service")} ${KEEPS} Do not combine it ` +
            "with the Policy resource of the same parent, which owns the whole policy and would remove this grant on every " +
            "update (the plugin warns).",
        examples: [{
            title: form.example.title,
            program: [{ kind: "resource", name: form.authoritative ? "binding" : "member", token: resourceToken,
                args: { ...exampleParent(kind), role: EXAMPLE_VALUES.role, ...form.example.args } }],
        }],
        importDoc: { text: importDocText(kind, shape), ids: importDocIds(kind, shape) },
        inputs,
        outputs: etagOutput,
        grantProperty: Object.keys(form.members)[0] as keyof (GrantInputs & M) & string,
        id: (i) => {
            const d = form.declared(i);
            return grantId(d.parent, [d.role, ...(form.authoritative ? [] : d.members), d.condition?.title]);
        },
        claims: (i) => {
            const d = form.declared(i);
            return {
                parent: parentName(d.parent), scope: form.authoritative ? "binding" : "member", role: d.role, condition: d.condition,
                grants: grantsOf([{ role: d.role, members: [...d.members], ...(d.condition ? { condition: d.condition } : {}) }]),
            };
        },
        parseId: (id) => {
            const readings = importReadings(kind, shape, id);
            if (typeof readings === "string") return readings;
            return readings.map((named) => {
                // A condition named by its title only: an empty expression (sameGrant then compares titles).
                const condition = named.conditionTitle !== undefined ? { expression: "", title: named.conditionTitle } : undefined;
                return form.make(named.parent, named.role ?? "", named.member !== undefined ? [named.member] : [], condition);
            });
        },
        canonical: (i) => {
            const d = form.declared(i);
            return form.make(parentInputs(kind, d.parent), d.role, memberKeys(d.members), conditionOf(d.condition) ?? undefined);
        },
        grantChanges: form.grantChanges,
        create: write,
        update: (_olds, news, ctx) => write(news, ctx),
        async read(i, ctx) {
            const d = form.declared(i);
            const policy = await readOrGone(ctx, d.parent);
            const found = (policy?.bindings ?? []).filter((b) => sameGrant(b, d.role, d.condition) && b.members.some((m) => owns(d, m)));
            if (!policy || found.length === 0) return undefined;
            // A Binding shows Google's members; a Member keeps its own spelling of the one it holds.
            const members = form.authoritative ? [...new Set(found.flatMap((b) => b.members))].sort() : [...d.members];
            const condition = conditionOf(found[0].condition) ?? undefined;
            return { inputs: form.make(parentInputs(kind, d.parent), d.role, members, condition), outputs: { etag: policy.etag ?? "" } };
        },
        async delete(i, ctx) {
            const d = form.declared(i);
            const kept = keptGrants(ctx, parentName(d.parent));
            const own = (member: string): Grant => ({ role: d.role, member, ...(d.condition ? { condition: d.condition } : {}) });
            if (!form.authoritative && d.members.every((m) => kept.keeps(own(m)))) {
                return kept.report(); // nothing of its own to remove: no request at all
            }
            // The owned members go, except those other resources of the deployment still declare.
            const goes = (g: Grant) => sameGrant(g, d.role, d.condition) && owns(d, g.member) && !kept.keeps(g);
            await unlessGone(ctx.iam().removeGrants(d.parent, goes, { onAttempt: kept.forget, record: ctx.wrote, fence: ctx.fenced }));
            kept.report();
        },
    });
}
