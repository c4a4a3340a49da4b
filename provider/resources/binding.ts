// *IamBinding: authoritative for one role (+ condition) of a parent's policy: its members.

import { property, types } from "../declare/define";
import { EXAMPLE_VALUES } from "../functions/policyRecord";
import { membersLimitProblem } from "../iam/limits";
import { MEMBER_FORMS_DOC, memberProblem, ParentKind } from "../iam/names";
import { grantResource, memberChanges } from "./grant";
import { Resource } from "./lifecycle";
import { parentOf } from "./parent";

export function bindingResource(kind: ParentKind): Resource {
    return grantResource(kind, {
        suffix: "IamBinding",
        authoritative: true,
        conditionMeaning: "the binding is for this role under this condition only",
        members: {
            members: property(types.array(types.string), `The members granted the role: ${MEMBER_FORMS_DOC}.`, {
                required: true,
                check: (ms) => ms.length === 0 ? "give at least one member (delete the binding to grant the role to nobody)"
                    : ms.map(memberProblem).find((p) => p !== undefined) ?? membersLimitProblem(ms),
            }),
        },
        declared: (i) => ({ parent: parentOf(kind, i), role: i.role, condition: i.condition, members: i.members }),
        make: (parent, role, members, condition) => ({ ...parent, role, members, ...(condition ? { condition } : {}) }),
        summary: (subject) => `Authoritative for one role (and condition) in the IAM policy of ${subject}: its members are ` +
            "exactly `members`; other roles are left alone. Deleting it removes that role's binding.",
        example: { title: "Grant a role to a list of members", args: { members: [EXAMPLE_VALUES.member] } },
        grantChanges: (name, olds, news) => (name === "members" ? memberChanges(olds.members, news.members) : undefined),
    });
}
