// The emulator's own tables of what Google accepts, each from the Google document it names. Nothing here is
// shared with the provider: the emulator is the judge of the provider, so a rule wrong in one must not be
// wrong in the other by construction.

// ---- resource names --------------------------------------------------------------------------------------
// Service Management's ManagedService.serviceName: "a DNS-like name … must be a valid DNS name" (discovery
// document servicemanagement.v1, schema ManagedService); labels per RFC 1035 as Service Management documents
// them for Endpoints service names: lowercase letter first, lowercase letters, digits and dashes, ≤ 63 each.
const DNS_LABEL = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_SERVICE_NAME = 253;

// Resource Manager's project ID rule ("Creating and managing projects": 6 to 30 characters, lowercase letters,
// digits or hyphens, starting with a letter, not ending with a hyphen); older IDs are domain-scoped
// (`example.com:my-project`).
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export function isServiceName(name: string): boolean {
    return name.length > 0 && name.length <= MAX_SERVICE_NAME && name.split(".").every((l) => DNS_LABEL.test(l));
}

export function isProjectId(id: string): boolean {
    const colon = id.lastIndexOf(":");
    return colon < 0 ? PROJECT_ID.test(id) : DOMAIN.test(id.slice(0, colon)) && PROJECT_ID.test(id.slice(colon + 1));
}

// ---- roles -------------------------------------------------------------------------------------------------
// Roles a Service Management service or consumer policy can grant: the basic roles and the Service Management
// predefined roles ("IAM basic and predefined roles reference", sections Basic and Service Management). Any
// other `roles/…` name is answered "not supported for this resource", as IAM does for a role whose
// permissions do not apply to the resource type.
export const BASIC_ROLES: ReadonlySet<string> = new Set(["roles/owner", "roles/editor", "roles/viewer"]);
export const PREDEFINED_ROLES: ReadonlySet<string> = new Set([
    ...BASIC_ROLES,
    "roles/servicemanagement.admin",
    "roles/servicemanagement.configEditor",
    "roles/servicemanagement.quotaAdmin",
    "roles/servicemanagement.quotaViewer",
    "roles/servicemanagement.reporter",
    "roles/servicemanagement.serviceConsumer",
    "roles/servicemanagement.serviceController",
]);
// Custom roles ("Creating and managing custom roles": role ID of letters, digits, `_` and `.`, 3 to 64
// characters) live under a project or an organization.
const CUSTOM_ROLE = /^(?:projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]|organizations\/[0-9]{1,20})\/roles\/[A-Za-z0-9_.]{3,64}$/;

/** Why IAM refuses a role in a binding, or undefined. */
export function roleProblem(role: string): string | undefined {
    if (PREDEFINED_ROLES.has(role) || CUSTOM_ROLE.test(role)) return undefined;
    if (role.includes("_withcond_")) {
        return `Role ${role} is not a role: it names a conditional binding read at policy version 1. ` +
            "Read the policy with requestedPolicyVersion 3 and write it back with version 3.";
    }
    if (role.startsWith("roles/")) return `Role ${role} is not supported for this resource.`;
    return `Role ${role} is not a valid role name.`;
}

// ---- members -----------------------------------------------------------------------------------------------
// Every form of the discovery document's description of `Binding.members` (servicemanagement.v1), plus the
// legacy convenience values (`projectOwner:` …) that policies of older resources still hold.
const EMAIL = String.raw`[A-Za-z0-9!#$%&'*+/=?^_\`{|}~.-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`;
const WORKFORCE = String.raw`//iam\.googleapis\.com/locations/global/workforcePools/[a-z0-9-]{4,63}`;
const WORKLOAD = String.raw`//iam\.googleapis\.com/projects/[0-9]{1,20}/locations/global/workloadIdentityPools/[a-z0-9-]{4,32}`;
const SUBJECT = String.raw`/subject/[^\s]+`;
const SET_TAIL = String.raw`/(?:group/[^\s/]+|attribute\.[A-Za-z0-9_]+/[^\s]+|\*)`;
const UID = String.raw`\?uid=[0-9]{1,21}`;

/** One member form: its prefix (kind), its pattern, and how it reads in an error. */
interface MemberForm {
    kind: string;
    pattern: RegExp;
    /** A principal IAM counts against the 250 groups-and-domains limit. */
    groupLike?: boolean;
    /** An account a person or workload owns, which can be deleted (and so rewritten into `deleted:`). */
    deletable?: boolean;
    /** Email-bearing forms whose address IAM compares and stores case-insensitively (lower case). */
    email?: boolean;
}

