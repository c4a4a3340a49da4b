// What every resource of this package shares: its parent (a service, or a consumer of one) as inputs, as an
// import ID and in the docs; the resource tokens; what a refresh or a delete makes of a parent that is gone;
// and what a Delete says when it keeps a grant. The resources themselves: policy.ts, binding.ts, member.ts.

import { property, types } from "../define";
import { Code, IamError } from "../iam/errors";
import { IamFetcher } from "../iam/fetcher";
import { describeGrant, Grant, grantKey } from "../iam/grants";
import { checkProjectId, checkServiceName, Parent, parentOf as parentIn, ParentKind, projectIdProblem, serviceNameProblem } from "../iam/names";
import { EXAMPLE_VALUES, PARENT_HINT } from "../functions/policyRecord";

import { shortUrn } from "./owners";
import { ResourceContext } from "./resource";


export function parentProperties() {
    const serviceName = property(types.string, `The name of the service. ${PARENT_HINT}.`, {
        required: true, replaceOnChanges: true, check: serviceNameProblem,
    });
    const consumerProject = property(types.string, `The consumer project. ${PARENT_HINT}.`, {
        required: true, replaceOnChanges: true, check: projectIdProblem,
    });
    return { consumerProject, serviceName };
}

export type ParentInputs = { serviceName: string; consumerProject?: string };

/** The parent a resource's inputs name. */
export const parentOf = (kind: ParentKind, inputs: ParentInputs): Parent => parentIn(kind, inputs.serviceName, inputs.consumerProject);

/** The forms a parent takes in an import ID, as the docs show them and as parseParent accepts them. */
export const PARENT_FORMS: Record<ParentKind, readonly string[]> = {
    service: ["services/{serviceName}", "{serviceName}"],
    consumer: ["services/{serviceName}/consumers/{consumerProject}", "{serviceName}/{consumerProject}"],
};
export const formsText = (kind: ParentKind) => PARENT_FORMS[kind].map((f) => `\`${f}\``).join(" or ");

/** The parent's part of an import ID: `services/S` or `S`; `services/S/consumers/P` or `S/P`. */
export function parseParent(kind: ParentKind, text: string): ParentInputs | string {
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

export function parentInputs(kind: ParentKind, inputs: ParentInputs): ParentInputs {
    const p = parentOf(kind, inputs);
    return p.kind === "service" ? { serviceName: p.serviceName } : { consumerProject: p.consumerProject, serviceName: p.serviceName };
}

/**
 * A parent that no longer exists means the resource is gone, not an error: a refresh drops it, a delete has
 * nothing left to do (the read-modify-write's own read finds that out; no extra request). Only Google's own
 * NOT_FOUND about the service or consumer says so (the fetcher's NOT_FOUND); any other failure, a 404 from a
 * URL that is not the API included, is an error.
 */
export async function unlessGone<T>(work: Promise<T>): Promise<T | undefined> {
    try {
        return await work;
    } catch (e) {
        if (e instanceof IamError && e.code === Code.NOT_FOUND) return undefined;
        throw e;
    }
}

/** Who declares what a Delete keeps, as the deleted resource's warning names it. */
export const declaredBy = (ctx: ResourceContext, urn: string) => (urn === ctx.urn ? "this resource's replacement" : shortUrn(urn));

/**
 * What a Delete on `parent` keeps because the rest of the deployment still declares it (owners.ts): `keeps` answers
 * for one grant and notes those it keeps; `report` tells the user of them. A change function that is run again
 * (after a 409) starts with `forget`.
 */
export function keptGrants(ctx: ResourceContext, parent: string) {
    const kept = ctx.kept(parent);
    const left = new Map<string, { grant: Grant; by: string }>();
    return {
        kept,
        keeps(grant: Grant): boolean {
            const by = kept.grants.get(grantKey(grant));
            if (by !== undefined) left.set(grantKey(grant), { grant, by });
            return by !== undefined;
        },
        forget: () => left.clear(),
        report(): void {
            if (left.size === 0) return;
            const lines = [...left.values()].map(({ grant, by }) => `  ${describeGrant(grant)}: declared by ${declaredBy(ctx, by)}`);
            ctx.warn(`deleted, but left ${left.size === 1 ? "a grant" : `${left.size} grants`} on ${parent} in place, because ` +
                `the deployment still declares ${left.size === 1 ? "it" : "them"}:\n${lines.join("\n")}`);
        },
    };
}

/** The current policy of a parent for a refresh, or undefined when the parent is gone. */
export const readOrGone = (iam: IamFetcher, parent: Parent) => unlessGone(iam.getIamPolicy(parent, { fresh: true }));

export const etagOutput = { etag: property(types.string, "(Computed) The etag of the IAM policy.", { required: true }) };

/** An example import ID per accepted parent form, followed by `rest` (space-separated). */
export function exampleIds(kind: ParentKind, rest: readonly string[]): string[] {
    return PARENT_FORMS[kind].map((f) => [f.replace("{serviceName}", EXAMPLE_VALUES.serviceName)
        .replace("{consumerProject}", EXAMPLE_VALUES.consumerProject), ...rest].join(" "));
}

/** What an import ID is made of: the parent, then `parts` (space-separated). */
export function importText(kind: ParentKind, parts: string): string {
    const bare = kind === "consumer"
        ? " Pulumi GCP also lists `{consumer_project}` alone: that names no service, so it is refused with a " +
          "message giving the forms above."
        : "";
    return `The ID is the parent (${formsText(kind)})${parts}.${bare} Give the type's full token, as below.`;
}


/** What every Delete keeps (owners.ts), said once for the docs. */
export const KEEPS = "A grant that another resource of the same deployment still declares (or this resource's replacement) " +
    "is left in place, with a warning.";
