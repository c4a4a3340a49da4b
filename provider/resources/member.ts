// *IamMember: one member of one role (+ condition) of a parent's policy, leaving every other grant alone.

import { property, types } from "../declare/define";
import { EXAMPLE_VALUES } from "../functions/policyRecord";
import { MEMBER_FORMS_DOC, memberProblem, ParentKind } from "../iam/names";
import { grantResource } from "./grant";
import { Resource } from "./lifecycle";
import { parentOf } from "./parent";

export function memberResource(kind: ParentKind): Resource {
    return grantResource(kind, {
        suffix: "IamMember",
        authoritative: false,
        conditionMeaning: "the member holds the role under this condition only",
        members: {
            member: property(types.string, `The member granted the role: ${MEMBER_FORMS_DOC}.`, {
                required: true, replaceOnChanges: true, check: memberProblem,
            }),
        },
        declared: (i) => ({ parent: parentOf(kind, i), role: i.role, condition: i.condition, members: [i.member] }),
        make: (parent, role, [member], condition) => ({ ...parent, role, member, ...(condition ? { condition } : {}) }),
        summary: (subject) => `Grants one role to one member in the IAM policy of ${subject}, leaving every other grant ` +
            "alone (non-authoritative). Deleting it removes only that member.",
        example: { title: "Grant a role to one member", args: { member: EXAMPLE_VALUES.member } },
    });
}
