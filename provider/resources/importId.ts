// Import IDs, for the three shapes of resource (a Policy, a Binding, a Member) of either parent: the forms Pulumi
// GCP documents (space-separated: the parent, the role, the member, a condition's title) and the IDs Terraform
// writes into Pulumi GCP's state (slash-joined: `services/S[/consumers/P]/ROLE[/MEMBER]`, a condition appended as
// Terraform's key `/TITLE/DESCRIPTION/EXPRESSION`). Said once here: the forms, as the docs and every refusal list
// them, their parser, and the docs' example IDs.

import { EXAMPLE_VALUES } from "../functions/policyRecord";
import { checkProjectId, checkServiceName, isValidMember, ParentKind, roleProblem } from "../iam/names";
import type { ParentInputs } from "./parent";

/** What a resource's import ID holds beside its parent: nothing (a Policy), a role (a Binding), a role and a member. */
export type GrantShape = "policy" | "binding" | "member";

/** What an import ID names. A condition is named by its title only (Terraform's own import matches it so). */
export interface ImportedId {
    parent: ParentInputs;
    role?: string;
    member?: string;
    conditionTitle?: string;
}

/** The forms a parent takes in Pulumi GCP's documented IDs; the first is Terraform's, which its state's IDs start with. */
const PARENT_FORMS: Record<ParentKind, readonly string[]> = {
    service: ["services/{serviceName}", "{serviceName}"],
    consumer: ["services/{serviceName}/consumers/{consumerProject}", "{serviceName}/{consumerProject}"],
};

/** The parts after the parent, per shape. */
const PARTS: Record<GrantShape, readonly string[]> = { policy: [], binding: ["{role}"], member: ["{role}", "{member}"] };
const TITLE = "[{condition title}]";
const KEY = "[/{condition title}/{condition description}/{condition expression}]";

/** The accepted forms of an import ID: Pulumi GCP's documented ones, then Terraform's as Pulumi GCP's state holds it. */
export function importForms(kind: ParentKind, shape: GrantShape): string[] {
    if (shape === "policy") return [...PARENT_FORMS[kind]];
    return [
        ...PARENT_FORMS[kind].map((p) => [p, ...PARTS[shape], TITLE].join(" ")),
        [PARENT_FORMS[kind][0], ...PARTS[shape]].join("/") + KEY,
    ];
}

const formsList = (kind: ParentKind, shape: GrantShape) => importForms(kind, shape).map((f) => `\`${f}\``).join(", ");

/** The docs' `## Import` text: every form, and what its parts are. */
export function importDocText(kind: ParentKind, shape: GrantShape): string {
    const grant = shape === "policy" ? "" :
        " The space-separated forms are the ones Pulumi GCP documents; the slash-joined one is the ID Pulumi GCP keeps in " +
        "its state (Terraform's), so a resource's `id` there imports as it is. A condition is matched by its title.";
    const bare = kind === "consumer"
        ? " Pulumi GCP also lists `{consumer_project}` alone: that names no service, so it is refused with a message giving the forms above."
        : "";
    return `The ID takes one of these forms: ${formsList(kind, shape)}.${grant}${bare} Give the type's full token, as below.`;
}

/** The condition title the docs' example IDs name. */
const CONDITION_TITLE = "expires-2030";

/** One example ID per accepted form (the first space-separated form also with a condition's title). */
export function importDocIds(kind: ParentKind, shape: GrantShape): string[] {
    const fill = (f: string) => f.replace("{serviceName}", EXAMPLE_VALUES.serviceName).replace("{consumerProject}", EXAMPLE_VALUES.consumerProject);
    const rest = shape === "policy" ? [] : shape === "binding" ? [EXAMPLE_VALUES.role] : [EXAMPLE_VALUES.role, EXAMPLE_VALUES.member];
    const spaced = PARENT_FORMS[kind].map((p) => [fill(p), ...rest].join(" "));
    if (shape === "policy") return spaced;
    return [...spaced, `${spaced[0]} ${CONDITION_TITLE}`, [fill(PARENT_FORMS[kind][0]), ...rest].join("/")];
}

/**
 * The import ID in the first documented form (`services/S[/consumers/P] [ROLE [MEMBER]] [TITLE]`): the one form
 * that reads one way whatever the role, member or condition hold (a title's spaces are its last words).
 */
export function importIdOf(kind: ParentKind, shape: GrantShape, named: ImportedId): string {
    const parent = `services/${named.parent.serviceName}${kind === "consumer" ? `/consumers/${named.parent.consumerProject ?? ""}` : ""}`;
    if (shape === "policy") return parent;
    return [parent, named.role ?? "", ...(shape === "member" ? [named.member ?? ""] : []), ...(named.conditionTitle !== undefined ? [named.conditionTitle] : [])].join(" ");
}

