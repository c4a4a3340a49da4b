// `pulumi-resource-cloud migrate-from-terraform`: turns a Terraform state (format version 4: Terraform 0.13+ and
// OpenTofu) holding the six Endpoints IAM resources of the `google` / `google-beta` providers into the input of
// `pulumi import --file`: one entry per instance, this package's type, an import ID built from the instance's
// attributes (never from Terraform's slash-joined `id`, which reads several ways), and a Pulumi name made from the
// Terraform address, the address kept beside it. Everything else in the state is left out and said so. A pure
// function: it reads and sends nothing; anything it cannot read whole is refused, naming the address.

import { checkProjectId, checkServiceName, isValidMember, ParentKind, roleProblem } from "../iam/names";
import { parsePolicyData } from "../iam/policy";
import type { PropertyMap, Value } from "../declare/properties";
import { PROVIDER_TYPE } from "../package/tokens";
import { PACKAGE_VERSION } from "../package/version";
import { GrantShape, ImportedId, importIdOf } from "../resources/importId";
import { MIGRATED_TYPES, MigrationError } from "./fromGcp";

/** The state format versions this command reads (`terraform state pull` and a local terraform.tfstate). */
export const STATE_VERSIONS = [4] as const;

/** Terraform's name of one of our types: `google_endpoints_service[_consumers]_iam_{policy,binding,member}`. */
const terraformType = (kind: ParentKind, shape: GrantShape) => `google_endpoints_service${kind === "consumer" ? "_consumers" : ""}_iam_${shape}`;

/** The six Terraform types moved, each with this package's token and what its attributes hold. */
export const TERRAFORM_TYPES = MIGRATED_TYPES.map((t) => ({ terraform: terraformType(t.kind, t.shape), ours: t.ours, kind: t.kind, shape: t.shape }));

/** The provider types whose resources are read (any registry host; the `hashicorp` namespace). */
const PROVIDERS = ["google", "google-beta"];

/** One entry of the import file, with the Terraform address it came from (for people: `pulumi import` ignores it). */
export interface ImportEntry {
    type: string;
    name: string;
    id: string;
    provider?: string;
    version: string;
    terraformAddress: string;
}

/** A resource instance the file leaves out, and why. */
export interface LeftOut {
    address: string;
    reason: string;
}

export interface TerraformMigration {
    /** The `pulumi import --file` input. */
    file: { nameTable?: Record<string, string>; resources: ImportEntry[] };
    leftOut: LeftOut[];
}

export interface TerraformOptions {
    /** Where the state came from, for messages (a file name, or "stdin"). */
    source?: string;
    /** An explicit provider for the imports: `NAME=URN`, or its URN alone (its name then taken from the URN). */
    provider?: string;
}

const isObject = (v: Value | undefined): v is PropertyMap => typeof v === "object" && v !== null && !Array.isArray(v);

/** The provider's type name in a state's provider address (`provider["registry.terraform.io/hashicorp/google"]`, `….alias`, Terraform 0.12's `provider.google`). */
function providerOf(address: string): { type: string; namespace: string } | undefined {
    const m = /(?:^|\.)provider\["(?:([^"/]+)\/)?(?:([^"/]+)\/)?([^"/]+)"\](?:\.[^.]+)?$/.exec(address);
    if (m) return { type: m[3], namespace: m[2] ?? (m[1] !== undefined ? m[1] : "hashicorp") };
    const old = /(?:^|\.)provider\.([a-z0-9-]+)(?:\.[^.]+)?$/.exec(address);
    return old ? { type: old[1], namespace: "hashicorp" } : undefined;
}

/** An instance's address part: `[0]` (count), `["key"]` (for_each), nothing without either. */
function indexPart(key: Value | undefined): string {
    if (typeof key === "number") return `[${key}]`;
    if (typeof key === "string") return `[${JSON.stringify(key)}]`;
    return "";
}

/**
 * The words of a Pulumi name for an address: each module's name and key, the resource's name and key. Keys keep
 * their text (letters, digits, `_` and `-`; any other run of characters becomes one `_`), so
 * `module.tenants["acme"].google_…_member.bob["x@y.com"]` → `tenants-acme-bob-x_y_com`.
 */
