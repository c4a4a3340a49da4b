// `pulumi-resource-cloud migrate-from-gcp`: turns a `pulumi stack export` of a stack that uses Pulumi GCP's six
// Endpoints IAM resources into the `pulumi stack import` input of the same stack on this package. Each
// `gcp:endpoints/…` IAM resource becomes its `cloud:endpoints/…` twin under the same name, with the inputs and
// outputs a refresh by this plugin would write, this package's ID instead of Terraform's, and a `cloud` provider:
// the default one for those on Pulumi GCP's default provider, and beside each explicit gcp provider they use, a
// `cloud` one of the same name with the settings this package shares. A URN carries its ancestors' types, so a
// migrated resource's descendants (a Member parented by a Binding, anything under it) are renamed too, and every
// reference to a renamed URN follows: parent, dependencies, propertyDependencies, deletedWith, aliases, provider
// references. The options the engine keeps in state (protect, retainOnDelete, customTimeouts, deletedWith) carry
// over as they are. Anything it does not understand is refused, naming it, and nothing is written.

import { randomUUID } from "crypto";
import { configProperties, isConfigKey, isEngineKey } from "../protocol/config";
import { resources as definitions } from "../resources";
import { grantId } from "../iam/names";
import type { GrantShape } from "../resources/importId";
import { checkServiceName, Parent, parentName, ParentKind } from "../iam/names";
import { canonicalCondition, Condition, parsePolicyData, policyData } from "../iam/policy";
import { isSecret, PropertyMap, SECRET_SIG_KEY, SECRET_SIG_VALUE, Value } from "../declare/properties";
import { PROVIDER_TYPE } from "../package/tokens";
import { PACKAGE_NAME, PACKAGE_VERSION, PLUGIN_DOWNLOAD_URL } from "../package/version";

/** The checkpoint versions `pulumi stack export` writes that this command reads. */
const DEPLOYMENT_VERSIONS = [3] as const;

/**
 * The migrated types, one per resource this package defines: Pulumi GCP's token, ours (the same module and name,
 * the package renamed), parent and shape (told by the inputs the definition declares).
 */
export const MIGRATED_TYPES = definitions.map((r) => {
    const kind: ParentKind = "consumerProject" in r.inputs ? "consumer" : "service";
    const shape: GrantShape = "policyData" in r.inputs ? "policy" : "members" in r.inputs ? "binding" : "member";
    return { gcp: `gcp${r.token.slice(PACKAGE_NAME.length)}`, ours: r.token, kind, shape };
});
export const GCP_TYPES: readonly string[] = MIGRATED_TYPES.map((t) => t.gcp);

/** The type of this package's provider resources. */

/** Why a migration is refused; nothing is written then. */
export class MigrationError extends Error {}

const isObject = (v: Value | undefined): v is PropertyMap => typeof v === "object" && v !== null && !Array.isArray(v);

/** A property's value, a plaintext secret unwrapped (and said so); a ciphertext cannot be read. */
function plain(v: Value | undefined, where: string): { value: Value | undefined; secret: boolean } {
    if (!isSecret(v)) return { value: v, secret: false };
    if (typeof v.plaintext !== "string") {
        throw new MigrationError(`${where} is an encrypted secret: export the stack with \`pulumi stack export --show-secrets\``);
    }
    return { value: JSON.parse(v.plaintext) as Value, secret: true };
}

/** A secret as a checkpoint holds it (`plaintext`, the value's JSON; the protocol's form holds `value`). */
const secretOf = (v: Value): PropertyMap => ({ [SECRET_SIG_KEY]: SECRET_SIG_VALUE, plaintext: JSON.stringify(v) });

export interface MigrateOptions {
    /**
     * The provider reference (`URN::ID`) of an explicit `cloud` provider in the export, for the resources on Pulumi
     * GCP's default provider; default: one made in the file.
     */
    provider?: string;
    /** The ID of the default provider made (a random UUID otherwise). */
    providerId?: string;
    /** The IDs of the explicit providers made, in order (random UUIDs otherwise). */
    providerIds?: string[];
}

/** An explicit Pulumi GCP provider the migrated resources used, and the `cloud` provider made beside it. */
export interface ExplicitProvider {
    /** The gcp provider's URN. */
    gcp: string;
    /** The cloud provider's name (the gcp one's, unless a cloud provider has it). */
    name: string;
    /** The settings it took from the gcp provider's inputs; a secret's value is not given. */
    settings: { key: string; secret: boolean; value?: Value }[];
    /** The gcp provider is gone from the state: only migrated resources used it. */
    replaced?: boolean;
}

