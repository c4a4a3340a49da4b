// The three kinds of IAM resource Pulumi GCP and Terraform users know, for either parent (a service, or a
// consumer of a service):
//   *IamPolicy  — authoritative for the whole policy;
//   *IamBinding — authoritative for one role (+ condition): its members;
//   *IamMember  — one member of one role (+ condition), leaving every other grant alone.
// All writes are read-modify-writes through the fetcher's modify (batched per policy, guarded by the etag,
// redone on 409: iam/parentPolicy.ts).

import { property, types, Values } from "../define";
import { Code, IamError } from "../iam/errors";
import { IamFetcher } from "../iam/fetcher";
import { changesBetween, describeGrant, Grant, grantKey, grantsOf, keepGrants } from "../iam/grants";
import {
    checkProjectId, checkServiceName, memberKey, memberProblem, Parent, parentName, projectIdProblem, roleProblem, sameMember,
    serviceNameProblem,
} from "../iam/names";
import { conditionType } from "../iam/model";
import {
    Binding, canonicalAuditConfigs, canonicalBindings, canonicalCondition, comparablePolicyData, Condition, parsePolicyData, Policy, policyData, policyDataProblem,
} from "../iam/policy";
import type { ExampleArgs } from "../examples";
import { getIAMPolicy } from "../functions/getIAMPolicy";
import { adminPolicyStatement, EXAMPLE_VALUES } from "../functions/policyRecord";
import { shortUrn } from "./owners";
import { defineResource, PathChange, ResourceContext, ResourceDefinition } from "./resource";

export type ParentKind = Parent["kind"];

/** Names as Pulumi GCP spells them: `Service…` for a service, `Consumers…` for a consumer. */
const PREFIX: Record<ParentKind, string> = { service: "Service", consumer: "Consumers" };

function parentProperties() {
    const serviceName = property(types.string, "The name of the service. Used to find the parent resource to bind the IAM policy to.", {
        required: true, replaceOnChanges: true, check: serviceNameProblem,
    });
    const consumerProject = property(types.string, "The consumer project. Used to find the parent resource to bind the IAM policy to.", {
        required: true, replaceOnChanges: true, check: projectIdProblem,
    });
    return { consumerProject, serviceName };
}

type ParentInputs = { serviceName: string; consumerProject?: string };

function parentOf(kind: ParentKind, inputs: ParentInputs): Parent {
    const check = checkServiceName(inputs.serviceName);
    const serviceName = check.ok ? check.value : inputs.serviceName;
    return kind === "service" ? { kind, serviceName } : { kind, serviceName, consumerProject: inputs.consumerProject ?? "" };
}

/** The forms a parent takes in an import ID, as the docs show them and as parseParent accepts them. */
const PARENT_FORMS: Record<ParentKind, readonly string[]> = {
    service: ["services/{serviceName}", "{serviceName}"],
    consumer: ["services/{serviceName}/consumers/{consumerProject}", "{serviceName}/{consumerProject}"],
};
const formsText = (kind: ParentKind) => PARENT_FORMS[kind].map((f) => `\`${f}\``).join(" or ");

/** The parent's part of an import ID: `services/S` or `S`; `services/S/consumers/P` or `S/P`. */
function parseParent(kind: ParentKind, text: string): ParentInputs | string {
    const bare = text.startsWith("services/") ? text.slice("services/".length) : text;
    const parts = bare.split("/");
    const [serviceName, consumerProject] = kind === "service"
        ? parts.length === 1 ? [parts[0], undefined] : [undefined, undefined]
        : parts.length === 3 && parts[1] === "consumers" ? [parts[0], parts[2]]
            : parts.length === 2 ? [parts[0], parts[1]] : [undefined, undefined];
    const forms = formsText(kind);
    if (serviceName === undefined) return `the import ID ${JSON.stringify(text)} names no ${kind === "service" ? "service" : "consumer"}: use ${forms}`;
    const s = checkServiceName(serviceName);
    if (!s.ok) return `import ID: ${s.rule}`;
    if (kind === "service") return { serviceName: s.value };
    const p = checkProjectId(consumerProject!);
    return p.ok ? { serviceName: s.value, consumerProject: p.value } : `import ID: ${p.rule}`;
}

