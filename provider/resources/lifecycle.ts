// The generic resource lifecycle over the protocol's property maps: checking, semantic diff, preview
// (unknowns in, unknowns out, no API call), secrets kept secret, import by ID. Each definition supplies
// only its own behaviour (resource.ts); defineResource registers it, and every property map reaches the
// definition's handlers only through checkProperties, whose verdict types it (Values<I>), as a function's
// arguments are typed.

import { checkProperties, concealSecrets, Failure, InputError } from "../declare/check";
import { CONDITIONS_NOT_TAKEN } from "../iam/apiErrors";
import { Properties, Values } from "../declare/define";
import { makeSecret, PropertyMap, toPropertyMap, UNKNOWN_VALUE, unwrapMap as plain } from "../declare/properties";
import { Claim, PathChange, ResourceContext, ResourceDefinition } from "./resource";

export interface DiffResult {
    changed: string[];
    replaces: string[];
    deleteBeforeReplace: boolean;
    /** The detailed diff: per changed property, its path, or the grants it adds and removes (grantChanges). */
    detailed: (PathChange & { replace: boolean })[];
}

/** A registered resource: its declaration (for schema.json) and its lifecycle over the protocol's property maps. */
export interface Resource extends Pick<ResourceDefinition, "token" | "description" | "examples" | "importDoc" | "inputs" | "outputs" | "grantProperty"> {
    /**
     * The failures of the inputs (secret values concealed); once all are known and valid, the resource's claim, and
     * what the user should hear of it though nothing failed.
     */
    check(news: PropertyMap): { failures: Failure[]; claim?: Claim; warnings: string[] };
    /** The claim of a state (or of inputs) as they are, not judged by the input rules; undefined when it has none (unknowns, a malformed state). */
    claimOf(properties: PropertyMap): Claim | undefined;
    /** Compares by meaning (the definition's canonical form): order-only or etag-only changes are no change. */
    diff(olds: PropertyMap, news: PropertyMap): DiffResult;
    create(news: PropertyMap, preview: boolean, ctx: ResourceContext): Promise<{ id: string; properties: PropertyMap }>;
    /** Refresh, or import when there is no state (the inputs then come from the ID); undefined when it is gone. */
    read(id: string, properties: PropertyMap, inputs: PropertyMap, ctx: ResourceContext):
        Promise<{ id: string; properties: PropertyMap; inputs: PropertyMap } | undefined | Failure>;
    update(olds: PropertyMap, news: PropertyMap, preview: boolean, ctx: ResourceContext): Promise<PropertyMap>;
    delete(properties: PropertyMap, ctx: ResourceContext): Promise<void>;
}

/** The state the engine keeps: inputs and outputs, with secret inputs (and all outputs of them) secret. */
function state(values: object, secrets: ReadonlySet<string>): PropertyMap {
    const all = toPropertyMap(values);
    for (const k of Object.keys(all)) if (secrets.has(k)) all[k] = makeSecret(all[k]);
    return all;
}

