// *IamBinding: authoritative for one role (+ condition) of a parent's policy: its members.

import { property, types, Values } from "../define";
import { Grant, grantKey, grantsOf } from "../iam/grants";
import { MEMBER_FORMS_DOC, memberProblem, parentName } from "../iam/names";
import { Binding, Policy } from "../iam/policy";
import { EXAMPLE_VALUES } from "../functions/policyRecord";
import {
    CONDITION_TITLE, conditionOf, grantId, grantProperties, memberChanges, memberKeys, NOT_WITH_POLICY, sameGrant, withoutGrant,
} from "./grant";
import { etagOutput, exampleIds, exampleParent, importText, ParentKind, parentInputs, parentOf, parseParent, PREFIX, readOrGone, reportKept, unlessGone } from "./parent";
import { token } from "../tokens";
import { defineResource, ResourceContext, ResourceDefinition } from "./resource";

export function bindingResource(kind: ParentKind): ResourceDefinition {
    const name = `${PREFIX[kind]}IamBinding`;
    const inputs = {
        ...grantProperties(kind, name, "the binding is for this role under this condition only"),
        members: property(types.array(types.string), `The members granted the role: ${MEMBER_FORMS_DOC}.`, {
            required: true,
            check: (ms) => ms.length === 0 ? "give at least one member (delete the binding to grant the role to nobody)"
                : ms.map(memberProblem).find((p) => p !== undefined),
        }),
    };
    type In = Values<typeof inputs>;
    const write = async (i: In, ctx: ResourceContext) => {
        const members = [...new Set(i.members)].sort();
        const binding: Binding = { role: i.role, members, ...(i.condition ? { condition: i.condition } : {}) };
        // Every binding of the role + condition (Google may hold duplicates) is replaced by this one; members
        // compare as IAM compares them.
        const owned = (p: Policy) => memberKeys((p.bindings ?? []).filter((b) => sameGrant(b, i.role, i.condition)).flatMap((b) => b.members));
        const want = JSON.stringify(memberKeys(members));
        const policy = await ctx.iam().modify(parentOf(kind, i), (current) =>
            JSON.stringify(owned(current)) === want ? undefined
                : { ...current, bindings: [...withoutGrant(current.bindings, i.role, i.condition), binding] }, {
            record: ctx.wrote,
            confirm: (p) => JSON.stringify(owned(p)) === want,
        });
        return { etag: policy.etag ?? "" };
    };
    const bindingToken = token("endpoints", name);
    return defineResource({
        token: bindingToken,
        description: `Authoritative for one role (and condition) in the IAM policy of ${kind === "service" ? "a service" : "a consumer project of a service"}: ` +
            "its members are exactly `members`; other roles are left alone. Deleting it removes that role's binding. " +
            NOT_WITH_POLICY,
        examples: [{
            title: "Grant a role to a list of members",
            program: [{ kind: "resource", name: "binding", token: bindingToken, args: { ...exampleParent(kind), role: EXAMPLE_VALUES.role, members: [EXAMPLE_VALUES.member] } }],
        }],
        importDoc: {
            text: importText(kind, ", then the role, separated by a space; for a binding under a condition, the condition's title follows"),
            ids: [...exampleIds(kind, [EXAMPLE_VALUES.role]), exampleIds(kind, [EXAMPLE_VALUES.role, CONDITION_TITLE])[0]],
        },
        inputs,
        outputs: etagOutput,
        id: (i) => grantId(parentOf(kind, i), [i.role, i.condition?.title]),
        claims: (i) => ({
            parent: parentName(parentOf(kind, i)), scope: "binding", role: i.role, condition: i.condition,
            grants: grantsOf([{ role: i.role, members: i.members, ...(i.condition ? { condition: i.condition } : {}) }]),
        }),
        parseId: (id) => {
            const [p, role, ...title] = id.split(" ");
            const parentIn = parseParent(kind, p);
            if (typeof parentIn === "string") return parentIn;
            if (!role) return `the import ID ${JSON.stringify(id)} has no role: use "<parent> <role> [condition title]"`;
            return { ...parentIn, role, members: [], ...(title.length ? { condition: { expression: "", title: title.join(" ") } } : {}) };
        },
        canonical: (i) => ({
            ...parentInputs(kind, i),
            role: i.role,
            members: memberKeys(i.members),
            condition: conditionOf(i.condition),
        }),
        grantChanges: (property, olds, news) => (property === "members" ? memberChanges(olds.members, news.members) : undefined),
        create: write,
        update: (_olds, news, ctx) => write(news, ctx),
        async read(x, ctx) {
            const policy = await readOrGone(ctx.iam(), parentOf(kind, x));
            const found = (policy?.bindings ?? []).filter((b) => sameGrant(b, x.role, x.condition));
            if (!policy || found.length === 0) return undefined;
            const condition = conditionOf(found[0].condition) ?? undefined;
            return {
                inputs: { ...parentInputs(kind, x), role: x.role, members: [...new Set(found.flatMap((b) => b.members))].sort(), ...(condition ? { condition } : {}) },
                outputs: { etag: policy.etag ?? "" },
            };
        },
        async delete(x, ctx) {
            const parent = parentOf(kind, x);
            const name = parentName(parent);
            const kept = ctx.kept(name);
            // The role's members go, except those other resources of the deployment still declare.
            const left = new Map<string, { grant: Grant; by: string }>();
            const keptBy = (b: Binding, member: string) => {
                const grant: Grant = { role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) };
                const by = kept.grants.get(grantKey(grant));
                if (by !== undefined) left.set(grantKey(grant), { grant, by });
                return by !== undefined;
            };
            const removable = (p: Policy) => (p.bindings ?? []).some((b) => sameGrant(b, x.role, x.condition) && b.members.some((m) => !keptBy(b, m)));
            await unlessGone(ctx.iam().modify(parent, (current) => {
                left.clear();
                if (!removable(current)) return undefined;
                const bindings = (current.bindings ?? [])
                    .map((b) => (sameGrant(b, x.role, x.condition) ? { ...b, members: b.members.filter((m) => keptBy(b, m)) } : b))
                    .filter((b) => b.members.length > 0);
                return { ...current, bindings };
            }, { confirm: (p) => !removable(p) }));
            reportKept(ctx, name, left);
        },
    });
}

