// Real Google clients judge the emulator: the same scenario through the `googleapis` Node client and Google's
// Python client (google-api-python-client, pinned in conformance/requirements.txt and installed from PyPI by
// this test), every method of the API subset, a 409 each client surfaces as its own conflict error; and what
// the emulator takes and emits compared field by field with Google's published discovery document for
// servicemanagement v1 (the copy google-api-python-client ships).

import { expect } from "chai";
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { promisify } from "util";
// The API module alone: the whole `googleapis` package would bring thousands of type files into the build.
import { auth as googleAuth, servicemanagement } from "googleapis/build/src/apis/servicemanagement";
import { startEmulator, type Emulator } from "../../emulator";
import { MESSAGES, type FieldSpec } from "../../emulator/protojson";
import { skipUnless } from "../e2e/support";
import { pythonMissing, pythonWith } from "../support/python";

const TOKEN = "conformance-token";
const HERE = path.join(__dirname, "..", "..", "..", "tests", "emulator", "conformance");

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Outcome = { [call: string]: Json };

interface SchemaProperty {
    type?: string;
    format?: string;
    $ref?: string;
    items?: SchemaProperty;
    additionalProperties?: SchemaProperty;
    enum?: string[];
}
interface Discovery {
    schemas: Record<string, { properties: Record<string, SchemaProperty> }>;
}

/** The scenario of conformance/scenario.py, through the googleapis Node client. */
async function nodeScenario(emu: Emulator, service: string, producer: string): Promise<Outcome> {
    const auth = new googleAuth.OAuth2();
    auth.setCredentials({ access_token: TOKEN });
    const api = servicemanagement({ version: "v1", auth, rootUrl: `${emu.origin}/` });
    const resource = `services/${service}`;
    const consumer = `${resource}/consumers/consumer-project-1`;
    const out: Outcome = {};
    const attempt = async (name: string, request: Promise<{ data: unknown }>): Promise<Json> => {
        try {
            out[name] = JSON.parse(JSON.stringify((await request).data)) as Json;
        } catch (e) {
            // The client's own error for a non-2xx answer: a GaxiosError carrying the status and Google's error.
            const response = (e as { response?: { status: number; data: { error: { status: string } } } }).response;
            if (!response) throw e;
            out[name] = { httpStatus: response.status, status: response.data.error.status };
        }
        return out[name];
    };
    const policy = {
        version: 3,
        bindings: [
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:alice@example.com"] },
            {
                role: "roles/servicemanagement.serviceConsumer",
                members: ["group:readers@example.com"],
                condition: { title: "until-2030", expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' },
            },
        ],
    };
    await attempt("create", api.services.create({ requestBody: { serviceName: service, producerProjectId: producer } }));
    await attempt("get", api.services.get({ serviceName: service }));
    await attempt("list", api.services.list({ producerProjectId: producer }));
    const first = await attempt("setIamPolicy", api.services.setIamPolicy({ resource, requestBody: { policy } }));
    const etag = typeof first === "object" && first !== null && !Array.isArray(first) ? String(first.etag) : "";
    await attempt("getIamPolicy", api.services.getIamPolicy({ resource, requestBody: { options: { requestedPolicyVersion: 3 } } }));
    await attempt("getIamPolicyV1", api.services.getIamPolicy({ resource, requestBody: {} }));
    await attempt("testIamPermissions", api.services.testIamPermissions({ resource, requestBody: { permissions: ["servicemanagement.services.get", "storage.buckets.get"] } }));
    await attempt("setAgain", api.services.setIamPolicy({ resource, requestBody: { policy: { ...policy, etag } } }));
    await attempt("setStale", api.services.setIamPolicy({ resource, requestBody: { policy: { ...policy, etag } } }));
    await attempt("consumerSet", api.services.consumers.setIamPolicy({ resource: consumer, requestBody: { policy: { bindings: [
        { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"] },
    ] } } }));
    await attempt("consumerGet", api.services.consumers.getIamPolicy({ resource: consumer, requestBody: { options: { requestedPolicyVersion: 3 } } }));
    await attempt("consumerTest", api.services.consumers.testIamPermissions({ resource: consumer, requestBody: { permissions: ["servicemanagement.services.get"] } }));
    await attempt("missing", api.services.getIamPolicy({ resource: "services/missing.endpoints.my-project.cloud.goog", requestBody: {} }));
    await attempt("badRequest", api.services.setIamPolicy({ resource, requestBody: { policy: { bindings: [{ role: "roles/a", members: ["user:a@example.com"] }] } } }));
    return out;
}

/** An outcome with what differs between two runs by design (etags, operation names and times) blanked. */
function comparable(outcome: Outcome): Outcome {
    return JSON.parse(JSON.stringify(outcome, (k, v: unknown) =>
        (k === "etag" || k === "startTime" || (k === "name" && typeof v === "string" && v.startsWith("operations/")) ? "…" : v)
            ?? null)) as Outcome;
}

/** The problems of `value` as an instance of `schema` of the discovery document (empty when it conforms). */
function conform(doc: Discovery, value: Json, prop: SchemaProperty, where: string): string[] {
    if (prop.$ref) {
        const schema = doc.schemas[prop.$ref];
        if (!schema) return [`${where}: no schema ${prop.$ref}`];
        if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: not an object (${prop.$ref})`];
        return Object.entries(value).flatMap(([k, v]) => schema.properties[k]
            ? conform(doc, v, schema.properties[k], `${where}.${k}`)
            : [`${where}.${k}: no field ${k} in ${prop.$ref}`]);
    }
    switch (prop.type) {
        case "string":
            if (typeof value !== "string") return [`${where}: not a string`];
            if (prop.format === "byte" && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return [`${where}: not base64`];
            if (prop.enum && !prop.enum.includes(value)) return [`${where}: ${value} is not one of ${prop.enum.join(", ")}`];
            return [];
        case "integer":
            return Number.isInteger(value) ? [] : [`${where}: not an integer`];
        case "boolean":
            return typeof value === "boolean" ? [] : [`${where}: not a boolean`];
        case "array":
            return Array.isArray(value) ? value.flatMap((v, i) => conform(doc, v, prop.items ?? {}, `${where}[${i}]`)) : [`${where}: not a list`];
        case "object": {
            if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: not an object`];
            // An Any: checked against the message its @type names, when the document has it.
            const type = typeof value["@type"] === "string" ? value["@type"].split(".").pop()! : "";
            if (!doc.schemas[type]) return [];
            const { "@type": _type, ...rest } = value;
            return conform(doc, rest, { $ref: type }, where);
        }
        case "any":
            return [];
        default:
            return [`${where}: unexpected schema ${JSON.stringify(prop)}`];
    }
}