/** What an import ID's refusal says: what is wrong, then every form that works. */
function refusal(kind: ParentKind, shape: GrantShape, id: string, why: string): string {
    const shown = id.length > 200 ? `${id.slice(0, 200)}…` : id;
    return `the import ID ${JSON.stringify(shown)} ${why}. Accepted forms: ${formsList(kind, shape)}`;
}

/** The parent's checked names, or the rule one breaks. */
function checkedParent(kind: ParentKind, service: string, consumer: string | undefined): ParentInputs | string {
    const s = checkServiceName(service);
    if (!s.ok) return `names no valid service: ${s.rule}`;
    if (kind === "service") return { serviceName: s.value };
    const p = checkProjectId(consumer ?? "");
    return p.ok ? { serviceName: s.value, consumerProject: p.value } : `names no valid consumer project: ${p.rule}`;
}

/** A whole word as a parent (`services/S`, `S`; `services/S/consumers/P`, `S/P`); undefined when not of a parent's shape. */
function spacedParent(kind: ParentKind, word: string): ParentInputs | string | undefined {
    const parts = word.replace(/^services\//, "").split("/");
    if (kind === "service") return parts.length === 1 ? checkedParent(kind, parts[0], undefined) : undefined;
    if (parts.length === 3 && parts[1] === "consumers") return checkedParent(kind, parts[0], parts[2]);
    return parts.length === 2 ? checkedParent(kind, parts[0], parts[1]) : undefined;
}

/** A role: `roles/R`, `projects/P/roles/R` or `organizations/O/roles/R`, then what follows it after a slash. */
const ROLE_THEN = /^((?:projects\/[^/]+\/|organizations\/[^/]+\/)?roles\/[^/]+)(?:\/([\s\S]*))?$/;

/** Text that holds no whitespace, quote or parenthesis: a member always, a CEL expression almost never. */
const plain = (s: string) => !/[\s"'()]/.test(s);

/** Whether `m` is a whole member as IAM writes it: a form IAM takes, with slashes only where that form has them. */
function wholeMember(m: string): boolean {
    if (!plain(m) || !isValidMember(m, { allowDeleted: true })) return false;
    // `principal://…` and `principalSet://…` hold slashes; a workload identity holds one inside `[NAMESPACE/KSA]`.
    return /^(?:deleted:)?principal(?:Set)?:\/\//.test(m) || !m.replace(/\[[^\]]*\]/g, "").includes("/");
}

/**
 * The titles Terraform's condition key `TITLE/DESCRIPTION/EXPRESSION` may hold (title and expression not empty),
 * the first segment first: a title, a description and an expression may each hold slashes, so a key reads as many
 * titles as it has slashes to spare.
 */
function keyTitles(key: string): string[] {
    const titles: string[] = [];
    for (let at = key.indexOf("/"); at > 0; at = key.indexOf("/", at + 1)) {
        const rest = key.slice(at + 1);
        const last = rest.lastIndexOf("/");
        if (last >= 0 && last < rest.length - 1) titles.push(key.slice(0, at));
    }
    return titles;
}

/**
 * At most this many readings of one slash-joined ID are tried against the policy (all against the one read a
 * command's Reads share); more must be said in the space-separated form.
 */
export const MAX_READINGS = 256;

/**
 * The readings of a member then, optionally, a condition's key (Terraform's member ID after the role), the
 * likeliest first: the whole text as a member, then each whole member before a slash (the longest first) with each
 * title the key after it may hold. Only a `principal://` member holds slashes itself, so only it reads several ways
 * on the member's side.
 */
function membersThenCondition(text: string): { member: string; conditionTitle?: string }[] {
    const readings: { member: string; conditionTitle?: string }[] = wholeMember(text) ? [{ member: text }] : [];
    for (let at = text.lastIndexOf("/"); at > 0; at = text.lastIndexOf("/", at - 1)) {
        const member = text.slice(0, at);
        if (wholeMember(member)) readings.push(...keyTitles(text.slice(at + 1)).map((conditionTitle) => ({ member, conditionTitle })));
    }
    return readings;
}

/**
 * A Terraform (slash-joined) ID: `services/S[/consumers/P]`, then the role, the member and a condition's key;
 * every reading, the likeliest first (a reader of the policy tells which one Google holds).
 */
function parseTerraform(kind: ParentKind, shape: GrantShape, id: string): ImportedId[] | string {
    const m = /^services\/([^/\s]+)(?:\/consumers\/([^/\s]+))?(?:\/([\s\S]*))?$/.exec(id);
    if (!m) return "does not start with a parent";
    const [, service, consumer, after] = m;
    if (kind === "service" && consumer !== undefined) {
        return "names a consumer project of a service: import it as the Consumers resource of the same kind";
    }
    if (kind === "consumer" && consumer === undefined) return "names no consumer project (`services/{serviceName}/consumers/{consumerProject}…`)";
    const parent = checkedParent(kind, service, consumer);
    if (typeof parent === "string") return parent;
    if (shape === "policy") return after === undefined ? [{ parent }] : "holds more than the parent";
    const r = after === undefined ? null : ROLE_THEN.exec(after);
    if (!r) return "names no role (`roles/NAME`, `projects/PROJECT/roles/NAME` or `organizations/ORG/roles/NAME`) after the parent";
    const [, role, rest] = r;
    const problem = roleProblem(role);
    if (problem) return `names no valid role: ${problem}`;
    if (shape === "binding") {
        if (rest === undefined) return [{ parent, role }];
        const titles = keyTitles(rest);
        return titles.length === 0
            ? "holds, after the role, no condition key `{title}/{description}/{expression}` (title and expression not empty)"
            : titles.map((conditionTitle) => ({ parent, role, conditionTitle }));
    }
    if (rest === undefined) return "names no member after the role";
    const members = membersThenCondition(rest);
    return members.length === 0
        ? "holds, after the role, no member (e.g. `user:{email}`), or no condition key `{title}/{description}/{expression}` after it"
        : members.map((member) => ({ parent, role, ...member }));
}

/** A space-separated ID (Pulumi GCP's documented form), after its parent. */
function parseSpaced(shape: GrantShape, parent: ParentInputs, words: string[]): ImportedId | string {
    if (shape === "policy") return words.length === 0 ? { parent } : "holds more than the parent";
    const [role, ...rest] = words;
    if (role === undefined) return "names no role after the parent";
    const problem = roleProblem(role);
    if (problem) return `names no valid role: ${problem}`;
    if (shape === "binding") return { parent, role, ...(rest.length ? { conditionTitle: rest.join(" ") } : {}) };
    const [member, ...title] = rest;
    if (member === undefined) return "names no member after the role";
    if (!isValidMember(member, { allowDeleted: true })) return `names no valid member: ${JSON.stringify(member)}`;
    // Condition titles may hold spaces: the words left are the title, joined again (as Terraform does).
    return { parent, role, member, ...(title.length ? { conditionTitle: title.join(" ") } : {}) };
}

/**
 * Every reading of an import ID, the likeliest first (one, but for a slash-joined ID whose condition key or
 * `principal://` member holds slashes: Terraform's IDs join parts that may hold slashes themselves), or a refusal
 * naming what is wrong and every accepted form. A reader of the policy takes the one reading Google holds.
 */
export function importReadings(kind: ParentKind, shape: GrantShape, id: string): ImportedId[] | string {
    const text = id.trim();
    const words = text.split(/\s+/).filter((w) => w !== "");
    const parent = words.length ? spacedParent(kind, words[0]) : undefined;
    const spaced = (p: ParentInputs | string) => {
        const r = typeof p === "string" ? p : parseSpaced(shape, p, words.slice(1));
        return typeof r === "string" ? r : [r];
    };
    const parsed = words.length === 0 ? "is empty"
        : parent !== undefined ? spaced(parent)
            // Not a parent first: Terraform's ID, whose condition expression may hold spaces (so the whole text).
            : text.startsWith("services/") ? parseTerraform(kind, shape, text)
                : kind === "consumer" && words.length === 1 && !text.includes("/")
                    ? "names no service (Pulumi GCP's `{consumer_project}` alone cannot say which)"
                    : "does not start with a parent";
    if (typeof parsed !== "string" && parsed.length > MAX_READINGS) {
        return refusal(kind, shape, id, `reads ${parsed.length} ways (its condition key holds many slashes); give it in the space-separated form, which reads one way`);
    }
    return typeof parsed === "string" ? refusal(kind, shape, id, parsed) : parsed;
}

/** What an import ID names (its likeliest reading: see importReadings), or a refusal naming what is wrong and every accepted form. */
export function parseImportId(kind: ParentKind, shape: GrantShape, id: string): ImportedId | string {
    const r = importReadings(kind, shape, id);
    return typeof r === "string" ? r : r[0];
}