function parentInputs(kind: ParentKind, inputs: ParentInputs): ParentInputs {
    const p = parentOf(kind, inputs);
    return p.kind === "service" ? { serviceName: p.serviceName } : { consumerProject: p.consumerProject, serviceName: p.serviceName };
}

/**
 * A parent that no longer exists means the resource is gone, not an error: a refresh drops it, a delete has
 * nothing left to do (the read-modify-write's own read finds that out; no extra request). Only Google's own
 * NOT_FOUND about the service or consumer says so (the fetcher's NOT_FOUND); any other failure, a 404 from a
 * URL that is not the API included, is an error.
 */
async function unlessGone<T>(work: Promise<T>): Promise<T | undefined> {
    try {
        return await work;
    } catch (e) {
        if (e instanceof IamError && e.code === Code.NOT_FOUND) return undefined;
        throw e;
    }
}

/** Tells the user which of a deleted resource's grants stayed because another resource declares them. */
function reportKept(ctx: ResourceContext, parent: string, left: Map<string, { grant: Grant; by: string }>): void {
    if (left.size === 0) return;
    const lines = [...left.values()].map(({ grant, by }) =>
        `  ${describeGrant(grant)}: declared by ${by === ctx.urn ? "this resource's replacement" : shortUrn(by)}`);
    ctx.warn(`deleted, but left ${left.size === 1 ? "a grant" : `${left.size} grants`} on ${parent} in place, because ` +
        `the deployment still declares ${left.size === 1 ? "it" : "them"}:\n${lines.join("\n")}`);
}

/** The current policy of a parent for a refresh, or undefined when the parent is gone. */
const readOrGone = (iam: IamFetcher, parent: Parent) => unlessGone(iam.getIamPolicy(parent, { fresh: true }));

const etagOutput = { etag: property(types.string, "(Computed) The etag of the IAM policy.", { required: true }) };

/** The condition type of a resource, under the token Pulumi GCP gives it (`<Resource>Condition`). */
const resourceConditionType = (resource: string) =>
    conditionType(`cloud:endpoints/${resource}Condition:${resource}Condition`, "grant");

/** A condition compared by meaning; null for none (for Diff and for matching a resource's own grant). */
function conditionOf(c: Condition | undefined): Condition | null {
    return c ? canonicalCondition(c) : null;
}

/** Whether a binding is the one a resource owns: same role, same condition (by title only for an import). */
function sameGrant(b: Binding, role: string, condition: Condition | undefined): boolean {
    if (b.role !== role) return false;
    if (!condition || !b.condition) return !condition && !b.condition;
    if (condition.expression === "") return b.condition.title === condition.title;
    return JSON.stringify(conditionOf(b.condition)) === JSON.stringify(conditionOf(condition));
}

function withoutGrant(bindings: Binding[] | undefined, role: string, condition: Condition | undefined): Binding[] {
    return (bindings ?? []).filter((b) => !sameGrant(b, role, condition));
}

/** Members as IAM tells them apart, sorted and deduplicated: what Diff and confirmation compare. */
function memberKeys(members: readonly string[]): string[] {
    return [...new Set(members.map(memberKey))].sort();
}

/** The grants two policyData texts differ by, as `policyData["<grant>"]` lines; audit logging as one line. */
function policyDataChanges(before: string, after: string): PathChange[] | undefined {
    const a = parsePolicyData(before);
    const b = parsePolicyData(after);
    if ("problem" in a || "problem" in b) return undefined;
    const { added, removed } = changesBetween(grantsOf(a.policy.bindings), grantsOf(b.policy.bindings));
    const line = (g: Grant, kind: PathChange["kind"]): PathChange => ({ path: `policyData[${JSON.stringify(describeGrant(g))}]`, kind });
    const audit = JSON.stringify(canonicalAuditConfigs(a.policy.auditConfigs)) !== JSON.stringify(canonicalAuditConfigs(b.policy.auditConfigs));
    return [...added.map((g) => line(g, "add")), ...removed.map((g) => line(g, "delete")),
        ...(audit ? [{ path: "policyData.auditConfigs", kind: "update" as const }] : [])];
}