/** A config key the made `cloud` provider took from Pulumi GCP's: the user sets `gcp:<key>`'s value as `cloud:<key>`. */
export interface CarriedKey {
    key: string;
    secret: boolean;
}

export interface Migration {
    /** The `pulumi stack import` input. */
    result: PropertyMap;
    /** How many resources were migrated. */
    migrated: number;
    /**
     * The config keys of this package that the Pulumi GCP default provider of the migrated resources held (its
     * `gcp:` stack config), copied to the default `cloud` provider made, so that a refresh before the next `up`
     * reaches Google as Pulumi GCP did. Empty when no provider was made.
     */
    carried: CarriedKey[];
    /** The explicit `cloud` providers made, one per explicit Pulumi GCP provider of the migrated resources. */
    providers: ExplicitProvider[];
}

/** The migrated deployment (`pulumi stack import` input), or a MigrationError. */
export function migrateFromGcp(exported: Value, opts: MigrateOptions = {}): Migration {
    if (!isObject(exported) || !isObject(exported.deployment) || exported.version === undefined) {
        throw new MigrationError("the input is not the output of `pulumi stack export` (a JSON object with `version` and `deployment`)");
    }
    if (!DEPLOYMENT_VERSIONS.some((v) => v === exported.version)) {
        throw new MigrationError(`the export's version is ${JSON.stringify(exported.version)}; this command reads version ${DEPLOYMENT_VERSIONS.join(", ")}`);
    }
    const deployment = exported.deployment;
    const pending = deployment.pending_operations;
    if (Array.isArray(pending) && pending.length) {
        throw new MigrationError(`the stack has ${pending.length} pending operation(s) from an interrupted update: ` +
            "run `pulumi refresh` (or `pulumi cancel`) and export again");
    }
    const resources = deployment.resources ?? [];
    if (!Array.isArray(resources) || !resources.every(isObject)) throw new MigrationError("the export's `deployment.resources` is not a list of resources");

    const migratedAt = resources.flatMap((r, i) => (MIGRATED_TYPES.some((x) => x.gcp === r.type) ? [i] : []));
    if (!migratedAt.length) return { result: exported, migrated: 0, carried: [], providers: [] };
    const first = resources[migratedAt[0]];
    const [, stack, project] = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(String(first.urn)) ?? [];
    if (!stack) throw new MigrationError(`${String(first.urn)} is not a Pulumi URN`);
    const taken = new Set(resources.map((r) => String(r.urn)));

    // Explicit Pulumi GCP providers the migrated resources use: each gets a `cloud` twin beside it (the gcp one
    // stays for what else uses it), its settings this package shares.
    const twins = new Map<string, { made: PropertyMap; ref: string; explicit: ExplicitProvider }>();
    for (const i of migratedAt) {
        const ref = typeof resources[i].provider === "string" ? String(resources[i].provider) : "";
        const gcp = providerOf(resources, ref);
        if (!gcp || isDefaultProvider(String(gcp.urn)) || twins.has(ref)) continue;
        const { head, name } = splitUrn(String(gcp.urn));
        const cloudHead = `${head.slice(0, head.length - GCP_PROVIDER_TYPE.length)}${PROVIDER_TYPE}`;
        let twinName = name;
        while (taken.has(`${cloudHead}::${twinName}`)) twinName = `${twinName}-cloud`;
        const urn = `${cloudHead}::${twinName}`;
        taken.add(urn);
        const settings = sharedSettings(gcp, String(gcp.urn));
        const props = { ...settings, version: PACKAGE_VERSION, pluginDownloadURL: PLUGIN_DOWNLOAD_URL };
        const id = opts.providerIds?.shift() ?? randomUUID();
        const made: PropertyMap = { urn, custom: true, id, type: PROVIDER_TYPE, inputs: props, outputs: props,
            ...(gcp.parent !== undefined ? { parent: gcp.parent } : {}) };
        twins.set(ref, { made, ref: `${urn}::${id}`, explicit: { gcp: String(gcp.urn), name: twinName,
            settings: Object.keys(settings).map((key) => ({ key, secret: isSecret(settings[key]), value: isSecret(settings[key]) ? undefined : settings[key] })) } });
    }

    // The default `cloud` provider, for the migrated resources on Pulumi GCP's default provider (or on none).
    const onDefault = migratedAt.filter((i) => !twins.has(String(resources[i].provider ?? "")));
    const providerName = `default_${PACKAGE_VERSION.replace(/\./g, "_")}`;
    const providerUrn = `urn:pulumi:${stack}::${project}::${PROVIDER_TYPE}::${providerName}`;
    const existing = resources.find((r) => r.urn === providerUrn);
    let provider = opts.provider;
    let made: PropertyMap | undefined;
    const carried: CarriedKey[] = [];
    if (provider !== undefined) {
        const urn = provider.slice(0, provider.lastIndexOf("::"));
        const p = resources.find((r) => r.urn === urn);
        if (!p || p.type !== PROVIDER_TYPE || `${urn}::${String(p.id)}` !== provider) {
            throw new MigrationError(`--provider ${provider}: the export has no \`${PROVIDER_TYPE}\` resource with that URN and ID (the form is URN::ID)`);
        }
    } else if (existing) {
        provider = `${providerUrn}::${String(existing.id)}`;
    } else if (onDefault.length) {
        const id = opts.providerId ?? randomUUID();
        const config = gcpDefaultConfig(resources, resources[onDefault[0]]);
        for (const key of Object.keys(config)) carried.push({ key, secret: isSecret(config[key]) });
        const props = { ...config, version: PACKAGE_VERSION, pluginDownloadURL: PLUGIN_DOWNLOAD_URL };
        made = { urn: providerUrn, custom: true, id, type: PROVIDER_TYPE, inputs: props, outputs: props };
        provider = `${providerUrn}::${id}`;
    }

    // Every URN whose type chain holds a migrated type: a migrated resource's, and its descendants' (a URN carries
    // its ancestors' types), renamed together with every reference to them.
    const urns = new Map<string, string>();
    for (const r of resources) {
        const urn = String(r.urn);
        const { head, name } = splitUrn(urn);
        const at = head.lastIndexOf("::") + 2;
        const chain = head.slice(at).split("$");
        if (r.type !== undefined && chain[chain.length - 1] !== r.type) throw new MigrationError(`${urn}: its URN does not end with its type ${String(r.type)}`);
        const renamed = chain.map((t) => MIGRATED_TYPES.find((x) => x.gcp === t)?.ours ?? t);
        if (renamed.every((t, i) => t === chain[i])) continue;
        const next = `${head.slice(0, at)}${renamed.join("$")}::${name}`;
        if (taken.has(next)) throw new MigrationError(`${urn} would become ${next}, which the stack already holds: rename one of the two first`);
        urns.set(urn, next);
    }
    const rename = (u: Value | undefined): Value | undefined => (typeof u === "string" ? urns.get(u) ?? u : u);
    // A provider reference is `URN::ID`.
    const renameRef = (ref: string): string => {
        const at = ref.lastIndexOf("::");
        return `${urns.get(ref.slice(0, at)) ?? ref.slice(0, at)}${ref.slice(at)}`;
    };
    const renameAll = (v: Value | undefined): Value | undefined => (Array.isArray(v) ? v.map((d) => rename(d) ?? null) : v);

    // An explicit gcp provider only migrated resources used is replaced by its twin: left in state, the engine
    // would plan its delete (a change) once the program no longer declares it.
    const stillUsed = new Set(resources.filter((r) => !MIGRATED_TYPES.some((x) => x.gcp === r.type)).map((r) => String(r.provider ?? "")));
    const replaced = new Set([...twins.entries()].filter(([ref]) => !stillUsed.has(ref)).map(([, tw]) => tw.explicit.gcp));
    for (const tw of twins.values()) tw.explicit.replaced = replaced.has(tw.explicit.gcp);
    // Each cloud twin goes right after its gcp provider (or in its place): before every resource that uses it.
    const twinAfter = new Map([...twins.values()].map((tw) => [tw.explicit.gcp,
        { ...tw.made, ...(tw.made.parent !== undefined ? { parent: rename(tw.made.parent) ?? null } : {}) }]));
    const out: PropertyMap[] = [];
    resources.forEach((r, i) => {
        if (made && i === onDefault[0]) out.push(made);
        const twinHere = twinAfter.get(String(r.urn));
        if (replaced.has(String(r.urn))) {
            if (twinHere) out.push(twinHere);
            return;
        }
        const t = MIGRATED_TYPES.find((x) => x.gcp === r.type);
        const renamed: PropertyMap = {
            ...r,
            urn: rename(r.urn) ?? null,
            ...(r.parent !== undefined ? { parent: rename(r.parent) ?? null } : {}),
            ...(Array.isArray(r.dependencies) ? { dependencies: renameAll(r.dependencies) ?? null } : {}),
            ...(typeof r.deletedWith === "string" ? { deletedWith: rename(r.deletedWith) ?? null } : {}),
            ...(Array.isArray(r.aliases) ? { aliases: renameAll(r.aliases) ?? null } : {}),
            ...(typeof r.provider === "string" && r.provider !== "" ? { provider: renameRef(r.provider) } : {}),
        };
        if (isObject(r.propertyDependencies)) {
            renamed.propertyDependencies = Object.fromEntries(Object.entries(r.propertyDependencies).map(([k, ds]) => [k, renameAll(ds) ?? null]));
        }
        const twin = t ? twins.get(String(r.provider ?? "")) : undefined;
        out.push(t ? convert(renamed, t, String(renamed.urn), twin?.ref ?? provider ?? "") : renamed);
        if (twinHere) out.push(twinHere);
    });
    const providers = [...twins.values()].map((tw) => tw.explicit);
    return { result: { ...exported, deployment: { ...deployment, resources: out } }, migrated: migratedAt.length, carried, providers };
}

