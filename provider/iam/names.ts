// Naming rules of the Service Management API for the two IAM parents, shared by the provider's input
// checking and the emulator, so both refuse exactly the same names.

/** The outcome of checking one name: the normalized value, or the rule it broke (written for a person). */
export type NameCheck = { ok: true; value: string } | { ok: false; rule: string };

const LABEL = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export const SERVICE_NAME_RULE =
    "a service name is at most 253 characters of dot-separated labels; each label starts with a lowercase " +
    "letter, holds only lowercase letters, digits and dashes, does not end with a dash and is at most 63 " +
    "characters (e.g. `myapi.endpoints.my-project.cloud.goog`; a `services/` prefix is accepted)";

export const PROJECT_ID_RULE =
    "a project ID is 6 to 30 lowercase letters, digits or hyphens, starts with a letter and does not end " +
    "with a hyphen (e.g. `my-project-123`); a domain-scoped ID such as `example.com:my-project` is accepted";

function describe(value: string): string {
    const shown = value.length > 64 ? `${value.slice(0, 64)}…` : value;
    return JSON.stringify(shown);
}

/** Checks a service name, accepting an optional `services/` prefix; the value returned has no prefix. */
export function checkServiceName(raw: string): NameCheck {
    const name = raw.startsWith("services/") ? raw.slice("services/".length) : raw;
    if (name.length === 0) return { ok: false, rule: `the service name is empty; ${SERVICE_NAME_RULE}` };
    if (name.length > 253) {
        return { ok: false, rule: `the service name is ${name.length} characters long; ${SERVICE_NAME_RULE}` };
    }
    if (!name.split(".").every((label) => LABEL.test(label))) {
        return { ok: false, rule: `${describe(raw)} is not a valid service name: ${SERVICE_NAME_RULE}` };
    }
    return { ok: true, value: name };
}

/** Checks a consumer project ID (bare, or domain-scoped `domain:project`). */
export function checkProjectId(raw: string): NameCheck {
    if (raw.length === 0) return { ok: false, rule: `the project ID is empty; ${PROJECT_ID_RULE}` };
    if (raw.length > 253 + 1 + 30) {
        return { ok: false, rule: `the project ID is ${raw.length} characters long; ${PROJECT_ID_RULE}` };
    }
    const colon = raw.lastIndexOf(":");
    const ok = colon < 0
        ? PROJECT_ID.test(raw)
        : DOMAIN.test(raw.slice(0, colon)) && PROJECT_ID.test(raw.slice(colon + 1));
    return ok ? { ok: true, value: raw } : { ok: false, rule: `${describe(raw)} is not a valid project ID: ${PROJECT_ID_RULE}` };
}

/** The two kinds of IAM parent this package manages. */
export type Parent =
    | { kind: "service"; serviceName: string }
    | { kind: "consumer"; serviceName: string; consumerProject: string };

export type ParentKind = Parent["kind"];

/** Names as Pulumi GCP spells them: `Service…` for a service, `Consumers…` for a consumer. */
export const PREFIX: Record<ParentKind, string> = { service: "Service", consumer: "Consumers" };

/** The resource name of a parent, as the API and Terraform's IDs spell it (unencoded). */
export function parentName(parent: Parent): string {
    return parent.kind === "service"
        ? `services/${parent.serviceName}`
        : `services/${parent.serviceName}/consumers/${parent.consumerProject}`;
}

/** `<parent> <role>[ <member>][ <condition title>]`: Terraform's IDs for bindings and members. */
export function grantId(parent: Parent, parts: (string | undefined)[]): string {
    return [parentName(parent), ...parts.filter((p): p is string => p !== undefined && p !== "")].join(" ");
}

/** The broken rule of a name check, or undefined: the form property checks take. */
export const serviceNameProblem = (raw: string): string | undefined => brokenRule(checkServiceName(raw));
export const projectIdProblem = (raw: string): string | undefined => brokenRule(checkProjectId(raw));

