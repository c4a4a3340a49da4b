// Input checking derived from the declarations in define.ts: required properties, types, nested object
// types and each property's own rule. Every failure names the property path and the rule it broke.

import { Properties, TypeSpec, Values } from "./define";
import { PropertyMap, UNKNOWN_VALUE, Value } from "./properties";

export interface Failure {
    property: string;
    reason: string;
}

export interface Checked<P extends Properties> {
    /** The checked values (only meaningful when there are no failures and no unknowns). */
    values: Values<P>;
    failures: Failure[];
    /** Paths of properties whose value is not known yet (preview). */
    unknowns: string[];
}

function kindOf(v: Value): string {
    if (v === null) return "null";
    if (Array.isArray(v)) return "a list";
    if (typeof v === "object") return "an object";
    return typeof v === "string" ? "a string" : typeof v === "number" ? "a number" : "a boolean";
}

function typeName(t: TypeSpec): string {
    switch (t.kind) {
        case "array": return `a list of ${typeName(t.items).replace(/^an? /, "")}s`;
        case "object": return "an object";
        case "integer": return "an integer";
        default: return `a ${t.kind}`;
    }
}

/** Where a check stands: what it found so far, whether each property's own rule applies, and whether undeclared keys fail. */
interface Run extends Checked<Properties> {
    rules: boolean;
    strict: boolean;
}

/** Checks one value against a type; pushes failures, returns whether it matched. */
function checkType(t: TypeSpec, v: Value, path: string, out: Run): boolean {
    if (v === UNKNOWN_VALUE) {
        out.unknowns.push(path);
        return true;
    }
    const wrong = () => {
        out.failures.push({ property: path, reason: `\`${path}\` must be ${typeName(t)}, but ${kindOf(v)} was given` });
        return false;
    };
    switch (t.kind) {
        case "string": return typeof v === "string" || wrong();
        case "boolean": return typeof v === "boolean" || wrong();
        case "number": return (typeof v === "number" && Number.isFinite(v)) || wrong();
        case "integer": return (typeof v === "number" && Number.isInteger(v)) || wrong();
        case "array":
            if (!Array.isArray(v)) return wrong();
            return v.map((e, i) => checkType(t.items, e, `${path}[${i}]`, out)).every(Boolean);
        case "object":
            if (typeof v !== "object" || v === null || Array.isArray(v)) return wrong();
            return checkInto(t.object.properties, v, `${path}.`, out);
    }
}

function checkInto(props: Properties, input: PropertyMap, prefix: string, out: Run): boolean {
    const before = out.failures.length;
    for (const key of Object.keys(input)) {
        if (out.strict && !(key in props)) {
            const known = Object.keys(props).map((k) => `\`${k}\``).join(", ");
            out.failures.push({
                property: `${prefix}${key}`,
                reason: `\`${prefix}${key}\` is not a known property; the known properties are ${known}`,
            });
        }
    }
    for (const [name, prop] of Object.entries(props)) {
        const path = `${prefix}${name}`;
        const v = input[name];
        if (v === undefined || v === null) {
            if (prop.required) {
                const about = prop.description ? ` (${prop.description.split("\n")[0]})` : "";
                out.failures.push({ property: path, reason: `\`${path}\` is required${about}` });
            }
            continue;
        }
        if (checkType(prop.type.spec, v, path, out) && out.rules && prop.check && !out.unknowns.includes(path)) {
            const problem = prop.check(v);
            if (problem) out.failures.push({ property: path, reason: `\`${path}\`: ${problem}` });
        }
    }
    return out.failures.length === before;
}

/**
 * Checks a property map against declared properties. `ignore` names keys that may be present without
 * being declared (the engine adds some, e.g. `version` to provider inputs). With `rules` false only the shape
 * is checked (types, required properties), not each property's own rule: for state, which holds what Google
 * wrote rather than what a user typed. With `strict` false, undeclared keys pass at every depth (an API's
 * answer may carry fields this package does not know).
 */
export function checkProperties<P extends Properties>(
    props: P,
    input: PropertyMap,
    ignore: (key: string) => boolean = () => false,
    rules = true,
    strict = true,
): Checked<P> {
    const out: Run = { values: {} as Values<Properties>, failures: [], unknowns: [], rules, strict };
    const considered: PropertyMap = {};
    for (const [k, v] of Object.entries(input)) if (!ignore(k)) considered[k] = v;
    checkInto(props, considered, "", out);
    const values: PropertyMap = {};
    for (const k of Object.keys(props)) if (considered[k] !== undefined && considered[k] !== null) values[k] = considered[k];
    return { values: values as Values<P>, failures: out.failures, unknowns: out.unknowns };
}

/**
 * Failures of secret properties, with the secret's value taken out of the reason: the rule is still named, the
 * value never (a failure reaches the engine's output and logs in plain text). `secrets` names top-level keys.
 */
export function concealSecrets(failures: Failure[], input: PropertyMap, secrets: ReadonlySet<string>): Failure[] {
    return failures.map((f) => {
        const root = f.property.split(/[.[]/)[0];
        if (!secrets.has(root)) return f;
        const strings: string[] = [];
        const collect = (v: Value): void => {
            if (typeof v === "string") {
                strings.push(v);
                // A secret JSON text (policyData): the strings inside it are secret too.
                if (/^\s*[[{]/.test(v)) {
                    try {
                        collect(JSON.parse(v) as Value);
                    } catch {
                        // not JSON: the text itself is all there is
                    }
                }
            } else if (Array.isArray(v)) v.forEach(collect);
            else if (typeof v === "object" && v !== null) Object.values(v).forEach(collect);
        };
        collect(input[root] ?? null);
        let reason = f.reason;
        // Longest first, quoted forms (whole, or shortened the way iam/names.ts shows long values) before bare ones.
        for (const text of strings.filter((t) => t.length > 0).sort((a, b) => b.length - a.length)) {
            for (const shown of [JSON.stringify(text), JSON.stringify(`${text.slice(0, 64)}…`), text]) {
                reason = reason.split(shown).join("the secret value");
            }
        }
        return { property: f.property, reason: `(\`${root}\` is a secret) ${reason}` };
    });
}

/** Inputs that reached an operation without passing Check (a malformed request): answered INVALID_ARGUMENT. */
export class InputError extends Error {
    constructor(readonly failures: Failure[]) {
        super(failures.map((f) => f.reason).join("; "));
    }
}
