// schema.json, derived from the declarations: package metadata here, everything else from config.ts,
// functions/ and resources/. `npm run schema` writes it; a test fails when the committed file drifts.

import { configProperties } from "./config";
import { ObjectTypeDefinition, Properties, Property, TypeSpec } from "./define";
import { functions } from "./functions";
import { resources } from "./resources";
import { PACKAGE_NAME, PACKAGE_VERSION } from "./version";

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

/** The whole package schema, as an object. */
export function buildSchema(): JsonObject {
    const objects = new Map<string, ObjectTypeDefinition>();
    const fns: JsonObject = {};
    for (const f of functions) {
        fns[f.token] = {
            description: f.description,
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
            description: r.description,
            properties: outputs.properties,
            ...(outputs.required ? { required: outputs.required } : {}),
            inputProperties: inputs.properties,
            ...(inputs.required ? { requiredInputs: inputs.required } : {}),
        };
    }
    const config = objectSchema(configProperties, objects);
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
        license: "Apache-2.0",
        attribution: "Built on the behaviour of the Google Beta Terraform provider's endpoints IAM resources.",
        // supportPack: SDKs carry the package version (and Go gets a go.mod).
        meta: { moduleFormat: "(.*)(?:/[^/]*)", supportPack: true },
        language: {
            go: { importBasePath: "example.com/pulumi-cloud/sdk/go/v8/cloud" },
            python: { pyproject: { enabled: true } },
        },
        config: { variables: config.properties },
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
