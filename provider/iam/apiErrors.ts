// What an answer of the API means for the person running the deployment: which failure it is (a resource that
// is gone by Google's word, a URL that is not the API, a denial, a conflict…), in a message that says what to
// check. Never a token or key (errors.ts redacts what Google wrote).

import { Code, IamError, parseGoogleError, redact } from "./errors";
import { Parent, parentName } from "./names";
import { QuotaWait } from "./quota";
import { Answer, Transport, Verb } from "./transport";

/**
 * What Google documents of conditions here: its list of services that allow conditional role bindings does not
 * include Service Management (and says some services do not allow them). Said by Check's warning and by the
 * error of a write Google refuses for its conditions.
 */
export const CONDITIONS_NOT_TAKEN =
    "Service Management is not among the services Google lists as allowing conditional role bindings, so Google very " +
    "likely refuses them on services and consumers (400 INVALID_ARGUMENT). To grant a role only under a condition " +
    "(until a date, for some resources), grant it on the project with that condition instead: a project's " +
    "conditional grants are inherited by what the project holds. Otherwise leave `condition` out";

/**
 * What to do about a resource whose service was deleted: Google answers 403 for it from then on (not 404), so
 * every refresh and destroy of the stack fails on it until it leaves the stack.
 */
export const GONE_FROM_STACK =
    "If the service was deleted, Google keeps answering so and every refresh and destroy fails on the resources of it: " +
    "`pulumi state delete <urn>` removes such a resource from the stack without calling Google (`pulumi stack --show-urns` " +
    "lists the URNs)";

/** Whether a refusal is about a policy's conditions (its message or a BadRequest field violation says so). */
function refusesConditions(answer: Answer, verb: Verb): boolean {
    if (verb !== "setIamPolicy" || answer.status !== 400) return false;
    const err = parseGoogleError(answer.body);
    return /condition/i.test(`${err.message ?? ""} ${JSON.stringify(err.details ?? [])}`);
}

/** What a message names besides the answer: the credentials used and where the endpoint came from. */
export interface FailureContext {
    transport: Transport;
    credentialsSource: string;
    endpointSetting: string;
}

/** A 404 that is not Google's word about the resource: the endpoint is wrong, and the user is told how. */
function notTheApi(answer: Answer, verb: Verb, parent: Parent, ctx: FailureContext): IamError {
    const url = ctx.transport.url(parent, verb);
    const err = parseGoogleError(answer.body);
    const what = err.message ? `an error that is not about the service: ${redact(err.message)}`
        : /^\s*</.test(answer.body) ? "a web page" : "a body that is not a Google API error";
    return new IamError(`${url} answered HTTP 404 with ${what}. That URL is not the Service Management API: check ` +
        `the endpoint, ${ctx.transport.base.href}, from ${ctx.endpointSetting}. It must be the API's base URL ending in ` +
        "/v1/, e.g. https://servicemanagement.googleapis.com/v1/ or the URL line the emulator prints",
    answer.status, Code.FAILED_PRECONDITION);
}

/** The error for an answer that is neither a success nor to be retried. */
export function failure(answer: Answer, verb: Verb, parent: Parent, ctx: FailureContext): IamError {
    const name = parentName(parent);
    const status = describeStatus(answer);
    const source = ctx.credentialsSource;
    const what = parent.kind === "service"
        ? `service ${JSON.stringify(parent.serviceName)}`
        : `service ${JSON.stringify(parent.serviceName)} (consumer ${JSON.stringify(parent.consumerProject)})`;
    const check = parent.kind === "service" ? "serviceName" : "serviceName and consumerProject";
    switch (answer.status) {
        case 404:
            // Google's word that the service or consumer does not exist; any other 404 (an HTML page, a
            // method the server does not know) means the URL is not the API, and nothing is gone.
            if (!isNotFoundAbout(parent, answer.body)) return notTheApi(answer, verb, parent, ctx);
            return new IamError(`${what} was not found (${status}): check ${check}, and that ${source} may see the service`,
                answer.status, Code.NOT_FOUND);
        case 403:
            // Service Management answers a service that does not exist like one the caller may not see.
            return new IamError(`${what} was not found, or ${source} may not use it: Service Management answers both ` +
                `with 403 (${status}). Check ${check}; if the service exists, grant servicemanagement.services.${verb} ` +
                `(e.g. roles/servicemanagement.admin on the producer project). ${GONE_FROM_STACK}`, answer.status, Code.PERMISSION_DENIED);
        case 401:
            return new IamError(`the request for ${name} was not authenticated (${status}); credentials used: ${source}. ` +
                "Check that they are valid and not expired", answer.status, Code.UNAUTHENTICATED);
        case 409:
            return new IamError(`the policy of ${name} changed concurrently (${status})`, answer.status, Code.ABORTED);
        default:
            if (refusesConditions(answer, verb)) {
                return new IamError(`Google refused the policy of ${name} for its conditional role bindings (${status}). ` +
                    `${CONDITIONS_NOT_TAKEN}.`, answer.status, Code.INVALID_ARGUMENT);
            }
            return new IamError(`${verb} of ${name} was refused (${status})`, answer.status,
                answer.status === 400 ? Code.INVALID_ARGUMENT : Code.UNKNOWN);
    }
}

/** Whether a 404's body is Google's NOT_FOUND error about this parent (it names the service or the consumer). */
function isNotFoundAbout(parent: Parent, body: string): boolean {
    const err = parseGoogleError(body);
    // A front end's "requested URL … was not found" or "method not found" names the path, not a resource.
    if (err.status !== "NOT_FOUND" || /requested URL|method not found/i.test(err.message ?? "")) return false;
    const text = `${err.message ?? ""} ${JSON.stringify(err.details ?? [])}`;
    return text.includes(parent.serviceName) || (parent.kind === "consumer" && text.includes(parent.consumerProject));
}

/**
 * The error of a call whose turn under the API's rate quota would come after its deadline (quota.ts): whose quota,
 * its limit, when the turn would come, and what to do. `settings` name the keys as the user writes them.
 */
export function quotaSpent(wait: QuotaWait, verb: Verb, parent: Parent, settings: { requestTimeout: string; billing: string; userProject?: string }): IamError {
    const q = wait.quota;
    const per = q.windowMs >= 86_400_000 ? "day" : "minute";
    const whose = q.consumer ? `of ${q.consumer}` : "of the project the calls are billed to";
    const billed = settings.userProject
        ? `Calls are billed to project ${settings.userProject} (${settings.billing}).`
        : `The quota is that of the credentials' project unless ${settings.billing} name another.`;
    return new IamError(`${verb} of ${parentName(parent)} was not sent: the Service Management API's rate quota ${whose} is ` +
        `spent (${q.limit} requests per ${per}${q.limitName ? ` (${q.limitName})` : ""}), and this call's turn would come in ` +
        `${Math.ceil(wait.turnInMs / 1000)}s, after the request timeout. Raise ${settings.requestTimeout} to wait for the quota, ` +
        "run fewer operations at once (`pulumi up --parallel N`), or ask Google for a higher quota: " +
        `https://console.cloud.google.com/apis/api/servicemanagement.googleapis.com/quotas. ${billed}`,
    429, Code.RESOURCE_EXHAUSTED);
}

export function describeStatus(answer: Answer): string {
    const err = parseGoogleError(answer.body);
    const detail = err.message ? `: ${redact(err.message)}` : "";
    return `HTTP ${answer.status}${err.status ? ` ${err.status}` : ""}${detail}`;
}
