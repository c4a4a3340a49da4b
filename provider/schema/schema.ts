// schema.json, derived from the declarations: package metadata here, everything else from protocol/config.ts,
// functions/ and resources/. `npm run schema` writes it; a test fails when the committed file drifts.

import { configProperties } from "../protocol/config";
import { ObjectTypeDefinition, Properties, Property, TypeSpec } from "../declare/define";
import { examplesSection, Naming } from "../declare/examples";
import { functions } from "../functions";
import { resources } from "../resources";
import { Resource } from "../resources/lifecycle";
import { parseToken, typeToken } from "../package/tokens";
import { LICENSE, PACKAGE_NAME, PACKAGE_VERSION, PLUGIN_DOWNLOAD_URL, REPOSITORY } from "../package/version";

/**
 * The npm name of the TypeScript SDK. `@pulumi/cloud` belongs to an unrelated package on npm, so the SDK is
 * published as this name instead: a Pulumi GCP program switches by importing it in place of `@pulumi/gcp`.
 */
export const NPM_PACKAGE_NAME = "pulumi-cloud-endpoints";
/** The Go SDK's import path (its module is the path one up: `…/sdk/go/v8`). */
export const GO_IMPORT_BASE_PATH = "example.com/pulumi-cloud/sdk/go/v8/cloud";
const SDK_README = "Look up and manage the IAM policies of Google Cloud Endpoints / Service Management services and of " +
    "their consumer projects, with the names and shapes of Pulumi GCP 8.38.0 (`cloud` in place of `gcp`).\n";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function typeSchema(t: TypeSpec, objects: Map<string, ObjectTypeDefinition>): JsonObject {
    switch (t.kind) {
        case "array": return { type: "array", items: typeSchema(t.items, objects) };
        case "object":
            collect(t.object, objects);
            return { $ref: `#/types/${t.object.token}` };
        default: return { type: t.kind };
    }
}

function collect(o: ObjectTypeDefinition, objects: Map<string, ObjectTypeDefinition>): void {
    if (objects.has(o.token)) return;
    objects.set(o.token, o);
    for (const p of Object.values(o.properties)) typeSchema(p.type.spec, objects);
}

function propertySchema(p: Property, objects: Map<string, ObjectTypeDefinition>): JsonObject {
    const out: JsonObject = {};
    if (p.description !== undefined) out.description = p.description;
    Object.assign(out, typeSchema(p.type.spec, objects));
    if (p.secret) out.secret = true;
    if (p.replaceOnChanges) out.willReplaceOnChanges = true;
    return out;
}

function objectSchema(props: Properties, objects: Map<string, ObjectTypeDefinition>): JsonObject {
    const properties: JsonObject = {};
    for (const [name, p] of Object.entries(props)) properties[name] = propertySchema(p, objects);
    const required = Object.entries(props).filter(([, p]) => p.required).map(([n]) => n);
    return { properties, ...(required.length ? { required } : {}) };
}

/**
 * A config key as stack config declares it. An object-typed key's type is named as Pulumi GCP (the Terraform
 * bridge) names it there: `cloud:config/batching:batching` (`config.Batching` in the SDKs) beside the provider
 * input's `cloud:index/ProviderBatching:ProviderBatching`; the same properties, declared once in protocol/config.ts.
 */
function configVariable(name: string, p: Property): Property {
    const t = p.type.spec;
    if (t.kind !== "object") return p;
    return { ...p, type: { spec: { kind: "object", object: { ...t.object, token: typeToken("config", name) } } } };
}

/** What the examples' names depend on beyond the tokens. */
export function naming(): Naming {
    return {
        npmName: NPM_PACKAGE_NAME,
        goBase: GO_IMPORT_BASE_PATH,
        resources: resources.map((r) => r.token),
        goNames: new Map(functions.flatMap((f) => (f.goName === undefined ? [] : [[f.token, f.goName] as const]))),
    };
}

/** A resource's `## Import` section: what the ID is, and a `pulumi import` command (full token) per accepted form. */
function importSection(r: Resource): string {
    const name = r.examples.flatMap((e) => e.program).find((s) => s.kind === "resource" && s.token === r.token)?.name ?? "imported";
    return [
        "## Import",
        "",
        r.importDoc.text,
        "",
        ...r.importDoc.ids.flatMap((id) => ["```sh", `$ pulumi import ${r.token} ${name} ${JSON.stringify(id)}`, "```", ""]),
    ].join("\n").trimEnd();
}

