// The examples in the descriptions of functions and resources, written once as a small program (lookups,
// resources, exports) and rendered into each language Pulumi documents: TypeScript, Python, Go, C#, Java and
// YAML. The names each SDK uses are derived from the tokens the same way Pulumi's generators derive them, and
// tests compile the rendered programs against the generated SDKs.

import { parseToken } from "../package/tokens";
import { PACKAGE_NAME } from "../package/version";

/** A value read from an earlier statement: `from`'s property `prop`. */
export interface Ref {
    readonly from: string;
    readonly prop: string;
}

/** A list of objects of one schema type (e.g. a policy's bindings). */
export interface ObjectList {
    readonly type: string;
    readonly items: readonly Readonly<Record<string, string | readonly string[]>>[];
}

export type ExampleValue = string | readonly string[] | Ref | ObjectList;
export type ExampleArgs = Readonly<Record<string, ExampleValue>>;

export type Statement =
    | { readonly kind: "invoke"; readonly name: string; readonly token: string; readonly args: ExampleArgs }
    | { readonly kind: "resource"; readonly name: string; readonly token: string; readonly args: ExampleArgs }
    | { readonly kind: "export"; readonly name: string; readonly value: Ref };

export interface Example {
    readonly title: string;
    readonly program: readonly Statement[];
}

export const LANGUAGES = ["typescript", "python", "go", "csharp", "java", "yaml"] as const;
export type Language = (typeof LANGUAGES)[number];

/** What the names in each SDK depend on beyond the tokens (schema/schema.ts supplies it). */
export interface Naming {
    /** The npm package the TypeScript examples import. */
    readonly npmName: string;
    /** The Go SDK's import base path. */
    readonly goBase: string;
    /** Every resource token (Go names a function `Lookup<X>` when resource X is in its module). */
    readonly resources: readonly string[];
    /** Go names declared on functions (FunctionDefinition.goName), by token. */
    readonly goNames: ReadonlyMap<string, string>;
}

const upper = (s: string) => s[0].toUpperCase() + s.slice(1);
const isRef = (v: ExampleValue): v is Ref => typeof v === "object" && "from" in v;
const isList = (v: ExampleValue): v is ObjectList => typeof v === "object" && "items" in v;
const moduleOf = (token: string) => parseToken(token).module;
const memberOf = (token: string) => parseToken(token).name;
const q = (s: string) => JSON.stringify(s);

/** Python's snake_case for a camelCase name, as Pulumi's generator makes it (getIAMPolicy → get_iam_policy). */
export function snake(name: string): string {
    return name
        .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .toLowerCase();
}

/** The Go name of a function: its declared goName, else `Lookup<X>` when resource X is in its module, else `Get<X>`. */
export function goFunctionName(token: string, n: Naming): string {
    const declared = n.goNames.get(token);
    if (declared) return declared;
    const m = memberOf(token);
    const rest = m.replace(/^get/, "");
    const mod = moduleOf(token);
    const hasResource = n.resources.some((r) => moduleOf(r) === mod && memberOf(r) === rest);
    return (hasResource ? "Lookup" : "Get") + rest;
}

/**
 * What a program in each language writes to use the package's module `module` (where a Pulumi GCP program writes
 * `@pulumi/gcp`, `pulumi_gcp`, …): an import, or YAML's type token prefix (`…` stands for a member's name).
 */
export function packageImport(language: Language, n: Naming, module: string): string {
    const root = upper(PACKAGE_NAME);
    switch (language) {
        case "typescript": return `import * as ${PACKAGE_NAME} from ${q(n.npmName)};`;
        case "python": return `import pulumi_${PACKAGE_NAME} as ${PACKAGE_NAME}`;
        case "go": return `import ${q(`${n.goBase}/${module}`)}`;
        case "csharp": return `using ${root} = Pulumi.${root};`;
        case "java": return `import com.pulumi.${PACKAGE_NAME}.${module}.…;`;
        case "yaml": return `type: ${PACKAGE_NAME}:${module}:…`;
    }
}

function kindOf(program: readonly Statement[], name: string): "invoke" | "resource" {
    const s = program.find((x) => x.kind !== "export" && x.name === name);
    if (!s || s.kind === "export") throw new Error(`example: ${name} is not declared before use`);
    return s.kind;
}

// --- TypeScript -------------------------------------------------------------------------------------------