function nameWords(module: string, name: string, key: Value | undefined): string[] {
    const word = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "_";
    const words: string[] = [];
    for (const m of module.matchAll(/module\.([^.[\]]+)(?:\[(\d+|"(?:[^"\\]|\\.)*")\])?/g)) {
        words.push(word(m[1]));
        if (m[2] !== undefined) words.push(word(m[2].startsWith("\"") ? JSON.parse(m[2]) as string : m[2]));
    }
    words.push(word(name));
    if (key !== undefined && key !== null) words.push(word(String(key)));
    return words;
}

/** The explicit provider `--provider` names: its name in the file's nameTable and its URN. */
function explicitProvider(text: string): { name: string; urn: string } {
    const eq = text.indexOf("=");
    const [name, urn] = eq > 0 && !text.slice(0, eq).includes(":") ? [text.slice(0, eq), text.slice(eq + 1)] : ["", text];
    // urn:pulumi:STACK::PROJECT::[PARENT-TYPES$]TYPE::NAME
    const parts = urn.split("::");
    const type = parts[2]?.split("$").pop();
    if (!urn.startsWith("urn:pulumi:") || parts.length < 4 || type !== PROVIDER_TYPE) {
        throw new MigrationError(`--provider ${JSON.stringify(text)} names no ${PROVIDER_TYPE} resource: give NAME=URN (or the URN) of a ` +
            `${PROVIDER_TYPE} provider of the stack, e.g. prod=urn:pulumi:dev::shop::${PROVIDER_TYPE}::prod`);
    }
    return { name: name || parts.slice(3).join("::"), urn };
}

/** Makes the names unique: a name addresses of several types share gets its type's short name, then a number. */
function uniqueNames(words: string[][], shortTypes: string[]): string[] {
    const base = words.map((w) => w.join("-"));
    const count = (names: string[]) => names.reduce((m, n) => m.set(n, (m.get(n) ?? 0) + 1), new Map<string, number>());
    const types = new Map<string, Set<string>>();
    base.forEach((n, i) => types.set(n, (types.get(n) ?? new Set()).add(shortTypes[i])));
    const typed = base.map((n, i) => ((types.get(n)?.size ?? 0) > 1 ? `${n}-${shortTypes[i]}` : n));
    const again = count(typed);
    // A number goes after a name still shared, skipping any name already given out.
    const taken = new Set(typed.filter((n) => again.get(n) === 1));
    const next = new Map<string, number>();
    return typed.map((n) => {
        if (again.get(n) === 1) return n;
        let k = next.get(n) ?? 1;
        while (taken.has(`${n}-${k}`)) k++;
        next.set(n, k + 1);
        taken.add(`${n}-${k}`);
        return `${n}-${k}`;
    });
}

/** The import ID of one instance, from its attributes (an instance of `t` at `address`); a MigrationError when they are incomplete. */
function instanceId(t: (typeof TERRAFORM_TYPES)[number], attrs: PropertyMap, where: string): string {
    const wrong = (attr: string, what: string) =>
        new MigrationError(`${where}: \`${attr}\` ${what}; the state is not of ${t.terraform} as the google provider writes it (run \`terraform refresh\`, or pull the state again)`);
    const str = (attr: string): string => {
        const v = attrs[attr];
        if (typeof v !== "string" || v === "") throw wrong(attr, v === undefined || v === null || v === "" ? "is missing" : "is not a string");
        return v;
    };
    // The service resources hold `services/{svc}` (what the provider writes back); the consumer ones `{svc}`.
    const service = checkServiceName(str("service_name"));
    if (!service.ok) throw wrong("service_name", `is not a service name: ${service.rule}`);
    let consumerProject: string | undefined;
    if (t.kind === "consumer") {
        // Written back as `services/{svc}/consumers/{project}`; a bare project ID is the configured form.
        const raw = str("consumer_project");
        const m = /^services\/([^/]+)\/consumers\/([^/]+)$/.exec(raw);
        if (m && m[1] !== service.value) throw wrong("consumer_project", `names service ${JSON.stringify(m[1])}, not the \`service_name\` ${JSON.stringify(service.value)}`);
        const project = checkProjectId(m ? m[2] : raw);
        if (!project.ok) throw wrong("consumer_project", `is not a consumer project: ${project.rule}`);
        consumerProject = project.value;
    }
    const named: ImportedId = { parent: { serviceName: service.value, ...(consumerProject !== undefined ? { consumerProject } : {}) } };
    if (t.shape === "policy") {
        const parsed = parsePolicyData(str("policy_data"));
        if ("problem" in parsed) throw wrong("policy_data", `is not a policy (${parsed.problem})`);
        return importIdOf(t.kind, t.shape, named);
    }
    const role = str("role");
    const badRole = roleProblem(role);
    if (badRole) throw wrong("role", `is not a role: ${badRole}`);
    named.role = role;
    if (t.shape === "member") {
        const member = str("member");
        if (!isValidMember(member, { allowDeleted: true })) throw wrong("member", `${JSON.stringify(member)} is not a member`);
        named.member = member;
    } else {
        const members = attrs.members;
        if (!Array.isArray(members) || !members.every((m): m is string => typeof m === "string")) throw wrong("members", "is missing (or not a list of strings)");
    }
    const c = attrs.condition ?? [];
    if (!Array.isArray(c) || c.length > 1 || !c.every(isObject)) throw wrong("condition", "is not a list of at most one block");
    if (c.length) {
        const { title, expression } = c[0];
        if (typeof title !== "string" || title === "" || typeof expression !== "string" || expression === "") {
            throw wrong("condition", "has no `title` or no `expression`");
        }
        // The ID names a condition by its title, its words as the ID's last ones: they must come back the same.
        if (title.trim().split(/\s+/).join(" ") !== title) {
            throw wrong("condition", `has the title ${JSON.stringify(title)}, whose spacing no import ID can carry: import it by hand ` +
                "(`pulumi import` with Terraform's slash-joined ID)");
        }
        named.conditionTitle = title;
    }
    return importIdOf(t.kind, t.shape, named);
}

/** The import file for a Terraform state (parsed JSON), or a MigrationError naming what is wrong. */
export function migrateFromTerraform(state: Value, opts: TerraformOptions = {}): TerraformMigration {
    const source = opts.source ?? "the state";
    if (!isObject(state) || state.version === undefined || !("resources" in state || "terraform_version" in state || "lineage" in state)) {
        throw new MigrationError(`${source} is not a Terraform state (a JSON object with \`version\`, \`terraform_version\` and \`resources\`): ` +
            "give `terraform state pull`'s output or a terraform.tfstate file");
    }
    if (!STATE_VERSIONS.some((v) => v === state.version)) {
        throw new MigrationError(`${source} is a Terraform state of format version ${JSON.stringify(state.version)}; this command reads version ` +
            `${STATE_VERSIONS.join(", ")} (Terraform 0.13 and later, OpenTofu): run \`terraform state pull\` with a current Terraform, which upgrades it`);
    }
    const resources = state.resources ?? [];
    if (!Array.isArray(resources) || !resources.every(isObject)) throw new MigrationError(`${source}: \`resources\` is not a list of resources`);
    const provider = opts.provider ? explicitProvider(opts.provider) : undefined;

    const leftOut: LeftOut[] = [];
    const found: { words: string[]; short: string; entry: Omit<ImportEntry, "name"> }[] = [];
    for (const r of resources) {
        const module = typeof r.module === "string" ? r.module : "";
        const mode = r.mode === "data" ? "data" : "managed";
        const type = String(r.type ?? "");
        const name = String(r.name ?? "");
        const base = `${module ? `${module}.` : ""}${mode === "data" ? "data." : ""}${type}.${name}`;
        const instances = Array.isArray(r.instances) ? r.instances.filter(isObject) : [];
        const addresses = instances.length ? instances.map((i) => `${base}${indexPart(i.index_key)}`) : [base];
        const t = TERRAFORM_TYPES.find((x) => x.terraform === type);
        const p = providerOf(String(r.provider ?? ""));
        const reason = mode === "data" ? "a data source: it reads, and manages nothing"
            : type === "google_endpoints_service" ? "the Endpoints service itself, not its IAM policy: this package manages IAM only (keep it in Terraform, or move it with Pulumi GCP)"
                : !t ? "not one of the six Endpoints IAM types"
                    : !p || !PROVIDERS.includes(p.type) || p.namespace !== "hashicorp"
                        ? `of the provider ${JSON.stringify(String(r.provider ?? ""))}, not hashicorp/google or hashicorp/google-beta` : undefined;
        if (reason !== undefined || !t) {
            leftOut.push(...addresses.map((address) => ({ address, reason: reason ?? "" })));
            continue;
        }
        for (const [n, instance] of instances.entries()) {
            const address = addresses[n];
            const where = `${source}: ${address}`;
            if (Array.isArray(instance.deposed) || typeof instance.deposed === "string") {
                throw new MigrationError(`${where} is a deposed instance (a replacement Terraform did not finish): run \`terraform apply\` first`);
            }
            if (instance.status === "tainted") {
                throw new MigrationError(`${where} is tainted (Terraform would replace it): run \`terraform apply\` or \`terraform untaint '${address}'\` first`);
            }
            if (!isObject(instance.attributes)) {
                throw new MigrationError(`${where} has no \`attributes\` (a state written by Terraform 0.11 or earlier holds \`attributes_flat\`): pull the state with a current Terraform`);
            }
            const id = instanceId(t, instance.attributes, where);
            found.push({
                words: nameWords(module, name, instance.index_key),
                short: `${t.kind === "consumer" ? "consumers-" : ""}${t.shape}`,
                entry: { type: t.ours, id, ...(provider ? { provider: provider.name } : {}), version: PACKAGE_VERSION, terraformAddress: address },
            });
        }
    }
    if (!found.length) {
        throw new MigrationError(`${source} holds no instance of ${TERRAFORM_TYPES.map((t) => t.terraform).join(", ")} ` +
            `(of hashicorp/google or hashicorp/google-beta)${leftOut.length ? `; it has ${leftOut.length} other instance(s)` : ""}`);
    }
    const names = uniqueNames(found.map((f) => f.words), found.map((f) => f.short));
    const entries = found.map((f, i) => {
        const { type, id, terraformAddress, version } = f.entry;
        return { type, name: names[i], id, ...(f.entry.provider ? { provider: f.entry.provider } : {}), version, terraformAddress };
    });
    return { file: { ...(provider ? { nameTable: { [provider.name]: provider.urn } } : {}), resources: entries }, leftOut };
}