const GCP_PROVIDER_TYPE = "pulumi:providers:gcp";

/** A URN as `head::name`: the head is `urn:pulumi:STACK::PROJECT::TYPE-CHAIN` (a name may hold "::" itself). */
function splitUrn(urn: string): { head: string; name: string } {
    const m = /^(urn:pulumi:[^:]+::[^:]+::[^:]+(?::[^:]+)*?)::(.*)$/s.exec(urn);
    if (!m) throw new MigrationError(`${urn} is not a Pulumi URN`);
    return { head: m[1], name: m[2] };
}

/** The Pulumi GCP provider resource a provider reference (`URN::ID`) names, if it names one. */
function providerOf(resources: PropertyMap[], ref: string): PropertyMap | undefined {
    const urn = ref.slice(0, ref.lastIndexOf("::"));
    return resources.find((r) => r.urn === urn && r.type === GCP_PROVIDER_TYPE);
}

/** A default provider's URN ends with `default` or `default_<version>`. */
const isDefaultProvider = (urn: string) => /::default(_[0-9_]+)?$/.test(urn);

/**
 * The inputs of a Pulumi GCP provider resource for the keys this package also has (`project`, `credentials`,
 * `accessToken`, the endpoints, …), in the order this package declares them. A key this package keeps secret is
 * kept secret.
 */