function ts(program: readonly Statement[], n: Naming): string {
    const v = (x: ExampleValue, indent: string): string => {
        if (typeof x === "string") return q(x);
        if (isRef(x)) return `${x.from}.${x.prop}`;
        if (isList(x)) {
            return `[${x.items.map((o) => `{\n${Object.entries(o).map(([k, e]) => `${indent}    ${k}: ${v(e, `${indent}    `)},`).join("\n")}\n${indent}}`).join(", ")}]`;
        }
        return `[${x.map(q).join(", ")}]`;
    };
    const args = (a: ExampleArgs) => `{\n${Object.entries(a).map(([k, e]) => `    ${k}: ${v(e, "    ")},`).join("\n")}\n}`;
    const lines = ["import * as pulumi from \"@pulumi/pulumi\";", packageImport("typescript", n, ""), ""];
    for (const s of program) {
        if (s.kind === "invoke") lines.push(`const ${s.name} = ${PACKAGE_NAME}.${moduleOf(s.token)}.${memberOf(s.token)}Output(${args(s.args)});`);
        if (s.kind === "resource") lines.push(`const ${s.name} = new ${PACKAGE_NAME}.${moduleOf(s.token)}.${memberOf(s.token)}(${q(s.name)}, ${args(s.args)});`);
        if (s.kind === "export") lines.push(`export const ${s.name} = ${s.value.from}.${s.value.prop};`);
    }
    return lines.join("\n");
}

// --- Python -----------------------------------------------------------------------------------------------

function py(program: readonly Statement[], n: Naming): string {
    const v = (x: ExampleValue): string => {
        if (typeof x === "string") return q(x);
        if (isRef(x)) return `${snake(x.from)}.${snake(x.prop)}`;
        if (isList(x)) return `[${x.items.map((o) => `{\n${Object.entries(o).map(([k, e]) => `        ${q(k)}: ${v(e)},`).join("\n")}\n    }`).join(", ")}]`;
        return `[${x.map(q).join(", ")}]`;
    };
    const args = (a: ExampleArgs) => Object.entries(a).map(([k, e]) => `\n    ${snake(k)}=${v(e)}`).join(",");
    const lines = ["import pulumi", packageImport("python", n, ""), ""];
    for (const s of program) {
        if (s.kind === "invoke") lines.push(`${snake(s.name)} = ${PACKAGE_NAME}.${moduleOf(s.token)}.${snake(memberOf(s.token))}_output(${args(s.args)})`);
        if (s.kind === "resource") lines.push(`${snake(s.name)} = ${PACKAGE_NAME}.${moduleOf(s.token)}.${memberOf(s.token)}(${q(s.name)},${args(s.args)})`);
        if (s.kind === "export") lines.push(`pulumi.export(${q(s.name)}, ${snake(s.value.from)}.${snake(s.value.prop)})`);
    }
    return lines.join("\n");
}

// --- Go ---------------------------------------------------------------------------------------------------

function go(program: readonly Statement[], n: Naming): string {
    const mods = [...new Set(program.flatMap((s) => (s.kind === "export" ? [] : [moduleOf(s.token)])))].sort();
    const body: string[] = [];
    for (const s of program) {
        const mod = s.kind === "export" ? "" : moduleOf(s.token);
        if (s.kind === "invoke") {
            // The plain form, as Pulumi GCP's Go examples use it: plain values in, a plain result out.
            const plain = (x: ExampleValue, indent: string): string => {
                if (typeof x === "string") return q(x);
                if (isRef(x)) throw new Error("example: a Go lookup takes plain values only");
                if (isList(x)) {
                    const t = `${moduleOf(x.type)}.${upper(memberOf(x.type))}`;
                    return `[]${t}{\n${x.items.map((o) => `${indent}\t{\n${Object.entries(o).map(([k, e]) => `${indent}\t\t${upper(k)}: ${plain(e, `${indent}\t\t`)},`).join("\n")}\n${indent}\t},`).join("\n")}\n${indent}}`;
                }
                return `[]string{${x.map(q).join(", ")}}`;
            };
            const name = goFunctionName(s.token, n);
            body.push(`\t\t${s.name}, err := ${mod}.${name}(ctx, &${mod}.${name}Args{`,
                ...Object.entries(s.args).map(([k, e]) => `\t\t\t${upper(k)}: ${plain(e, "\t\t\t")},`),
                "\t\t}, nil)", "\t\tif err != nil {", "\t\t\treturn err", "\t\t}");
        }
        const input = (x: ExampleValue): string => {
            if (typeof x === "string") return `pulumi.String(${q(x)})`;
            if (isRef(x)) return kindOf(program, x.from) === "invoke" ? `pulumi.String(${x.from}.${upper(x.prop)})` : `${x.from}.${upper(x.prop)}`;
            if (isList(x)) throw new Error("example: Go resource arguments take no object lists here");
            return `pulumi.StringArray{\n${x.map((m) => `\t\t\t\tpulumi.String(${q(m)}),`).join("\n")}\n\t\t\t}`;
        };
        if (s.kind === "resource") {
            const t = memberOf(s.token);
            body.push(`\t\t_, err = ${mod}.New${t}(ctx, ${q(s.name)}, &${mod}.${t}Args{`,
                ...Object.entries(s.args).map(([k, e]) => `\t\t\t${upper(k)}: ${input(e)},`),
                "\t\t})", "\t\tif err != nil {", "\t\t\treturn err", "\t\t}");
        }
        if (s.kind === "export") body.push(`\t\tctx.Export(${q(s.name)}, ${input(s.value)})`);
    }
    // `err` is declared by the first lookup; a program without one declares it.
    if (!program.some((s) => s.kind === "invoke")) body.unshift("\t\tvar err error");
    return [
        "package main",
        "",
        "import (",
        ...mods.map((m) => `\t${q(`${n.goBase}/${m}`)}`),
        "\t\"github.com/pulumi/pulumi/sdk/v3/go/pulumi\"",
        ")",
        "",
        "func main() {",
        "\tpulumi.Run(func(ctx *pulumi.Context) error {",
        ...body,
        "\t\treturn nil",
        "\t})",
        "}",
    ].join("\n");
}

