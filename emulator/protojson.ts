// Request bodies read the way Google's front end reads them: proto3 JSON of the request messages of the
// discovery document servicemanagement.v1 (schemas SetIamPolicyRequest, Policy, Binding, Expr, AuditConfig,
// AuditLogConfig, GetIamPolicyRequest, GetPolicyOptions, TestIamPermissionsRequest, ManagedService). Each field
// may be spelt lowerCamel or as its proto name (snake_case) at any depth, `null` means "not set", an unknown
// field anywhere is a 400 that names it, int32 takes a number or a numeric string, bytes take base64 in the
// standard or URL-safe alphabet, padded or not.

export type Scalar = "string" | "int32" | "bytes" | "fieldmask";

export interface FieldSpec {
    /** A Scalar, or the name of another message of MESSAGES. */
    type: string;
    repeated?: boolean;
}

/** The request messages, field by field, as the discovery document declares them. */
export const MESSAGES = {
    SetIamPolicyRequest: { policy: { type: "Policy" }, updateMask: { type: "fieldmask" } },
    Policy: {
        version: { type: "int32" },
        bindings: { type: "Binding", repeated: true },
        auditConfigs: { type: "AuditConfig", repeated: true },
        etag: { type: "bytes" },
    },
    Binding: { role: { type: "string" }, members: { type: "string", repeated: true }, condition: { type: "Expr" } },
    Expr: { expression: { type: "string" }, title: { type: "string" }, description: { type: "string" }, location: { type: "string" } },
    AuditConfig: { service: { type: "string" }, auditLogConfigs: { type: "AuditLogConfig", repeated: true } },
    AuditLogConfig: { logType: { type: "string" }, exemptedMembers: { type: "string", repeated: true } },
    GetIamPolicyRequest: { options: { type: "GetPolicyOptions" } },
    GetPolicyOptions: { requestedPolicyVersion: { type: "int32" } },
    TestIamPermissionsRequest: { permissions: { type: "string", repeated: true } },
    ManagedService: { serviceName: { type: "string" }, producerProjectId: { type: "string" } },
    // IAM Credentials API v1 (discovery document iamcredentials.v1), for impersonation.
    GenerateAccessTokenRequest: { delegates: { type: "string", repeated: true }, scope: { type: "string", repeated: true }, lifetime: { type: "string" } },
} satisfies Record<string, Record<string, FieldSpec>>;

export type MessageName = keyof typeof MESSAGES;

/** A parsed message: lowerCamel keys; strings, numbers, byte buffers, field-mask paths, messages, lists. */
export type Value = string | number | Buffer | string[] | Message | Value[];
export interface Message {
    [field: string]: Value | undefined;
}

/** A request the API refuses, with the field it names (a `google.rpc.BadRequest` field violation). */
export class BadField extends Error {
    constructor(message: string, readonly field: string) {
        super(message);
    }
}

function isMessageName(name: string): name is MessageName {
    return Object.hasOwn(MESSAGES, name);
}

const snake = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A parsed sub-message (not a scalar, list or byte buffer). */
export function isMessage(v: Value | undefined): v is Message {
    return isObject(v) && !Buffer.isBuffer(v);
}

/** Where a value sits, as Google's errors say it: `policy.bindings[0].condition`. */
function at(path: string): string {
    return path ? ` at '${path}'` : "";
}

function typeError(path: string, expected: string, value: unknown): BadField {
    return new BadField(`Invalid value${at(path)} (${expected}), ${JSON.stringify(value)?.slice(0, 100)}`, path);
}

/** Parses `raw` as message `name`; throws BadField naming the first field that is not allowed. */
export function parseMessage(raw: unknown, name: MessageName, path = ""): Message {
    if (!isObject(raw)) throw typeError(path, `type.googleapis.com/${name}`, raw);
    const fields: Record<string, FieldSpec> = MESSAGES[name];
    const out: Message = {};
    const seen = new Map<string, string>();
    for (const [key, value] of Object.entries(raw)) {
        const field = camel(key);
        const spec = fields[field];
        if (!spec || (key !== field && key !== snake(field))) {
            throw new BadField(`Invalid JSON payload received. Unknown name ${JSON.stringify(key)}${at(path)}: Cannot find field.`, path);
        }
        const first = seen.get(field);
        if (first !== undefined) {
            throw new BadField(`Invalid JSON payload received. Field ${JSON.stringify(key)}${at(path)} is given twice ` +
                `(also as ${JSON.stringify(first)}).`, path);
        }
        seen.set(field, key);
        if (value === null) continue; // proto3 JSON: null is the field's default
        const where = path ? `${path}.${field}` : field;
        out[field] = spec.repeated ? parseList(value, spec, where) : parseValue(value, spec, where);
    }
    return out;
}

function parseList(value: unknown, spec: FieldSpec, path: string): Value[] {
    if (!Array.isArray(value)) throw typeError(path, `repeated ${spec.type}`, value);
    return value.map((v, i) => parseValue(v, spec, `${path}[${i}]`));
}

function parseValue(value: unknown, spec: FieldSpec, path: string): Value {
    switch (spec.type) {
        case "string":
            if (typeof value !== "string") throw typeError(path, "TYPE_STRING", value);
            return value;
        case "int32": {
            const n = typeof value === "number" ? value : typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : NaN;
            if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) throw typeError(path, "TYPE_INT32", value);
            return n;
        }
        case "bytes": {
            const bytes = typeof value === "string" ? decodeBase64(value) : undefined;
            if (!bytes) throw typeError(path, "TYPE_BYTES", value);
            return bytes;
        }
        case "fieldmask":
            if (typeof value !== "string") throw typeError(path, "google.protobuf.FieldMask", value);
            return value.split(",").map((p) => p.trim()).filter((p) => p !== "").map((p) => p.split(".").map(camel).join("."));
        default:
            if (!isMessageName(spec.type)) throw new Error(`emulator bug: unknown message ${spec.type}`);
            return parseMessage(value, spec.type, path);
    }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$|^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes base64 the way proto3 JSON parsers do (standard or URL-safe, padding optional); undefined if malformed. */
export function decodeBase64(text: string): Buffer | undefined {
    if (!BASE64.test(text)) return undefined;
    const body = text.replace(/=+$/, "");
    const padding = text.length - body.length;
    if (body.length % 4 === 1 || (padding > 0 && (body.length + padding) % 4 !== 0)) return undefined;
    return Buffer.from(body.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}
