// The `migrate-from-gcp` subcommand of the plugin executable: the export on stdin (or --in FILE), the import
// input on stdout (or --out FILE), written only when the whole migration succeeded.

import * as fs from "fs";
import minimist from "minimist";
import { LANGUAGES, packageImport } from "../declare/examples";
import { naming } from "../schema/schema";
import { PACKAGE_NAME } from "../package/version";
import { CarriedKey, ExplicitProvider, GCP_TYPES, migrateFromGcp, MigrationError } from "./fromGcp";

const MIGRATE_USAGE = [
    "usage: pulumi-resource-cloud migrate-from-gcp [--in FILE] [--out FILE] [--provider URN::ID]",
    "",
    "Reads `pulumi stack export --show-secrets` (stdin, or --in) of a stack using Pulumi GCP's Endpoints IAM resources and",
    "writes the input of `pulumi stack import` (stdout, or --out): each of",
    ...GCP_TYPES.map((t) => `  ${t}`),
    "becomes its cloud:endpoints/… twin with the same name (its descendants' URNs follow), on a default `cloud` provider",
    "made in the file (or the explicit `pulumi:providers:cloud` resource --provider names), which takes the stack's `gcp:`",
    "settings this package also has; those on an explicit gcp provider get a `cloud` provider of the same name beside it.",
    "It prints what to do next: import the file, set those settings as `cloud:` keys, change the program.",
    "(Through `pulumi plugin run`, which passes no stdin, give --in and --out.)",
].join("\n");

/** A setting's value as a program writes it; a secret's is the user's to give again (never printed). */
const shown = (s: ExplicitProvider["settings"][number], quote: (v: string) => string) =>
    s.secret ? "<secret: the value the gcp provider was given>" : typeof s.value === "string" ? quote(s.value) : JSON.stringify(s.value);

/** The program's new explicit provider, in YAML and TypeScript, and how the migrated resources name it. */
function providerSnippets(p: ExplicitProvider): string[] {
    const v = p.name.replace(/[^A-Za-z0-9_$]/g, "_").replace(/^(\d)/, "_$1");
    const ts = `new ${PACKAGE_NAME}.Provider(${JSON.stringify(p.name)}, { ${p.settings.map((s) => `${s.key}: ${shown(s, JSON.stringify)}`).join(", ")} })`;
    return [
        `     ${p.replaced ? "in place of" : "beside"} the gcp provider ${p.gcp}${p.replaced ? " (gone from the state: only migrated resources used it)" : ""}, ` +
            `a ${PACKAGE_NAME} provider named ${p.name} (its settings are in the file):`,
        "       YAML:",
        `         ${p.name}:`,
        "           type: pulumi:providers:cloud",
        ...(p.settings.length ? ["           properties:", ...p.settings.map((s) => `             ${s.key}: ${shown(s, JSON.stringify)}`)] : []),
        `         (each resource that used the gcp provider: options: { provider: \${${p.name}} })`,
        "       TypeScript:",
        `         const ${v} = ${ts};`,
        `         (each resource that used the gcp provider: { provider: ${v} })`,
    ];
}

/** What the user does once the file is written: import it, carry the config, change the program, check. */
function nextSteps(file: string, carried: readonly CarriedKey[], providers: readonly ExplicitProvider[]): string {
    const n = naming();
    const pad = (l: string) => LANGUAGES.reduce((w, x) => Math.max(w, x.length), 0) + 2 - l.length;
    return [
        "next:",
        `  1. pulumi stack import --file ${file}`,
        ...(carried.length ? [
            `  2. the ${PACKAGE_NAME} provider in the file holds the stack's gcp: settings this package has; set them as ${PACKAGE_NAME}: keys too`,
            "     (from the stack's folder; the values are read, never printed):",
            ...carried.map(({ key, secret }) => `       pulumi config set${secret ? " --secret" : ""} ${PACKAGE_NAME}:${key} "$(pulumi config get gcp:${key})"`),
        ] : [`  2. (no gcp: setting to carry: the ${PACKAGE_NAME} provider's settings are yours to set)`]),
        `  3. in the program, declare each migrated resource with the ${PACKAGE_NAME} package in place of gcp, same name, same properties,`,
        "     same parent and options:",
        ...LANGUAGES.map((l) => `       ${l}:${" ".repeat(pad(l))}${packageImport(l, n, "endpoints")}`),
        ...providers.flatMap(providerSnippets),
        "  4. pulumi refresh --preview-only --expect-no-changes, then pulumi preview --expect-no-changes (nothing to create, nothing to delete)",
    ].join("\n");
}

/** Runs the subcommand; resolves with the exit code (0, 1 refused, 2 usage). */
export async function runMigrate(argv: readonly string[], io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): Promise<number> {
    const options = { string: ["in", "out", "provider"], boolean: ["help"] };
    const args = minimist([...argv], options);
    const say = (text: string) => io.stderr.write(`pulumi-resource-cloud migrate-from-gcp: ${text}\n`);
    if (args.help === true) {
        io.stdout.write(`${MIGRATE_USAGE}\n`);
        return 0;
    }
    const unknown = [...Object.keys(args).filter((k) => k !== "_" && !options.string.includes(k) && !options.boolean.includes(k)), ...args._.map(String)];
    if (unknown.length) {
        say(`unknown argument ${unknown.map((u) => JSON.stringify(u)).join(", ")}\n\n${MIGRATE_USAGE}`);
        return 2;
    }
    let text: string;
    try {
        text = args.in ? fs.readFileSync(args.in, "utf8") : await readAll(io.stdin);
    } catch (e) {
        say(`cannot read ${args.in ?? "stdin"}: ${e instanceof Error ? e.message : String(e)}`);
        return 1;
    }
    let parsed;
    try {
        parsed = JSON.parse(text);
    } catch (e) {
        say(`${args.in ?? "stdin"} is not JSON (${e instanceof Error ? e.message : String(e)}): give the output of \`pulumi stack export --show-secrets\``);
        return 1;
    }
    try {
        const { result, migrated, carried, providers } = migrateFromGcp(parsed, args.provider ? { provider: args.provider } : {});
        const out = `${JSON.stringify(result, null, 4)}\n`;
        if (args.out) {
            const tmp = `${args.out}.tmp-${process.pid}`;
            fs.writeFileSync(tmp, out);
            fs.renameSync(tmp, args.out);
        } else {
            io.stdout.write(out);
        }
        say(migrated ? `migrated ${migrated} resource(s) to their ${PACKAGE_NAME}:endpoints twins, same names; ${nextSteps(args.out ?? "FILE", carried, providers)}`
            : "the export has no Pulumi GCP Endpoints IAM resource: written unchanged");
        return 0;
    } catch (e) {
        if (!(e instanceof MigrationError)) throw e;
        say(`${e.message}; nothing was written`);
        return 1;
    }
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
    return new Promise((resolve, reject) => {
        let text = "";
        stream.setEncoding("utf8");
        stream.on("data", (d: string) => (text += d));
        stream.once("end", () => resolve(text));
        stream.once("error", reject);
    });
}
