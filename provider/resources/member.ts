// *IamMember: one member of one role (+ condition) of a parent's policy, leaving every other grant alone.

import { property, types, Values } from "../define";
import { Grant, grantKey } from "../iam/grants";
import { MEMBER_FORMS_DOC, memberKey, memberProblem, parentName, sameMember } from "../iam/names";
import { Binding, Policy } from "../iam/policy";
import { EXAMPLE_VALUES } from "../functions/policyRecord";
import { CONDITION_TITLE, conditionOf, grantId, grantProperties, NOT_WITH_POLICY, sameGrant } from "./grant";
import { etagOutput, exampleIds, exampleParent, importText, ParentKind, parentInputs, parentOf, parseParent, PREFIX, readOrGone, reportKept, unlessGone } from "./parent";
import { token } from "../tokens";
import { defineResource, ResourceContext, ResourceDefinition } from "./resource";

export function memberResource(kind: ParentKind): ResourceDefinition {
    const name = `${PREFIX[kind]}IamMember`;
    const inputs = {
        ...grantProperties(kind, name, "the member holds the role under this condition only"),
        member: property(types.string, `The member granted the role: ${MEMBER_FORMS_DOC}.`, {
            required: true, replaceOnChanges: true, check: memberProblem,
        }),
    };
    type In = Values<typeof inputs>;
    const holds = (b: Binding, x: In) => sameGrant(b, x.role, x.condition) && b.members.some((m) => sameMember(m, x.member));
    const has = (p: Policy, x: In) => (p.bindings ?? []).some((b) => holds(b, x));
    const write = async (x: In, ctx: ResourceContext) => {
        const policy = await ctx.iam().modify(parentOf(kind, x), (current) => {
            if (has(current, x)) return undefined;
            // Folded into the binding of the role + condition (merging duplicates Google may hold), as
            // Terraform does; a new binding only when there is none.
            const bindings = current.bindings ?? [];
            const mine = bindings.filter((b) => sameGrant(b, x.role, x.condition));
            const grant: Binding = {
                ...(mine[0] ?? { role: x.role, ...(x.condition ? { condition: x.condition } : {}) }),
                members: [...new Set([...mine.flatMap((b) => b.members), x.member])],
            };
            const at = mine.length ? bindings.indexOf(mine[0]) : bindings.length;
            const rest = bindings.filter((b) => !mine.includes(b));
            return { ...current, bindings: [...rest.slice(0, at), grant, ...rest.slice(at)] };
        }, { record: ctx.wrote, confirm: (p) => has(p, x) });
        return { etag: policy.etag ?? "" };
    };
    const memberToken = token("endpoints", name);
    return defineResource({
        token: memberToken,
        description: `Grants one role to one member in the IAM policy of ${kind === "service" ? "a service" : "a consumer project of a service"}, ` +
            "leaving every other grant alone (non-authoritative). Deleting it removes only that member. " +
            NOT_WITH_POLICY,
        examples: [{
            title: "Grant a role to one member",
            program: [{ kind: "resource", name: "member", token: memberToken, args: { ...exampleParent(kind), role: EXAMPLE_VALUES.role, member: EXAMPLE_VALUES.member } }],
        }],
        importDoc: {
            text: importText(kind, ", then the role and the member, separated by spaces; for a grant under a condition, the condition's title follows"),
            ids: [...exampleIds(kind, [EXAMPLE_VALUES.role, EXAMPLE_VALUES.member]), exampleIds(kind, [EXAMPLE_VALUES.role, EXAMPLE_VALUES.member, CONDITION_TITLE])[0]],
        },
        inputs,
        outputs: etagOutput,
        id: (i) => grantId(parentOf(kind, i), [i.role, i.member, i.condition?.title]),
        claims: (i) => ({
            parent: parentName(parentOf(kind, i)), scope: "member", role: i.role, condition: i.condition,
            grants: [{ role: i.role, member: i.member, ...(i.condition ? { condition: i.condition } : {}) }],
        }),
        parseId: (id) => {
            const [p, role, member, ...title] = id.split(" ");
            const parentIn = parseParent(kind, p);
            if (typeof parentIn === "string") return parentIn;
            if (!role || !member) return `the import ID ${JSON.stringify(id)} needs "<parent> <role> <member> [condition title]"`;
            return { ...parentIn, role, member, ...(title.length ? { condition: { expression: "", title: title.join(" ") } } : {}) };
        },
        canonical: (i) => ({
            ...parentInputs(kind, i),
            role: i.role,
            member: memberKey(i.member),
            condition: conditionOf(i.condition),
        }),
        create: write,
        update: (_olds, news, ctx) => write(news, ctx),
        async read(x, ctx) {
            const policy = await readOrGone(ctx.iam(), parentOf(kind, x));
            const found = (policy?.bindings ?? []).find((b) => holds(b, x));
            if (!policy || !found) return undefined;
            const condition = conditionOf(found.condition) ?? undefined;
            return {
                inputs: { ...parentInputs(kind, x), role: x.role, member: x.member, ...(condition ? { condition } : {}) },
                outputs: { etag: policy.etag ?? "" },
            };
        },
        async delete(x, ctx) {
            const parent = parentOf(kind, x);
            const grant: Grant = { role: x.role, member: x.member, ...(x.condition ? { condition: x.condition } : {}) };
            const by = ctx.kept(parentName(parent)).grants.get(grantKey(grant));
            if (by !== undefined) return reportKept(ctx, parentName(parent), new Map([[grantKey(grant), { grant, by }]]));
            await unlessGone(ctx.iam().modify(parent, (current) => {
                if (!has(current, x)) return undefined;
                const bindings = (current.bindings ?? [])
                    .map((b) => (sameGrant(b, x.role, x.condition) ? { ...b, members: b.members.filter((m) => !sameMember(m, x.member)) } : b))
                    .filter((b) => b.members.length > 0);
                return { ...current, bindings };
            }, { confirm: (p) => !has(p, x) }));
        },
    });
}