const MEMBER_FORMS: readonly MemberForm[] = [
    { kind: "allUsers", pattern: /^allUsers$/ },
    { kind: "allAuthenticatedUsers", pattern: /^allAuthenticatedUsers$/ },
    { kind: "user", pattern: new RegExp(`^user:${EMAIL}$`), deletable: true, email: true },
    { kind: "serviceAccount", pattern: new RegExp(`^serviceAccount:${EMAIL}$`), deletable: true, email: true },
    // GKE workload identity: serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA]
    { kind: "serviceAccount", pattern: /^serviceAccount:[a-z][a-z0-9-]{4,28}[a-z0-9]\.svc\.id\.goog\[[a-z0-9-]{1,63}\/[a-z0-9.-]{1,253}\]$/ },
    { kind: "group", pattern: new RegExp(`^group:${EMAIL}$`), groupLike: true, deletable: true, email: true },
    { kind: "domain", pattern: /^domain:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/, groupLike: true },
    { kind: "principal", pattern: new RegExp(`^principal:(?:${WORKFORCE}|${WORKLOAD})${SUBJECT}$`), deletable: true },
    { kind: "principalSet", pattern: new RegExp(`^principalSet:(?:${WORKFORCE}|${WORKLOAD})${SET_TAIL}$`) },
    { kind: "deleted", pattern: new RegExp(`^deleted:(?:user|serviceAccount|group):${EMAIL}${UID}$`) },
    { kind: "deleted", pattern: new RegExp(`^deleted:principal:${WORKFORCE}${SUBJECT}$`) },
    { kind: "projectOwner", pattern: /^projectOwner:[a-z][a-z0-9-]{4,28}[a-z0-9]$/ },
    { kind: "projectEditor", pattern: /^projectEditor:[a-z][a-z0-9-]{4,28}[a-z0-9]$/ },
    { kind: "projectViewer", pattern: /^projectViewer:[a-z][a-z0-9-]{4,28}[a-z0-9]$/ },
];

function formOf(member: string): MemberForm | undefined {
    return MEMBER_FORMS.find((f) => f.pattern.test(member));
}

export function isMember(member: string): boolean {
    return formOf(member) !== undefined;
}

export function isGroupLike(member: string): boolean {
    return formOf(member)?.groupLike === true;
}

/** The public principals IAM refuses in a conditional binding ("Overview of IAM Conditions"). */
export const PUBLIC_PRINCIPALS: ReadonlySet<string> = new Set(["allUsers", "allAuthenticatedUsers"]);

/** A member as IAM stores it: the address of email forms in lower case (IAM ignores their case). */
export function storedMember(member: string): string {
    const form = formOf(member);
    if (!form?.email) return member;
    const colon = member.indexOf(":");
    return member.slice(0, colon + 1) + member.slice(colon + 1).toLowerCase();
}

/** True for principals an account deletion rewrites (user, service account, group, workforce subject). */
export function isDeletable(member: string): boolean {
    return formOf(member)?.deletable === true;
}

/** The `deleted:` form IAM writes for a principal deleted with unique id `uid`. */
export function deletedForm(member: string, uid: string): string {
    return member.startsWith("principal:") ? `deleted:${member}` : `deleted:${member}?uid=${uid}`;
}

// ---- permissions -------------------------------------------------------------------------------------------
// The Service Management permissions a service or consumer policy can grant ("IAM permissions reference",
// servicemanagement.*). testIamPermissions answers with the subset of these the caller holds.
export const PERMISSIONS: ReadonlySet<string> = new Set([
    "servicemanagement.services.bind",
    "servicemanagement.services.check",
    "servicemanagement.services.create",
    "servicemanagement.services.delete",
    "servicemanagement.services.get",
    "servicemanagement.services.getIamPolicy",
    "servicemanagement.services.list",
    "servicemanagement.services.quota",
    "servicemanagement.services.report",
    "servicemanagement.services.setIamPolicy",
    "servicemanagement.services.update",
    "servicemanagement.consumerSettings.get",
    "servicemanagement.consumerSettings.getIamPolicy",
    "servicemanagement.consumerSettings.list",
    "servicemanagement.consumerSettings.setIamPolicy",
    "servicemanagement.consumerSettings.update",
]);

// ---- limits ------------------------------------------------------------------------------------------------
// IAM "Quotas and limits", section Allow policies.
export const LIMITS = {
    /** Principals in all role bindings and audit logging exemptions of one policy (each occurrence counts). */
    principals: 1500,
    /** Google groups and domains among them. */
    groupsAndDomains: 250,
    /** Role bindings that grant the same role to the same principal with different conditions. */
    conditionalBindingsPerRoleAndPrincipal: 20,
    /** Logical operators (`&&`, `||`, `!`) in one condition expression. */
    logicalOperators: 12,
} as const;

// ---- audit logs --------------------------------------------------------------------------------------------
// AuditLogConfig.logType (discovery document: the LogType enum; LOG_TYPE_UNSPECIFIED is its default, not a log
// type a policy can hold).
export const LOG_TYPES: ReadonlySet<string> = new Set(["ADMIN_READ", "DATA_WRITE", "DATA_READ"]);