/** The discovery-document property a field of the emulator's MESSAGES table must match. */
function expected(spec: FieldSpec): SchemaProperty {
    const one = (): SchemaProperty => {
        switch (spec.type) {
            case "string": return { type: "string" };
            case "int32": return { type: "integer", format: "int32" };
            case "bytes": return { type: "string", format: "byte" };
            case "fieldmask": return { type: "string", format: "google-fieldmask" };
            default: return { $ref: spec.type };
        }
    };
    return spec.repeated ? { type: "array", items: one() } : one();
}

describe("emulator conformance: real Google clients", function () {
    this.timeout(600_000);
    let emu: Emulator;
    let python = "";
    let doc: Discovery;
    const outcomes: Record<string, Outcome> = {};

    before(async function () {
        skipUnless(this, await pythonMissing());
        python = await pythonWith(path.join(HERE, "requirements.txt"));
        const { stdout } = await promisify(execFile)(python, ["-c", "import googleapiclient, os; print(os.path.dirname(googleapiclient.__file__))"]);
        doc = JSON.parse(fs.readFileSync(path.join(stdout.trim(), "discovery_cache", "documents", "servicemanagement.v1.json"), "utf8")) as Discovery;
        // The scenario writes a conditional binding, which Service Management refuses by default.
        emu = await startEmulator({ accessTokens: [TOKEN], allowConditions: true });
    });
    after(() => emu?.close());

    it("googleapis (Node) drives every method", async () => {
        outcomes.node = await nodeScenario(emu, "node.endpoints.my-project.cloud.goog", "node-producer");
        expect(outcomes.node.create).to.have.property("done", true);
        expect(outcomes.node.getIamPolicy).to.deep.equal(outcomes.node.setIamPolicy);
    });

    it("google-api-python-client drives every method", async () => {
        const { stdout } = await promisify(execFile)(python,
            [path.join(HERE, "scenario.py"), `${emu.origin}/`, TOKEN, "python.endpoints.my-project.cloud.goog", "python-producer"]);
        outcomes.python = JSON.parse(stdout) as Outcome;
        expect(outcomes.python.create).to.have.property("done", true);
        expect(outcomes.python.getIamPolicy).to.deep.equal(outcomes.python.setIamPolicy);
    });

    it("both clients get the same answers, errors included: 409 ABORTED for a stale etag, 403 for a missing service, 400 for a bad role", () => {
        const [node, py] = [comparable(outcomes.node), comparable(outcomes.python)];
        const rename = (o: Outcome, who: string): Outcome =>
            JSON.parse(JSON.stringify(o).replaceAll(`${who}.endpoints`, "S.endpoints").replaceAll(`${who}-producer`, "P")) as Outcome;
        expect(rename(node, "node")).to.deep.equal(rename(py, "python"));
        expect(node.setAgain).to.have.property("version", 3);
        expect(node.setStale).to.deep.equal({ httpStatus: 409, status: "ABORTED" });
        expect(node.missing).to.deep.equal({ httpStatus: 403, status: "PERMISSION_DENIED" });
        expect(node.badRequest).to.deep.equal({ httpStatus: 400, status: "INVALID_ARGUMENT" });
        expect((node.getIamPolicyV1 as { bindings: { role: string }[] }).bindings[1].role).to.match(/_withcond_[0-9a-f]{20}$/);
        expect(node.testIamPermissions).to.deep.equal({ permissions: ["servicemanagement.services.get"] });
    });

    it("every field the emulator emits is in the discovery document, with its type", () => {
        const responses: Record<string, string> = {
            create: "Operation", get: "ManagedService", list: "ListServicesResponse", setIamPolicy: "Policy", getIamPolicy: "Policy",
            getIamPolicyV1: "Policy", testIamPermissions: "TestIamPermissionsResponse", setAgain: "Policy", consumerSet: "Policy",
            consumerGet: "Policy", consumerTest: "TestIamPermissionsResponse",
        };
        for (const [call, schema] of Object.entries(responses)) {
            expect(conform(doc, outcomes.python[call], { $ref: schema }, call), call).to.deep.equal([]);
        }
        // The checker itself refuses what the document does not have.
        expect(conform(doc, { version: 1, owner: "x" }, { $ref: "Policy" }, "p")).to.deep.equal(["p.owner: no field owner in Policy"]);
    });

    it("every request field the emulator accepts is the discovery document's, with its type", () => {
        for (const [message, fields] of Object.entries(MESSAGES)) {
            if (message === "GenerateAccessTokenRequest") continue; // IAM Credentials, another API's document
            const schema = doc.schemas[message];
            expect(schema, message).to.not.equal(undefined);
            const ours = Object.fromEntries(Object.entries(fields as Record<string, FieldSpec>).map(([f, spec]) => [f, expected(spec)]));
            const theirs = Object.fromEntries(Object.keys(ours).map((f) => {
                const p = schema.properties[f];
                return [f, p && (p.items ? { type: p.type, items: pick(p.items) } : pick(p))];
            }));
            expect(ours, message).to.deep.equal(theirs);
            // Every field of a request message the document declares is one the emulator takes.
            if (message.endsWith("Request") || message === "Policy") expect(Object.keys(ours).sort(), message).to.deep.equal(Object.keys(schema.properties).sort());
        }
    });
});

function pick(p: SchemaProperty): SchemaProperty {
    const out: SchemaProperty = {};
    if (p.$ref) out.$ref = p.$ref;
    if (p.type) out.type = p.type;
    if (p.format) out.format = p.format;
    return out;
}
