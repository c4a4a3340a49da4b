// The generic resource lifecycle over the protocol's property maps: checking, semantic diff, preview
// (unknowns in, unknowns out, no API call), secrets kept secret, import by ID. Each definition supplies
// only its own behaviour (resource.ts).

import { checkProperties, concealSecrets, Failure, InputError } from "../check";
import { makeSecret, PropertyMap, UNKNOWN_VALUE, unwrapMap as plain } from "../properties";
import { Claim } from "./owners";
import { PathChange, ResourceContext, ResourceDefinition } from "./resource";

function declaredInputs(def: ResourceDefinition, values: PropertyMap): PropertyMap {
    const out: PropertyMap = {};
    for (const k of Object.keys(def.inputs)) if (values[k] !== undefined && values[k] !== null) out[k] = values[k];
    return out;
}

/**
 * The declared inputs of what the user wrote, checked again: an operation never acts on inputs that would fail
 * Check. State and old inputs are not judged by these rules: they hold what Google wrote (a `deleted:` member,
 * a form newer than these rules), and refusing them would leave the resource impossible to update or delete.
 */
function validInputs(def: ResourceDefinition, values: PropertyMap, secrets: ReadonlySet<string>): PropertyMap {
    const inputs = declaredInputs(def, values);
    const { failures, unknowns } = checkProperties(def.inputs, inputs);
    const all = [...concealSecrets(failures, inputs, secrets), ...unknowns.map((p) => ({ property: p, reason: `\`${p}\` is not known` }))];
    if (all.length) throw new InputError(all);
    return inputs;
}

/** Inputs kept in state (or old inputs), of the declared shape but not judged by the input rules (see validInputs). */
function stateInputs(def: ResourceDefinition, values: PropertyMap): PropertyMap {
    const inputs = declaredInputs(def, values);
    const { failures } = checkProperties(def.inputs, inputs, () => false, false);
    if (failures.length) throw new InputError(failures);
    return inputs;
}

/** The state the engine keeps: inputs and outputs, with secret inputs (and all outputs of them) secret. */
function state(inputs: PropertyMap, outputs: object, secrets: Set<string>): PropertyMap {
    const all: PropertyMap = { ...inputs, ...(JSON.parse(JSON.stringify(outputs)) as PropertyMap) };
    for (const k of Object.keys(all)) if (secrets.has(k)) all[k] = makeSecret(all[k]);
    return all;
}

/**
 * Check: the failures of the inputs (secret values concealed), and, once the inputs are all known and valid,
 * what the resource declares of its parent's policy.
 */
export function check(def: ResourceDefinition, news: PropertyMap): { inputs: PropertyMap; failures: Failure[]; claim?: Claim } {
    const { values, secrets, unknowns } = plain(news);
    const { failures } = checkProperties(def.inputs, values);
    if (failures.length) return { inputs: news, failures: concealSecrets(failures, values, secrets) };
    return { inputs: news, failures, claim: unknowns.size ? undefined : def.claims(declaredInputs(def, values)) };
}

export interface DiffResult {
    changed: string[];
    replaces: string[];
    deleteBeforeReplace: boolean;
    /** The detailed diff: per changed property, its path, or the grants it adds and removes (grantChanges). */
    detailed: (PathChange & { replace: boolean })[];
}

/** A property's change grant by grant, when the definition tells it and both sides are of the declared shape. */
function grantLines(def: ResourceDefinition, name: string, before: PropertyMap, after: PropertyMap): PathChange[] | undefined {
    if (!def.grantChanges) return undefined;
    try {
        const lines = def.grantChanges(name, stateInputs(def, before), stateInputs(def, after));
        return lines?.length ? lines : undefined;
    } catch {
        return undefined; // a malformed side: the property is shown whole
    }
}

/** The canonical form of inputs; values that never passed Check (a malformed request) compare as given. */
function canonical(def: ResourceDefinition, inputs: PropertyMap): Record<string, unknown> {
    try {
        return def.canonical(inputs);
    } catch {
        return inputs;
    }
}