// --- C# ---------------------------------------------------------------------------------------------------

function cs(program: readonly Statement[], n: Naming): string {
    const root = upper(PACKAGE_NAME);
    const ns = (token: string) => `${root}.${upper(moduleOf(token))}`;
    const v = (x: ExampleValue, indent: string): string => {
        if (typeof x === "string") return q(x);
        if (isRef(x)) return kindOf(program, x.from) === "invoke" ? `${x.from}.Apply(result => result.${upper(x.prop)})` : `${x.from}.${upper(x.prop)}`;
        if (isList(x)) {
            return `new[]\n${indent}{\n${x.items.map((o) => `${indent}    new ${ns(x.type)}.Inputs.${upper(memberOf(x.type))}InputArgs\n${indent}    {\n${Object.entries(o).map(([k, e]) => `${indent}        ${upper(k)} = ${v(e, `${indent}        `)},`).join("\n")}\n${indent}    },`).join("\n")}\n${indent}}`;
        }
        return `new[]\n${indent}{\n${x.map((m) => `${indent}    ${q(m)},`).join("\n")}\n${indent}}`;
    };
    const args = (a: ExampleArgs) => `new()\n    {\n${Object.entries(a).map(([k, e]) => `        ${upper(k)} = ${v(e, "        ")},`).join("\n")}\n    }`;
    const body: string[] = [];
    const exports: string[] = [];
    for (const s of program) {
        if (s.kind === "invoke") body.push(`    var ${s.name} = ${ns(s.token)}.${upper(memberOf(s.token))}.Invoke(${args(s.args)});`, "");
        if (s.kind === "resource") body.push(`    var ${s.name} = new ${ns(s.token)}.${memberOf(s.token)}(${q(s.name)}, ${args(s.args)});`, "");
        if (s.kind === "export") exports.push(`        [${q(s.name)}] = ${v(s.value, "        ")},`);
    }
    const ret = exports.length ? ["    return new Dictionary<string, object?>", "    {", ...exports, "    };"] : [];
    if (!ret.length) body.pop(); // the blank line after the last statement
    return [
        "using System.Collections.Generic;",
        "using System.Linq;",
        "using Pulumi;",
        packageImport("csharp", n, ""),
        "",
        "return await Deployment.RunAsync(() =>",
        "{",
        ...body,
        ...ret,
        "});",
    ].join("\n");
}

// --- Java -------------------------------------------------------------------------------------------------

