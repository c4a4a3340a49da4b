// IAM's limits on one allow policy (Google's "Quotas and limits", allow policies) that a declaration alone can
// break, so Check refuses it at preview instead of Google at `up` (400 INVALID_ARGUMENT, the whole write refused).
// What the rest of the policy holds is not known at Check: the count is of what the resource itself declares.

import { memberKey } from "./names";
import { canonicalAuditConfigs, canonicalBindings, parsePolicyData } from "./policy";
import type { Binding } from "./policy";

/** Principals in one policy: each occurrence in every role binding and audit logging exemption counts. */
const MAX_PRINCIPALS = 1500;
/** Google groups and domains among them. */
const MAX_GROUPS_AND_DOMAINS = 250;

const GROUP_OR_DOMAIN = /^(?:group|domain):/i;

/** The principals as Google counts them: per binding (or exemption list), once per member as IAM compares them. */
function count(lists: readonly (readonly string[])[]): { principals: number; groupsAndDomains: number } {
    let principals = 0;
    let groupsAndDomains = 0;
    for (const list of lists) {
        const unique = [...new Set(list.map(memberKey))];
        principals += unique.length;
        groupsAndDomains += unique.filter((m) => GROUP_OR_DOMAIN.test(m)).length;
    }
    return { principals, groupsAndDomains };
}

const n = (k: number) => k.toLocaleString("en-US");

/** What a count over the limits means and what to do; undefined within them. `what` names what holds them. */
function beyond(what: string, c: { principals: number; groupsAndDomains: number }): string | undefined {
    const refused = "Google refuses such a policy with 400 INVALID_ARGUMENT when it is written, so `pulumi up` would fail";
    if (c.principals > MAX_PRINCIPALS) {
        return `${what} ${n(c.principals)} principals; an IAM policy holds at most ${n(MAX_PRINCIPALS)} (each occurrence in every role ` +
            `binding and audit logging exemption counts). ${refused}. Grant the role to Google groups that hold the principals ` +
            `instead (a group counts as one principal; at most ${MAX_GROUPS_AND_DOMAINS} groups and domains per policy)`;
    }
    if (c.groupsAndDomains > MAX_GROUPS_AND_DOMAINS) {
        return `${what} ${n(c.groupsAndDomains)} Google groups and domains; an IAM policy holds at most ${MAX_GROUPS_AND_DOMAINS}. ${refused}. ` +
            "Nest groups (a group of groups counts as one) or merge them";
    }
    return undefined;
}

/** The limit a Binding's members break, or undefined. */
export function membersLimitProblem(members: readonly string[]): string | undefined {
    return beyond("`members` names", count([members]));
}

/** The limit a policy's bindings and audit exemptions break, or undefined. */
function bindingsLimitProblem(bindings: readonly Binding[] | undefined, exemptions: readonly (readonly string[])[] = []): string | undefined {
    return beyond("`policyData` names", count([...canonicalBindings(bindings).map((b) => b.members), ...exemptions]));
}

/** The limit a policyData text breaks, or undefined (a text that does not parse is policyDataProblem's to report). */
export function policyDataLimitProblem(text: string): string | undefined {
    const parsed = parsePolicyData(text);
    if ("problem" in parsed) return undefined;
    const exemptions = canonicalAuditConfigs(parsed.policy.auditConfigs).flatMap((c) => (c.auditLogConfigs ?? []).map((l) => l.exemptedMembers ?? []));
    return bindingsLimitProblem(parsed.policy.bindings, exemptions);
}