function sharedSettings(gcp: PropertyMap, urn: string): PropertyMap {
    const out: PropertyMap = {};
    const inputs = isObject(gcp.inputs) ? gcp.inputs : {};
    for (const key of Object.keys(configProperties)) {
        const value = inputs[key];
        if (!isConfigKey(key) || isEngineKey(key) || value === null || value === undefined) continue;
        const wrapped = isSecret(value);
        if (wrapped && typeof value.plaintext !== "string") {
            throw new MigrationError(`${urn}: \`${key}\` is an encrypted secret: export the stack with \`pulumi stack export --show-secrets\``);
        }
        out[key] = configProperties[key].secret === true && !wrapped ? secretOf(value) : value;
    }
    return out;
}

/**
 * The inputs of Pulumi GCP's default provider that `first` (a migrated resource) uses, for the keys this package
 * also has (`project`, `credentials`, `accessToken`, the endpoints, …): the engine writes a default provider's
 * inputs from the stack's `gcp:` config. A key this package keeps secret is kept secret. None when `first` uses
 * an explicit Pulumi GCP provider (its settings are the program's, not stack config).
 */
function gcpDefaultConfig(resources: PropertyMap[], first: PropertyMap): PropertyMap {
    const ref = typeof first.provider === "string" ? first.provider : "";
    const gcp = providerOf(resources, ref);
    if (!gcp || !isDefaultProvider(String(gcp.urn))) return {};
    return sharedSettings(gcp, String(gcp.urn));
}