/** Compares by meaning (each definition's canonical form): order-only or etag-only changes are no change. */
export function diff(def: ResourceDefinition, olds: PropertyMap, news: PropertyMap): DiffResult {
    const before = plain(olds).values;
    const after = plain(news);
    const canonicalOld = canonical(def, declaredInputs(def, before));
    const canonicalNew = after.unknowns.size ? {} : canonical(def, declaredInputs(def, after.values));
    const changed: string[] = [];
    const replaces: string[] = [];
    const detailed: DiffResult["detailed"] = [];
    for (const [name, prop] of Object.entries(def.inputs)) {
        const unknown = after.unknowns.has(name);
        const same = !unknown && (after.unknowns.size
            ? JSON.stringify(before[name]) === JSON.stringify(after.values[name])
            : JSON.stringify(canonicalOld[name] ?? null) === JSON.stringify(canonicalNew[name] ?? null));
        if (same) continue;
        changed.push(name);
        if (prop.replaceOnChanges) replaces.push(name);
        const replace = prop.replaceOnChanges === true;
        const lines = unknown || after.unknowns.size ? undefined : grantLines(def, name, before, after.values);
        for (const line of lines ?? [{ path: name, kind: "update" as const }]) detailed.push({ ...line, replace });
    }
    // Replaced by deleting first, whoever decides on the replacement (the engine reads this flag for
    // `replaceOnChanges` too): the old resource's Delete then runs before the new one exists in Google's policy,
    // and keeps what the replacement declares (owners.ts). The engine does not ask Diff for `--replace` or a
    // changed provider and creates first then; the Delete keeps the replacement's grants all the same.
    return { changed, replaces, deleteBeforeReplace: true, detailed };
}

function unknownOutputs(def: ResourceDefinition): PropertyMap {
    const out: PropertyMap = {};
    for (const k of Object.keys(def.outputs)) out[k] = UNKNOWN_VALUE;
    return out;
}

export async function create(def: ResourceDefinition, news: PropertyMap, preview: boolean, ctx: ResourceContext):
    Promise<{ id: string; properties: PropertyMap }> {
    const { values, secrets, unknowns } = plain(news);
    if (preview) {
        return { id: unknowns.size ? "" : def.id(validInputs(def, values, secrets)), properties: { ...news, ...unknownOutputs(def) } };
    }
    const inputs = validInputs(def, values, secrets);
    const outputs = await def.create(inputs, ctx);
    return { id: def.id(inputs), properties: state(inputs, outputs, secrets) };
}

export async function update(def: ResourceDefinition, olds: PropertyMap, news: PropertyMap, preview: boolean, ctx: ResourceContext):
    Promise<PropertyMap> {
    if (preview) return { ...news, ...unknownOutputs(def) };
    const { values, secrets } = plain(news);
    const inputs = validInputs(def, values, secrets);
    const outputs = await def.update(stateInputs(def, plain(olds).values), inputs, ctx);
    return state(inputs, outputs, secrets);
}

/**
 * Refresh or import. With no state (import), the inputs come from the ID in Terraform's forms.
 * Returns undefined when the resource is gone.
 */
export async function read(def: ResourceDefinition, id: string, properties: PropertyMap, inputs: PropertyMap, ctx: ResourceContext):
    Promise<{ id: string; properties: PropertyMap; inputs: PropertyMap } | undefined | Failure> {
    const known = plain(Object.keys(inputs).length ? inputs : properties);
    let wanted: PropertyMap;
    if (Object.keys(declaredInputs(def, known.values)).length) {
        wanted = stateInputs(def, known.values); // refresh: the inputs in state, as Google last showed them
    } else {
        const parsed = def.parseId(id); // import: what the ID names (a partial description, e.g. a condition's title)
        if (typeof parsed === "string") return { property: "id", reason: parsed };
        wanted = parsed as PropertyMap;
    }
    const found = await def.read(wanted, ctx);
    if (!found) return undefined;
    const foundInputs = found.inputs as PropertyMap;
    return {
        id: def.id(found.inputs),
        properties: state(foundInputs, found.outputs, known.secrets),
        inputs: state(foundInputs, {}, known.secrets),
    };
}

export async function remove(def: ResourceDefinition, properties: PropertyMap, ctx: ResourceContext): Promise<void> {
    await def.delete(stateInputs(def, plain(properties).values), ctx);
}

