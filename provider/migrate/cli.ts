// The `migrate-from-gcp` subcommand of the plugin executable: the export on stdin (or --in FILE), the import
// input on stdout (or --out FILE), written only when the whole migration succeeded.

import * as fs from "fs";
import minimist from "minimist";
import { LANGUAGES, packageImport } from "../examples";
import { naming } from "../schema";
import { PACKAGE_NAME } from "../version";
import { CarriedKey, GCP_TYPES, migrateFromGcp, MigrationError } from "./fromGcp";

const MIGRATE_USAGE = [
    "usage: pulumi-resource-cloud migrate-from-gcp [--in FILE] [--out FILE] [--provider URN::ID]",
    "",
    "Reads `pulumi stack export --show-secrets` (stdin, or --in) of a stack using Pulumi GCP's Endpoints IAM resources and",
    "writes the input of `pulumi stack import` (stdout, or --out): each of",
    ...GCP_TYPES.map((t) => `  ${t}`),
    "becomes its cloud:endpoints/… twin with the same name, on a default `cloud` provider made in the file (or the",
    "explicit `pulumi:providers:cloud` resource --provider names), which takes the stack's `gcp:` settings this package",
    "also has. It prints what to do next: import the file, set those settings as `cloud:` keys, change the program.",
    "(Through `pulumi plugin run`, which passes no stdin, give --in and --out.)",
].join("\n");

/** What the user does once the file is written: import it, carry the config, change the program, check. */
function nextSteps(file: string, carried: readonly CarriedKey[]): string {
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
        `  3. in the program, declare each migrated resource with the ${PACKAGE_NAME} package in place of gcp, same name, same properties:`,
        ...LANGUAGES.map((l) => `       ${l}:${" ".repeat(pad(l))}${packageImport(l, n, "endpoints")}`),
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
        const { result, migrated, carried } = migrateFromGcp(parsed, args.provider ? { provider: args.provider } : {});
        const out = `${JSON.stringify(result, null, 4)}\n`;
        if (args.out) {
            const tmp = `${args.out}.tmp-${process.pid}`;
            fs.writeFileSync(tmp, out);
            fs.renameSync(tmp, args.out);
        } else {
            io.stdout.write(out);
        }
        say(migrated ? `migrated ${migrated} resource(s) to their ${PACKAGE_NAME}:endpoints twins, same names; ${nextSteps(args.out ?? "FILE", carried)}`
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