/** The whole package schema, as an object. */
export function buildSchema(): JsonObject {
    const objects = new Map<string, ObjectTypeDefinition>();
    const names = naming();
    const fns: JsonObject = {};
    for (const f of functions) {
        fns[f.token] = {
            description: `${f.description}\n\n${examplesSection(f.examples, names)}`,
            inputs: { ...objectSchema(f.inputs, objects), type: "object" },
            outputs: { ...objectSchema(f.outputs, objects), type: "object" },
        };
    }
    const res: JsonObject = {};
    for (const r of resources) {
        // The state holds the inputs and the outputs.
        const outputs = objectSchema({ ...r.inputs, ...r.outputs }, objects);
        const inputs = objectSchema(r.inputs, objects);
        res[r.token] = {
            description: `${r.description}\n\n${examplesSection(r.examples, names)}\n\n${importSection(r)}`,
            properties: outputs.properties,
            ...(outputs.required ? { required: outputs.required } : {}),
            inputProperties: inputs.properties,
            ...(inputs.required ? { requiredInputs: inputs.required } : {}),
            // `Resource.get(name, id, state)`: any part of the state, nothing required (XState in every SDK).
            stateInputs: {
                description: `Input properties used for looking up and filtering ${parseToken(r.token).name} resources.`,
                properties: outputs.properties,
                type: "object",
            },
        };
    }
    const config = objectSchema(configProperties, objects);
    // Stack config is read through plain getters in every SDK, which cannot keep a value secret (Java's
    // generator warns about each secret variable), so `config.variables` says it in words; the provider's
    // inputs carry the flag, which keeps an explicit provider's values secret.
    const variables: JsonObject = {};
    for (const [name, p] of Object.entries(configProperties)) {
        const { secret: _secret, ...rest } = propertySchema(configVariable(name, p), objects);
        variables[name] = p.secret
            ? { ...rest, description: `${p.description ?? ""} Secret: set it with \`pulumi config set --secret ${PACKAGE_NAME}:${name}\`.`.trim() }
            : rest;
    }
    const typesOut: JsonObject = {};
    for (const token of [...objects.keys()].sort()) {
        const o = objects.get(token)!;
        typesOut[token] = { description: o.description, ...objectSchema(o.properties, objects), type: "object" };
    }
    return {
        name: PACKAGE_NAME,
        displayName: "Cloud Endpoints IAM",
        version: PACKAGE_VERSION,
        description: "Look up and manage the IAM policies of Google Cloud Endpoints / Service Management " +
            "services and of their consumer projects.",
        keywords: ["pulumi", "cloud", "gcp", "endpoints", "servicemanagement", "iam", "category/cloud"],
        license: LICENSE,
        repository: REPOSITORY,
        // The SDKs carry it, so the engine installs the plugin by itself for a program that uses them.
        pluginDownloadURL: PLUGIN_DOWNLOAD_URL,
        attribution: "Built on the behaviour of the Google Beta Terraform provider's endpoints IAM resources.",
        // supportPack: SDKs carry the package version (and Go gets a go.mod).
        meta: { moduleFormat: "(.*)(?:/[^/]*)", supportPack: true },
        // The language settings Pulumi GCP's schema has, so that every SDK names things as Pulumi GCP's does:
        // the Terraform-bridge naming compatibility (Python `…Args`/`…Result`, C# `…InputArgs`/`…Result`
        // classes), Go's `XArray`/`XMap` container types and extra input types.
        language: {
            csharp: { compatibility: "tfbridge20", namespaces: { cloud: "Cloud", endpoints: "Endpoints", organizations: "Organizations" } },
            go: { importBasePath: GO_IMPORT_BASE_PATH, generateResourceContainerTypes: true, generateExtraInputTypes: true },
            nodejs: { compatibility: "tfbridge20", disableUnionOutputTypes: true, packageName: NPM_PACKAGE_NAME, readme: SDK_README },
            python: { compatibility: "tfbridge20", pyproject: { enabled: true }, readme: SDK_README },
        },
        config: { variables },
        provider: {
            description: "The provider type for the cloud package. By default, resources use package-wide " +
                "configuration settings; an explicit `Provider` instance customizes them.",
            inputProperties: config.properties,
        },
        types: typesOut,
        resources: res,
        functions: fns,
    };
}

/** schema.json's text exactly as committed (2-space JSON and a final newline). */
export function schemaText(): string {
    return `${JSON.stringify(buildSchema(), null, 2)}\n`;
}
