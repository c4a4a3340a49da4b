// The one way to declare what this provider offers. A function, a resource, an object type or a config key
// is declared once, with typed properties; schema.json, input checking and dispatch are all derived from
// these declarations (see schema/schema.ts, check.ts and protocol/server.ts), so no list of tokens or property names is
// kept anywhere else.

/** The shape of a property's value, as schema.json spells it. */
export type TypeSpec =
    | { kind: "string" }
    | { kind: "boolean" }
    | { kind: "integer" }
    | { kind: "number" }
    | { kind: "array"; items: TypeSpec }
    | { kind: "object"; object: ObjectTypeDefinition };

/** A type with the TypeScript type of its values attached (phantom), so handlers are typed. */
export interface Type<T> {
    readonly spec: TypeSpec;
    /** Never set: carries T for type inference only. */
    readonly __value?: T;
}

/** One property of a function's inputs or outputs, a resource, an object type or the provider config. */
export interface Property<T = unknown, Required extends boolean = boolean> {
    readonly type: Type<T>;
    /** Shown in schema.json and in every generated SDK; omitted where the record has none. */
    readonly description?: string;
    readonly required: Required;
    readonly secret?: boolean;
    /** A rule beyond the type: returns what was wrong, written for a person, or undefined. */
    check?(value: T): string | undefined;
    /** Environment variables consulted, in order, when a config key is not set (config only). */
    readonly env?: readonly string[];
    /** The value used when neither config nor environment sets it (config only). */
    readonly default?: T;
    /** Whether a change of this (resource input) property replaces the resource. */
    readonly replaceOnChanges?: boolean;
}

export type Properties = { readonly [name: string]: Property };

/** Keys of required properties; a property that may be absent from the declaration itself (declared for one
 * kind of resource only, e.g. by a conditional spread) is not required in the values. */
type RequiredKeys<P extends Properties> = {
    [K in keyof P]-?: {} extends Pick<P, K> ? never : P[K]["required"] extends true ? K : never;
}[keyof P];
type OptionalKeys<P extends Properties> = Exclude<keyof P, RequiredKeys<P>>;
type ValueOf<P> = P extends Property<infer T> ? T : never;

/** The typed record a set of properties describes: required ones present, the others optional. */
export type Values<P extends Properties> = { -readonly [K in RequiredKeys<P>]: ValueOf<P[K]> } & {
    -readonly [K in OptionalKeys<P>]?: ValueOf<P[K]>;
};

/** A named object type, declared under schema.json `types` and referred to by `$ref`. */
export interface ObjectTypeDefinition {
    readonly token: string;
    readonly description: string;
    readonly properties: Properties;
}

export const types = {
    string: { spec: { kind: "string" } } as Type<string>,
    boolean: { spec: { kind: "boolean" } } as Type<boolean>,
    integer: { spec: { kind: "integer" } } as Type<number>,
    number: { spec: { kind: "number" } } as Type<number>,
    array<T>(items: Type<T>): Type<T[]> {
        return { spec: { kind: "array", items: items.spec } };
    },
    object<P extends Properties>(token: string, description: string, properties: P): Type<Values<P>> {
        return { spec: { kind: "object", object: { token, description, properties } } };
    },
};

/** The token of an object type (for docs that name the type). */
export function objectToken(t: Type<unknown>): string {
    if (t.spec.kind !== "object") throw new Error("objectToken: not an object type");
    return t.spec.object.token;
}

interface PropertyOptions<T, R extends boolean> {
    required?: R;
    secret?: boolean;
    check?(value: T): string | undefined;
    env?: readonly string[];
    default?: T;
    replaceOnChanges?: boolean;
}

/** Declares a property. `required: true` makes it required in schema.json, in checking and in the types. */
export function property<T, const R extends boolean = false>(
    type: Type<T>,
    description: string | undefined,
    options: PropertyOptions<T, R> = {},
): Property<T, R> {
    const { required, ...rest } = options;
    return { type, description, required: (required ?? false) as R, ...rest };
}
