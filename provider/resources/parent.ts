// What every resource of this package shares: its parent (a service, or a consumer of one) as inputs (its import
// ID: importId.ts); the resource tokens; what a refresh or a delete makes of a parent that is gone;
// and what a Delete says when it keeps a grant. The resources themselves: policy.ts, binding.ts, member.ts.

import { property, types } from "../declare/define";
import { Code, IamError } from "../iam/errors";
import { describeGrant, Grant, grantKey } from "../iam/grants";
import { Policy } from "../iam/policy";
import { Parent, parentOf as parentIn, ParentKind, projectIdProblem, serviceNameProblem } from "../iam/names";
import { PARENT_HINT } from "../functions/policyRecord";

import { ResourceContext, shortUrn } from "./resource";


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
export const declaredBy = (ctx: Pick<ResourceContext, "urn">, urn: string) => (urn === ctx.urn ? "this resource's replacement" : shortUrn(urn));

/**
 * What a Delete on `parent` keeps because the rest of the deployment still declares it (deployment/): `keeps` answers
 * for one grant and notes those it keeps; `report` tells the user of them. A change function that is run again
 * (after a 409) starts with `forget`.
 */
export function keptGrants(ctx: Pick<ResourceContext, "urn" | "kept" | "warn">, parent: string) {
    const kept = ctx.kept(parent);
    const left = new Map<string, { grant: Grant; by: string; maybe: boolean }>();
    return {
        kept,
        keeps(grant: Grant): boolean {
            const by = kept.declaredBy(grantKey(grant));
            if (by !== undefined) left.set(grantKey(grant), { grant, by, maybe: kept.maybe?.(grantKey(grant)) === true });
            return by !== undefined;
        },
        forget: () => left.clear(),
        report(): void {
            if (left.size === 0) return;
            // What only a run that may have been a preview saw is said as what may be.
            const lines = [...left.values()].map(({ grant, by, maybe }) => `  ${describeGrant(grant)}: ${maybe
                ? `may be declared by ${declaredBy(ctx, by)} (only a run that may have been a preview saw its state hold it: if that resource is no longer in the stack, remove the grant by hand)`
                : `declared by ${declaredBy(ctx, by)}`}`);
            const may = [...left.values()].every((l) => l.maybe);
            ctx.warn(`deleted, but left ${left.size === 1 ? "a grant" : `${left.size} grants`} on ${parent} in place, because ` +
                `the stack ${may ? "may still declare" : "still declares"} ${left.size === 1 ? "it" : "them"}:\n${lines.join("\n")}`);
        },
    };
}

/**
 * The policy of a parent for a resource's Read (a refresh, an import), or undefined when the parent is gone: the read
 * the command's Reads of that parent share (iam/parentPolicy.ts, `refresh`). A failure of that read fails each Read
 * that shared it, under its own resource's name.
 */
export async function readOrGone(ctx: ResourceContext, parent: Parent): Promise<Policy | undefined> {
    try {
        return await unlessGone(ctx.iam().refreshPolicy(parent));
    } catch (e) {
        if (!(e instanceof IamError)) throw e;
        throw new IamError(`reading ${shortUrn(ctx.urn)}: ${e.message}`, e.httpStatus, e.code);
    }
}

export const etagOutput = { etag: property(types.string, "(Computed) The etag of the IAM policy.", { required: true }) };

/** What every Delete keeps (deployment/), said once for the docs. */
export const KEEPS = "A grant that another resource of the same deployment still declares (or this resource's replacement) " +
    "is left in place, with a warning.";