function brokenRule(check: NameCheck): string | undefined {
    return check.ok ? undefined : check.rule;
}

/**
 * The parent a service name and consumer project address, the service name in the form the API takes. Names
 * that break the input rules (state holds what Google wrote) are taken as given.
 */
export function parentOf(kind: ParentKind, serviceName: string, consumerProject = ""): Parent {
    const check = checkServiceName(serviceName);
    const service = check.ok ? check.value : serviceName;
    return kind === "service" ? { kind, serviceName: service } : { kind, serviceName: service, consumerProject };
}

// Roles and members: the forms IAM accepts in a binding (facts §1, §2). The emulator keeps its own table of
// them on purpose (emulator/rules.ts): it is Google's twin, not this package's.

const ROLE = /^(?:roles\/[A-Za-z0-9_.]{1,64}|projects\/[^/\s]+\/roles\/[A-Za-z0-9_.]{1,64}|organizations\/[0-9]+\/roles\/[A-Za-z0-9_.]{1,64})$/;
const EMAIL = /^[^\s@:]+@[^\s@:]+$/;
/** GKE workload identity: `serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA]`. */
const WORKLOAD_IDENTITY = /^[a-z][a-z0-9-]{4,28}[a-z0-9]\.svc\.id\.goog\[[a-z0-9-]{1,63}\/[a-z0-9.-]{1,253}\]$/;
const DELETED = /^deleted:(?:(?:user|group|serviceAccount):[^\s@:]+@[^\s@:?]+\?uid=[0-9]+|principal:\/\/\S+)$/;

/**
 * The member forms IAM accepts in a binding, stated once: the kinds (a bare name, or `kind:` and a value),
 * how the input rule names each, how the docs show the common ones, the test of the value, and whether IAM
 * compares the value without regard to letter case (emails and domains).
 */
const MEMBER_KINDS: readonly {
    kinds: readonly string[];
    rule: string;
    doc?: string;
    /** The test of the value after `kind:`; none for a bare kind (allUsers). */
    valid?(value: string): boolean;
    caseFree?: boolean;
    /** Whether the value is an email address (what someone who leaves out the kind writes alone). */
    email?: boolean;
}[] = [
    { kinds: ["user"], rule: "user:EMAIL", doc: "user:{email}", valid: (v) => EMAIL.test(v), caseFree: true, email: true },
    { kinds: ["serviceAccount"], rule: "serviceAccount:EMAIL, serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA]", doc: "serviceAccount:{email}",
        valid: (v) => EMAIL.test(v) || WORKLOAD_IDENTITY.test(v), caseFree: true, email: true },
    { kinds: ["group"], rule: "group:EMAIL", doc: "group:{email}", valid: (v) => EMAIL.test(v), caseFree: true, email: true },
    { kinds: ["domain"], rule: "domain:DOMAIN", doc: "domain:{domain}", valid: (v) => /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/i.test(v) && v.includes("."), caseFree: true },
    { kinds: ["principal"], rule: "principal://…", doc: "principal://…", valid: (v) => v.startsWith("//") && v.length > 2 && !/\s/.test(v) },
    { kinds: ["principalSet"], rule: "principalSet://…", doc: "principalSet://…", valid: (v) => v.startsWith("//") && v.length > 2 && !/\s/.test(v) },
    { kinds: ["allUsers"], rule: "allUsers", doc: "allUsers" },
    { kinds: ["allAuthenticatedUsers"], rule: "allAuthenticatedUsers", doc: "allAuthenticatedUsers" },
    { kinds: ["projectOwner", "projectEditor", "projectViewer"], rule: "projectOwner:/projectEditor:/projectViewer:PROJECT",
        valid: (v) => v.length > 0 && !/\s/.test(v) },
];

/** The member forms users write, as the docs list them (MEMBER_FORMS is the rule, which also takes the rarer forms). */
export const MEMBER_FORMS_DOC = MEMBER_KINDS.flatMap((k) => (k.doc ? [`\`${k.doc}\``] : [])).join(", ");