/** One resource in this package's shape. */
function convert(r: PropertyMap, t: (typeof MIGRATED_TYPES)[number], urn: string, provider: string): PropertyMap {
    const where = (k: string) => `${String(r.urn)}: \`${k}\``;
    if (r.delete === true) throw new MigrationError(`${String(r.urn)} is pending deletion (a replacement was interrupted): run \`pulumi up\` or \`pulumi refresh\` first`);
    const inputs = isObject(r.inputs) ? r.inputs : {};
    const outputs = isObject(r.outputs) ? r.outputs : {};
    const secrets = new Set<string>();
    /** A property as the user declared it (inputs), else as Pulumi GCP read it (outputs). */
    const get = (k: string): Value | undefined => {
        const v = plain(inputs[k] ?? outputs[k], where(k));
        if (v.secret) secrets.add(k);
        return v.value;
    };
    const str = (k: string): string => {
        const v = get(k);
        if (typeof v !== "string" || v === "") throw new MigrationError(`${where(k)} is missing (or not a string): the export is not of Pulumi GCP's ${t.gcp}`);
        return v;
    };
    const service = checkServiceName(str("serviceName"));
    if (!service.ok) throw new MigrationError(`${where("serviceName")}: ${service.rule}`);
    const serviceName = service.value;
    // Terraform writes the consumer project back as `services/S/consumers/P`.
    const consumerProject = t.kind === "consumer" ? str("consumerProject").replace(/^services\/[^/]+\/consumers\//, "") : undefined;
    const parent: Parent = t.kind === "consumer" ? { kind: "consumer", serviceName, consumerProject: consumerProject ?? "" } : { kind: "service", serviceName };
    const parentIn: PropertyMap = consumerProject !== undefined ? { consumerProject, serviceName } : { serviceName };
    let declared: PropertyMap;
    let id: string;
    if (t.shape === "policy") {
        const parsed = parsePolicyData(str("policyData"));
        if ("problem" in parsed) throw new MigrationError(`${where("policyData")}: ${parsed.problem}`);
        declared = { ...parentIn, policyData: policyData(parsed.policy) };
        id = parentName(parent);
    } else {
        const role = str("role");
        const c = get("condition");
        let condition: Condition | undefined;
        if (isObject(c)) {
            if (typeof c.title !== "string" || typeof c.expression !== "string") throw new MigrationError(`${where("condition")} has no title or expression`);
            condition = canonicalCondition({ title: c.title, expression: c.expression, ...(typeof c.description === "string" ? { description: c.description } : {}) });
        } else if (c !== undefined && c !== null) {
            throw new MigrationError(`${where("condition")} is not an object`);
        }
        let members: string[];
        if (t.shape === "member") {
            members = [str("member")];
        } else {
            const ms = get("members");
            if (!Array.isArray(ms) || !ms.every((m): m is string => typeof m === "string")) throw new MigrationError(`${where("members")} is missing (or not a list of strings)`);
            members = [...new Set(ms)].sort();
        }
        const cond: PropertyMap | undefined = condition ? { ...condition } : undefined;
        declared = { ...parentIn, role, ...(t.shape === "member" ? { member: members[0] } : { members }), ...(cond ? { condition: cond } : {}) };
        id = grantId(parent, [role, ...(t.shape === "member" ? members : []), condition?.title]);
    }
    const etag = get("etag");
    const hide = (o: PropertyMap): PropertyMap => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, secrets.has(k) ? secretOf(v) : v]));
    const declaredKeys = new Set(Object.keys(declared));
    // The old URN's aliases name Pulumi GCP's type: dropped. An import ID in state is the one the program's
    // `import` option gave Pulumi GCP: this package's ID now (with which the option may stay in the program).
    const rest = Object.fromEntries(Object.entries(r).filter(([k]) => k !== "aliases"));
    return {
        ...rest,
        ...(typeof r.importID === "string" && r.importID !== "" ? { importID: id } : {}),
        urn, type: t.ours, id, provider,
        inputs: hide(declared),
        outputs: hide({ ...declared, etag: typeof etag === "string" ? etag : "" }),
        ...(isObject(r.propertyDependencies)
            ? { propertyDependencies: Object.fromEntries(Object.entries(r.propertyDependencies).filter(([k]) => declaredKeys.has(k))) } : {}),
    };
}