export function defineResource<I extends Properties, O extends Properties>(def: ResourceDefinition<I, O>): Resource {
    const declared = (values: PropertyMap): PropertyMap => {
        const out: PropertyMap = {};
        for (const k of Object.keys(def.inputs)) if (values[k] !== undefined && values[k] !== null) out[k] = values[k];
        return out;
    };

    /**
     * The declared inputs of what the user wrote, checked again: an operation never acts on inputs that would
     * fail Check. State and old inputs are not judged by these rules: they hold what Google wrote (a `deleted:`
     * member, a form newer than these rules), and refusing them would leave the resource impossible to update or
     * delete.
     */
    const validInputs = (values: PropertyMap, secrets: ReadonlySet<string>): Values<I> => {
        const inputs = declared(values);
        const checked = checkProperties(def.inputs, inputs);
        const all = [...concealSecrets(checked.failures, inputs, secrets),
            ...checked.unknowns.map((p) => ({ property: p, reason: `\`${p}\` is not known` }))];
        if (all.length) throw new InputError(all);
        return checked.values;
    };

    /** Inputs kept in state (or old inputs), of the declared shape but not judged by the input rules (see validInputs). */
    const stateInputs = (values: PropertyMap): Values<I> => {
        const checked = checkProperties(def.inputs, declared(values), () => false, false);
        if (checked.failures.length) throw new InputError(checked.failures);
        return checked.values;
    };

    /** A property's change grant by grant, when the definition tells it and both sides are of the declared shape. */
    const grantLines = (name: keyof I & string, before: PropertyMap, after: PropertyMap): PathChange[] | undefined => {
        if (!def.grantChanges) return undefined;
        try {
            const lines = def.grantChanges(name, stateInputs(before), stateInputs(after));
            return lines?.length ? lines : undefined;
        } catch {
            return undefined; // a malformed side: the property is shown whole
        }
    };

    /** The canonical form of inputs; values not of the declared shape (a malformed request) compare as given. */
    const canonical = (values: PropertyMap): Record<string, unknown> => {
        try {
            return def.canonical(stateInputs(values));
        } catch {
            return declared(values);
        }
    };

    const unknownOutputs = (): PropertyMap => {
        const out: PropertyMap = {};
        for (const k of Object.keys(def.outputs)) out[k] = UNKNOWN_VALUE;
        return out;
    };

    return {
        token: def.token,
        description: def.description,
        examples: def.examples,
        importDoc: def.importDoc,
        inputs: def.inputs,
        outputs: def.outputs,
        grantProperty: def.grantProperty,

        claimOf(properties) {
            const { values, unknowns } = plain(properties);
            if (unknowns.size) return undefined;
            try {
                return def.claims(stateInputs(values));
            } catch {
                return undefined;
            }
        },

        check(news) {
            const { values, secrets, unknowns } = plain(news);
            const checked = checkProperties(def.inputs, values);
            if (checked.failures.length) return { failures: concealSecrets(checked.failures, values, secrets), warnings: [] };
            if (unknowns.size) return { failures: [], warnings: [] };
            const claim = def.claims(checked.values);
            // Not a failure: Google may take conditions one day, and a user may know better than its list.
            const warnings = claim.grants.some((g) => g.condition)
                ? [`declares a conditional role binding on ${claim.parent}. ${CONDITIONS_NOT_TAKEN}.`] : [];
            return { failures: [], claim, warnings };
        },

        diff(olds, news) {
            const before = plain(olds).values;
            const after = plain(news);
            const canonicalOld = canonical(before);
            const canonicalNew = after.unknowns.size ? {} : canonical(after.values);
            const changed: string[] = [];
            const replaces: string[] = [];
            const detailed: DiffResult["detailed"] = [];
            for (const name of Object.keys(def.inputs)) {
                const unknown = after.unknowns.has(name);
                const same = !unknown && (after.unknowns.size
                    ? JSON.stringify(before[name]) === JSON.stringify(after.values[name])
                    : JSON.stringify(canonicalOld[name] ?? null) === JSON.stringify(canonicalNew[name] ?? null));
                if (same) continue;
                changed.push(name);
                const replace = def.inputs[name].replaceOnChanges === true;
                if (replace) replaces.push(name);
                const lines = after.unknowns.size ? undefined : grantLines(name, before, after.values);
                for (const line of lines ?? [{ path: name, kind: "update" as const }]) detailed.push({ ...line, replace });
            }
            // Replaced by creating first: the engine then deletes the old resource at the end of the deployment, once
            // every resource of the program has been Checked, so its Delete keeps what any of them declares
            // (deployment/); deleting first would run that Delete before the resources declared after this one are
            // Checked. A user's `deleteBeforeReplace` option still deletes first: a grant such a Delete removes that a
            // resource Checked later declares is put back by that resource's update (journal/journal.ts `state`).
            return { changed, replaces, deleteBeforeReplace: false, detailed };
        },

        async create(news, preview, ctx) {
            const { values, secrets, unknowns } = plain(news);
            if (preview) {
                return { id: unknowns.size ? "" : def.id(validInputs(values, secrets)), properties: { ...news, ...unknownOutputs() } };
            }
            const inputs = validInputs(values, secrets);
            const id = def.id(inputs);
            ctx.named(id);
            const outputs = await def.create(inputs, ctx);
            return { id, properties: state({ ...inputs, ...outputs }, secrets) };
        },

        async update(olds, news, preview, ctx) {
            if (preview) return { ...news, ...unknownOutputs() };
            const { values, secrets } = plain(news);
            const inputs = validInputs(values, secrets);
            ctx.named(def.id(inputs));
            const outputs = await def.update(stateInputs(plain(olds).values), inputs, ctx);
            return state({ ...inputs, ...outputs }, secrets);
        },

        async read(id, properties, inputs, ctx) {
            const known = plain(Object.keys(inputs).length ? inputs : properties);
            let readings: Values<I>[];
            if (Object.keys(declared(known.values)).length) {
                readings = [stateInputs(known.values)]; // refresh: the inputs in state, as Google last showed them
            } else {
                const parsed = def.parseId(id); // import: what the ID names (a partial description, e.g. a condition's title)
                if (typeof parsed === "string") return { property: "id", reason: parsed };
                readings = parsed;
            }
            // An ID that reads several ways names what Google holds under one of them: each is read (one policy,
            // read once per reading), and two that Google both holds are refused rather than guessed between.
            const held = new Map<string, NonNullable<Awaited<ReturnType<typeof def.read>>>>();
            for (const wanted of readings) {
                const r = await def.read(wanted, ctx);
                if (r) held.set(def.id(r.inputs), r);
            }
            if (held.size > 1) {
                return { property: "id", reason: `the import ID ${JSON.stringify(id)} reads ${held.size} ways, each a grant Google holds ` +
                    `(${[...held.keys()].map((k) => JSON.stringify(k)).join(", ")}): give it in the space-separated form, which reads one way` };
            }
            const [found] = held.values();
            if (!found) return undefined;
            return {
                id: def.id(found.inputs),
                properties: state({ ...found.inputs, ...found.outputs }, known.secrets),
                inputs: state(found.inputs, known.secrets),
            };
        },

        async delete(properties, ctx) {
            await def.delete(stateInputs(plain(properties).values), ctx);
        },
    };
}