export const ROLE_FORMS = "a role is roles/NAME, projects/PROJECT/roles/NAME or organizations/ORG/roles/NAME";
export const MEMBER_FORMS = `a member is ${MEMBER_KINDS.slice(0, -1).map((k) => k.rule).join(", ")} or ${MEMBER_KINDS[MEMBER_KINDS.length - 1].rule}`;

const kindOf = (kind: string) => MEMBER_KINDS.find((k) => k.kinds.includes(kind));

export function isValidRole(role: string): boolean {
    return ROLE.test(role) && !role.includes("_withcond_");
}

/**
 * True for the principal forms IAM accepts in a binding. `deleted:` principals exist in policies IAM
 * returns, but a configuration must not grant to them (Terraform refuses them too).
 */
export function isValidMember(m: string, opts: { allowDeleted?: boolean } = {}): boolean {
    if (m.startsWith("deleted:")) return opts.allowDeleted === true && DELETED.test(m);
    const colon = m.indexOf(":");
    const known = kindOf(colon < 0 ? m : m.slice(0, colon));
    if (!known) return false;
    return known.valid ? colon > 0 && known.valid(m.slice(colon + 1)) : colon < 0;
}

/** The rule a role breaks, or undefined. */
export function roleProblem(role: string): string | undefined {
    if (role.includes("_withcond_")) {
        return `${JSON.stringify(role)} is how IAM shows a conditional binding read below policy version 3, not a ` +
            "role: give the real role and its condition";
    }
    return isValidRole(role) ? undefined : `${JSON.stringify(role)} is not a valid role: ${ROLE_FORMS}`;
}

/** The rule a member breaks, or undefined. */
export function memberProblem(member: string): string | undefined {
    if (member.startsWith("deleted:")) {
        return `${JSON.stringify(member)} is a deleted principal: IAM shows them in policies, but a grant to one ` +
            "cannot be configured; remove it";
    }
    if (isValidMember(member)) return undefined;
    const kindless = kindlessEmailFix(member);
    return `${JSON.stringify(member)} is not a valid member: ${kindless ? `${kindless}; ` : ""}${MEMBER_FORMS}`;
}

/**
 * What to write for an email address given without its kind (`alice@example.com`), or undefined for anything
 * else: IAM cannot tell a person from a group or a service account by the address alone, so the kind is named
 * and the likely one shown (a service account's address ends in `.gserviceaccount.com`).
 */
function kindlessEmailFix(member: string): string | undefined {
    if (member.includes(":") || !EMAIL.test(member)) return undefined;
    const likely = /\.gserviceaccount\.com$/i.test(member) ? "serviceAccount" : "user";
    const others = MEMBER_KINDS.filter((k) => k.email).flatMap((k) => k.kinds).filter((k) => k !== likely).map((k) => `${k}:`).join(" or ");
    return `an email address needs its kind in front, e.g. ${JSON.stringify(`${likely}:${member}`)} (or ${others})`;
}

/**
 * A member's identity as IAM compares it: email addresses and domains in lower case (IAM stores them so and
 * ignores their case, deleted or not), everything else — `principal://` identifiers above all — exactly as written.
 */
export function memberKey(member: string): string {
    let key = memberKeys.get(member);
    if (key === undefined) {
        const kind = member.replace(/^deleted:/, "").split(":")[0];
        key = kindOf(kind)?.caseFree && member.includes(":") ? member.toLowerCase() : member;
        // Remembered: a deployment compares the same members again and again (bounded, for a long-lived process).
        if (memberKeys.size >= 100_000) memberKeys.clear();
        memberKeys.set(member, key);
    }
    return key;
}
const memberKeys = new Map<string, string>();

export function sameMember(a: string, b: string): boolean {
    return a === b || memberKey(a) === memberKey(b);
}