function java(program: readonly Statement[]): string {
    const base = `com.pulumi.${PACKAGE_NAME}`;
    const imports = new Set<string>(["com.pulumi.Context", "com.pulumi.Pulumi"]);
    const v = (x: ExampleValue, indent: string): string => {
        if (typeof x === "string") return q(x);
        if (isRef(x)) return kindOf(program, x.from) === "invoke" ? `${x.from}.applyValue(result -> result.${x.prop}())` : `${x.from}.${x.prop}()`;
        if (isList(x)) {
            const t = `${upper(memberOf(x.type))}Args`;
            imports.add(`${base}.${moduleOf(x.type)}.inputs.${t}`);
            return x.items.map((o) => `${t}.builder()${Object.entries(o).map(([k, e]) => `\n${indent}    .${k}(${v(e, `${indent}    `)})`).join("")}\n${indent}    .build()`).join(", ");
        }
        return x.map(q).join(", ");
    };
    const builder = (t: string, a: ExampleArgs) => `${t}.builder()${Object.entries(a).map(([k, e]) => `\n            .${k}(${v(e, "            ")})`).join("")}\n            .build()`;
    const body: string[] = [];
    for (const s of program) {
        const mod = s.kind === "export" ? "" : moduleOf(s.token);
        if (s.kind === "invoke") {
            const fns = `${upper(mod)}Functions`;
            const argsType = `${upper(memberOf(s.token))}Args`;
            imports.add(`${base}.${mod}.${fns}`).add(`${base}.${mod}.inputs.${argsType}`);
            body.push(`        final var ${s.name} = ${fns}.${memberOf(s.token)}(${builder(argsType, s.args)});`, "");
        }
        if (s.kind === "resource") {
            const t = memberOf(s.token);
            imports.add(`${base}.${mod}.${t}`).add(`${base}.${mod}.${t}Args`);
            body.push(`        var ${s.name} = new ${t}(${q(s.name)}, ${builder(`${t}Args`, s.args)});`, "");
        }
        if (s.kind === "export") body.push(`        ctx.export(${q(s.name)}, ${v(s.value, "        ")});`);
    }
    return [
        "package generated_program;",
        "",
        ...[...imports].sort().map((i) => `import ${i};`),
        "",
        "public class App {",
        "    public static void main(String[] args) {",
        "        Pulumi.run(App::stack);",
        "    }",
        "",
        "    public static void stack(Context ctx) {",
        ...body,
        "    }",
        "}",
    ].join("\n").replace(/\n\n {4}\}\n\}$/, "\n    }\n}");
}

// --- YAML -------------------------------------------------------------------------------------------------

function yaml(program: readonly Statement[]): string {
    const v = (x: ExampleValue, indent: string): string => {
        if (typeof x === "string") return x;
        if (isRef(x)) return `\${${x.from}.${x.prop}}`;
        if (isList(x)) {
            return x.items.map((o) => Object.entries(o).map(([k, e], i) =>
                `\n${indent}${i === 0 ? "- " : "  "}${k}:${Array.isArray(e) ? "" : " "}${v(e, `${indent}    `)}`).join("")).join("");
        }
        return x.map((m) => `\n${indent}- ${m}`).join("");
    };
    const props = (a: ExampleArgs, indent: string) =>
        Object.entries(a).map(([k, e]) => `${indent}${k}:${typeof e === "string" || isRef(e) ? " " : ""}${v(e, `${indent}  `)}`);
    const variables: string[] = [];
    const resources: string[] = [];
    const outputs: string[] = [];
    for (const s of program) {
        if (s.kind === "invoke") variables.push(`  ${s.name}:`, "    fn::invoke:", `      function: ${s.token}`, "      arguments:", ...props(s.args, "        "));
        if (s.kind === "resource") resources.push(`  ${s.name}:`, `    type: ${s.token}`, "    properties:", ...props(s.args, "      "));
        if (s.kind === "export") outputs.push(`  ${s.name}: ${v(s.value, "")}`);
    }
    const section = (name: string, lines: string[]) => (lines.length ? [`${name}:`, ...lines] : []);
    return [...section("variables", variables), ...section("resources", resources), ...section("outputs", outputs)].join("\n");
}

const RENDER: Record<Language, (p: readonly Statement[], n: Naming) => string> = { typescript: ts, python: py, go, csharp: cs, java, yaml };

/** One example's program in one language. */
export function renderExample(program: readonly Statement[], language: Language, n: Naming): string {
    return RENDER[language](program, n);
}

/** The `## Example Usage` section of a description, in Pulumi's docs format (one code block per language). */
export function examplesSection(examples: readonly Example[], n: Naming): string {
    return [
        "{{% examples %}}",
        "## Example Usage",
        ...examples.flatMap((e) => [
            "",
            "{{% example %}}",
            `### ${e.title}`,
            "",
            ...LANGUAGES.flatMap((l) => ["```" + l, renderExample(e.program, l, n), "```"]),
            "{{% /example %}}",
        ]),
        "{{% /examples %}}",
    ].join("\n");
}
