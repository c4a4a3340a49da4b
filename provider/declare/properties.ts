// Property values as they cross the provider protocol: google.protobuf.Struct values in which the engine
// marks secrets with a signature object and unknowns (preview) with a sentinel string. These constants are
// the protocol's own (also exported by @pulumi/pulumi/runtime/rpc, which we do not load at start-up because
// it pulls in the whole language runtime; a test checks that the values agree).

export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";
export const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A JSON value, as a Struct holds it. */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };
export type PropertyMap = { [key: string]: Value };

export function isSecret(v: Value | undefined): v is { [key: string]: Value } {
    return typeof v === "object" && v !== null && !Array.isArray(v) && v[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

export function makeSecret(value: Value): Value {
    return { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value };
}

/** What unwrapping found: the plain value, and whether any part of it was secret or unknown. */
export interface Unwrapped {
    value: Value;
    secret: boolean;
    unknown: boolean;
}

/** Removes secret markers at any depth, noting whether a secret or an unknown was seen. */
export function unwrap(v: Value): Unwrapped {
    const found = { secret: false, unknown: false };
    const walk = (x: Value): Value => {
        if (x === UNKNOWN_VALUE) {
            found.unknown = true;
            return x;
        }
        if (isSecret(x)) {
            found.secret = true;
            return walk((x.value ?? null) as Value);
        }
        if (Array.isArray(x)) return x.map(walk);
        if (typeof x === "object" && x !== null) {
            const out: PropertyMap = {};
            for (const [k, e] of Object.entries(x as PropertyMap)) out[k] = walk(e);
            return out;
        }
        return x;
    };
    const value = walk(v);
    return { value, ...found };
}

/** A property map's plain values, and the names of the entries that arrived secret or unknown (top level). */
export function unwrapMap(map: PropertyMap): { values: PropertyMap; secrets: Set<string>; unknowns: Set<string> } {
    const values: PropertyMap = {};
    const secrets = new Set<string>();
    const unknowns = new Set<string>();
    for (const [k, v] of Object.entries(map)) {
        const u = unwrap(v);
        values[k] = u.value;
        if (u.secret) secrets.add(k);
        if (u.unknown) unknowns.add(k);
    }
    return { values, secrets, unknowns };
}

/** A JSON value from a typed record (a handler's outputs): undefined entries are left out, anything not JSON is an error. */
export function toValue(v: unknown): Value {
    if (v === null || typeof v === "string" || typeof v === "boolean") return v;
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (Array.isArray(v)) return v.map(toValue);
    if (typeof v === "object") return toPropertyMap(v);
    throw new Error(`not a JSON value: ${typeof v}`);
}

export function toPropertyMap(record: object): PropertyMap {
    const out: PropertyMap = {};
    for (const [k, e] of Object.entries(record)) if (e !== undefined) out[k] = toValue(e);
    return out;
}