/** The members two lists differ by (as IAM compares them), as `members[i]` lines: i in the new list for an added one, in the old for a removed one. */
function memberChanges(before: readonly string[], after: readonly string[]): PathChange[] {
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

/** `<parent> <role>[ <member>][ <condition title>]`: Terraform's IDs for bindings and members. */
function grantId(parent: Parent, parts: (string | undefined)[]): string {
    return [parentName(parent), ...parts.filter((p): p is string => p !== undefined && p !== "")].join(" ");
}

const MEMBER_FORMS_DOC = "`user:{email}`, `serviceAccount:{email}`, `group:{email}`, `domain:{domain}`, " +
    "`principal://…`, `principalSet://…`, `allUsers`, `allAuthenticatedUsers`";

/** What a Binding and a Member share: the parent, the role, and an optional condition (each replaces). */
function grantProperties(kind: ParentKind, resource: string, conditionMeaning: string) {
    const parent = parentProperties();
    return {
        condition: property(resourceConditionType(resource), `An IAM condition: ${conditionMeaning}.`, { replaceOnChanges: true }),
        ...(kind === "consumer" ? { consumerProject: parent.consumerProject } : {}),
        role: property(types.string, "The role granted, e.g. `roles/servicemanagement.serviceConsumer`.", {
            required: true, replaceOnChanges: true, check: roleProblem,
        }),
        serviceName: parent.serviceName,
    };
}

// --- Docs: examples and the import section, from the same parent forms parseParent accepts. ---------------

const exampleParent = (kind: ParentKind): ExampleArgs => (kind === "service"
    ? { serviceName: EXAMPLE_VALUES.serviceName }
    : { serviceName: EXAMPLE_VALUES.serviceName, consumerProject: EXAMPLE_VALUES.consumerProject });

/** An example import ID per accepted parent form, followed by `rest` (space-separated). */
function exampleIds(kind: ParentKind, rest: readonly string[]): string[] {
    return PARENT_FORMS[kind].map((f) => [f.replace("{serviceName}", EXAMPLE_VALUES.serviceName)
        .replace("{consumerProject}", EXAMPLE_VALUES.consumerProject), ...rest].join(" "));
}

/** What an import ID is made of: the parent, then `parts` (space-separated). */
function importText(kind: ParentKind, parts: string): string {
    const bare = kind === "consumer"
        ? " Pulumi GCP also lists `{consumer_project}` alone: that names no service, so it is refused with a " +
          "message giving the forms above."
        : "";
    return `The ID is the parent (${formsText(kind)})${parts}.${bare} Give the type's full token, as below.`;
}

const CONDITION_TITLE = "expires-2030";

/** What every Delete keeps (owners.ts), said once for the docs. */
const KEEPS = "A grant that another resource of the same deployment still declares (or this resource's replacement) " +
    "is left in place, with a warning.";
const POLICY_DELETE_NOTE =
    "Deleting this resource sets an empty policy on the parent (as the Terraform provider does): every grant on " +
    `it is removed, including ones made outside Pulumi. ${KEEPS} Do not combine it with Bindings or Members on ` +
    "the same parent: each update would remove their grants and each refresh bring them back (the plugin warns).";
const NOT_WITH_POLICY = `${KEEPS} Do not combine it with the Policy resource of the same parent, which owns the whole ` +
    "policy and would remove this grant on every update (the plugin warns).";

export function policyResource(kind: ParentKind): ResourceDefinition {
    const name = `${PREFIX[kind]}IamPolicy`;
    const parent = parentProperties();
    const inputs = {
        ...(kind === "consumer" ? { consumerProject: parent.consumerProject } : {}),
        policyData: property(types.string,
            "The policy data generated by a `cloud.organizations.getIAMPolicy` data source. Compared by meaning: " +
            "order, duplicates and etags never show as a change.", { required: true, check: policyDataProblem }),
        serviceName: parent.serviceName,
    };
    type In = Values<typeof inputs>;
    const desired = (i: In): Policy => {
        const parsed = parsePolicyData(i.policyData);
        if ("problem" in parsed) throw new Error(parsed.problem);
        return { bindings: canonicalBindings(parsed.policy.bindings), auditConfigs: parsed.policy.auditConfigs ?? [] };
    };
    const write = async (i: In, ctx: ResourceContext) => {
        const want = desired(i);
        const wanted = comparablePolicyData(want);
        const policy = await ctx.iam().modify(parentOf(kind, i), (current) =>
            comparablePolicyData(current) === wanted ? undefined : want, {
            auditConfigs: true, record: ctx.wrote,
            confirm: (p) => comparablePolicyData(p) === wanted,
        });
        return { etag: policy.etag ?? "" };
    };
    const policyToken = `cloud:endpoints/${kind === "service" ? "serviceIamPolicy" : "consumersIamPolicy"}:${name}`;
    return defineResource({
        token: policyToken,
        description: `Authoritative for the whole IAM policy of ${kind === "service" ? "a service" : "a consumer project of a service"}: ` +
            `replaces it with \`policyData\`. ${POLICY_DELETE_NOTE}`,
        examples: [{
            title: "Set the whole policy",
            program: [
                adminPolicyStatement(getIAMPolicy.token),
                { kind: "resource", name: "policy", token: policyToken, args: { ...exampleParent(kind), policyData: { from: "admin", prop: "policyData" } } },
            ],
        }],
        importDoc: { text: importText(kind, ""), ids: exampleIds(kind, []) },
        inputs,
        outputs: etagOutput,
        id: (i) => parentName(parentOf(kind, i)),
        claims: (i) => ({ parent: parentName(parentOf(kind, i)), scope: "policy", grants: grantsOf(desired(i).bindings) }),
        parseId: (id) => {
            // An import ID names the parent only; read() takes nothing else from it (as a Binding's takes no members).
            const parentIn = parseParent(kind, id);
            return typeof parentIn === "string" ? parentIn : { ...parentIn, policyData: "" };
        },
        canonical: (i) => {
            const parsed = parsePolicyData(i.policyData);
            return { ...parentInputs(kind, i), policyData: "problem" in parsed ? i.policyData : comparablePolicyData(parsed.policy) };
        },
        grantChanges: (property, olds, news) => (property === "policyData" ? policyDataChanges(olds.policyData, news.policyData) : undefined),
        create: write,
        update: (_olds, news, ctx) => write(news, ctx),
        async read(x, ctx) {
            const policy = await readOrGone(ctx.iam(), parentOf(kind, x));
            if (!policy) return undefined;
            return { inputs: { ...parentInputs(kind, x), policyData: policyData(policy) }, outputs: { etag: policy.etag ?? "" } };
        },
        async delete(x, ctx) {
            const parent = parentOf(kind, x);
            const name = parentName(parent);
            const kept = ctx.kept(name);
            if (kept.policy) {
                const by = kept.policy === ctx.urn ? "this resource's replacement" : shortUrn(kept.policy);
                ctx.warn(`deleted, but left the IAM policy of ${name} as it is: ${by} manages it now`);
                return;
            }
            // Every grant goes, except those other resources of the deployment still declare.
            const left = new Map<string, { grant: Grant; by: string }>();
            const keep = (g: Grant) => {
                const by = kept.grants.get(grantKey(g));
                if (by !== undefined) left.set(grantKey(g), { grant: g, by });
                return by !== undefined;
            };
            const emptied = (p: Policy) => grantsOf(p.bindings).every((g) => kept.grants.has(grantKey(g))) && !(p.auditConfigs ?? []).length;
            await unlessGone(ctx.iam().modify(parent, (current) => {
                left.clear();
                const bindings = keepGrants(current, keep);
                return emptied(current) ? undefined : { bindings, auditConfigs: [] };
            }, { auditConfigs: true, confirm: emptied }));
            reportKept(ctx, name, left);
        },
    });
}

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
    const bindingToken = `cloud:endpoints/${kind === "service" ? "serviceIamBinding" : "consumersIamBinding"}:${name}`;
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
    const memberToken = `cloud:endpoints/${kind === "service" ? "serviceIamMember" : "consumersIamMember"}:${name}`;
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
