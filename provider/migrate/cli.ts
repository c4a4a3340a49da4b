// The `migrate-from-gcp` and `migrate-from-terraform` subcommands of the plugin executable: their input on stdin
// (or --in FILE), their output on stdout (or --out FILE; `-` for either is the standard stream), written only when
// the whole migration succeeded, and never half: a file is written beside the target and renamed over it.

import * as fs from "fs";
import minimist from "minimist";
import { LANGUAGES, packageImport } from "../declare/examples";
import { naming } from "../schema/schema";
import { PACKAGE_NAME } from "../package/version";
import { CarriedKey, ExplicitProvider, GCP_TYPES, migrateFromGcp, MigrationError } from "./fromGcp";
import { LeftOut, migrateFromTerraform, STATE_VERSIONS, TERRAFORM_TYPES, TerraformMigration } from "./fromTerraform";

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

interface Io {
    stdin: NodeJS.ReadableStream;
    stdout: NodeJS.WritableStream;
    stderr: NodeJS.WritableStream;
}

/** A subcommand's arguments: --in, --out, --provider, --help; anything else is a usage error (said, exit 2). */
function commandArgs(argv: readonly string[], usage: string, io: Io, say: (text: string) => void): { in?: string; out?: string; provider?: string } | number {
    const options = { string: ["in", "out", "provider"], boolean: ["help"] };
    const args = minimist([...argv], options);
    if (args.help === true) {
        io.stdout.write(`${usage}\n`);
        return 0;
    }
    const unknown = [...Object.keys(args).filter((k) => k !== "_" && !options.string.includes(k) && !options.boolean.includes(k)), ...args._.map(String)];
    if (unknown.length) {
        say(`unknown argument ${unknown.map((u) => JSON.stringify(u)).join(", ")}\n\n${usage}`);
        return 2;
    }
    const given = (v: unknown) => (typeof v === "string" && v !== "-" ? v : undefined);
    return { in: given(args.in), out: given(args.out), provider: typeof args.provider === "string" && args.provider !== "" ? args.provider : undefined };
}

/** The input's text (the file, or stdin), or undefined once the reason it cannot be read is said. */
async function readInput(file: string | undefined, io: Io, say: (text: string) => void): Promise<string | undefined> {
    try {
        return file ? fs.readFileSync(file, "utf8") : await readAll(io.stdin);
    } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        say(`cannot read ${file ?? "stdin"}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : e instanceof Error ? e.message : String(e)}`);
        return undefined;
    }
}

/** Writes the whole output: to a file beside `file` renamed over it (a reader never sees half of it), or to stdout. */
function writeOutput(file: string | undefined, text: string, io: Io): void {
    if (!file) {
        io.stdout.write(text);
        return;
    }
    const tmp = `${file}.tmp-${process.pid}`;
    try {
        fs.writeFileSync(tmp, text);
        fs.renameSync(tmp, file);
    } catch (e) {
        fs.rmSync(tmp, { force: true });
        throw new MigrationError(`cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
}

/** Runs `migrate-from-gcp`; resolves with the exit code (0, 1 refused, 2 usage). */
export async function runMigrate(argv: readonly string[], io: Io): Promise<number> {
    const say = (text: string) => io.stderr.write(`pulumi-resource-cloud migrate-from-gcp: ${text}\n`);
    const args = commandArgs(argv, MIGRATE_USAGE, io, say);
    if (typeof args === "number") return args;
    const text = await readInput(args.in, io, say);
    if (text === undefined) return 1;
    let parsed;
    try {
        parsed = JSON.parse(text);
    } catch (e) {
        say(`${args.in ?? "stdin"} is not JSON (${e instanceof Error ? e.message : String(e)}): give the output of \`pulumi stack export --show-secrets\``);
        return 1;
    }
    try {
        const { result, migrated, carried, providers } = migrateFromGcp(parsed, args.provider ? { provider: args.provider } : {});
        writeOutput(args.out, `${JSON.stringify(result, null, 4)}\n`, io);
        say(migrated ? `migrated ${migrated} resource(s) to their ${PACKAGE_NAME}:endpoints twins, same names; ${nextSteps(args.out ?? "FILE", carried, providers)}`
            : "the export has no Pulumi GCP Endpoints IAM resource: written unchanged");
        return 0;
    } catch (e) {
        if (!(e instanceof MigrationError)) throw e;
        say(`${e.message}; nothing was written`);
        return 1;
    }
}

const TERRAFORM_USAGE = [
    "usage: pulumi-resource-cloud migrate-from-terraform [--in FILE|-] [--out FILE|-] [--provider NAME=URN]",
    "",
    `Reads a Terraform state (format version ${STATE_VERSIONS.join(", ")}: \`terraform state pull\`, or a terraform.tfstate; stdin, or --in) and`,
    "writes the input of `pulumi import --file` (stdout, or --out): one resource per instance of",
    ...TERRAFORM_TYPES.map((t) => `  ${t.terraform}  (${t.ours})`),
    "of the providers hashicorp/google and hashicorp/google-beta, its import ID made from the instance's attributes and",
    "its name from the Terraform address (kept beside it as `terraformAddress`). Everything else is left out, and listed.",
    "--provider names an explicit `pulumi:providers:cloud` resource of the stack for the imports. Nothing is sent to Google.",
    "(Through `pulumi plugin run`, which passes no stdin, give --in and --out.)",
].join("\n");

/** A shell word: quoted unless it is plain. */
const shellWord = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);

/** What the command says once the file is written: what moved, what was left out, the next commands. */
function terraformReport(file: string | undefined, m: TerraformMigration): string {
    const rs = m.file.resources;
    const width = rs.reduce((w, r) => Math.max(w, r.terraformAddress.length), 0);
    const left = (l: LeftOut) => `  ${l.address}: ${l.reason}`;
    return [
        `wrote ${rs.length} resource(s) to ${file ?? "stdout"} (Terraform address → Pulumi name):`,
        ...rs.map((r) => `  ${r.terraformAddress.padEnd(width)}  →  ${r.name}`),
        ...(m.leftOut.length ? [`left out ${m.leftOut.length}:`, ...m.leftOut.map(left)] : []),
        "next:",
        `  1. pulumi import --file ${file ?? "FILE"} --protect=false   (reads each grant, writes none; add the code it prints to the program)`,
        "  2. pulumi refresh --expect-no-changes, then pulumi preview --expect-no-changes",
        "  3. in the Terraform configuration's folder (this deletes nothing in Google):",
        `       terraform state rm ${rs.map((r) => shellWord(r.terraformAddress)).join(" ")}`,
        "     then delete those resources' blocks from the configuration (else the next terraform apply creates them again)",
    ].join("\n");
}

/** Runs `migrate-from-terraform`; resolves with the exit code (0, 1 refused, 2 usage). */
export async function runMigrateFromTerraform(argv: readonly string[], io: Io): Promise<number> {
    const say = (text: string) => io.stderr.write(`pulumi-resource-cloud migrate-from-terraform: ${text}\n`);
    const args = commandArgs(argv, TERRAFORM_USAGE, io, say);
    if (typeof args === "number") return args;
    const source = args.in ?? "stdin";
    const text = await readInput(args.in, io, (t) => say(`${t}; nothing was written`));
    if (text === undefined) return 1;
    try {
        let parsed;
        try {
            parsed = JSON.parse(text);
        } catch (e) {
            throw new MigrationError(`${source} is not a Terraform state: not JSON (${e instanceof Error ? e.message : String(e)}); ` +
                "give `terraform state pull`'s output or a terraform.tfstate file");
        }
        const m = migrateFromTerraform(parsed, { source, ...(args.provider ? { provider: args.provider } : {}) });
        writeOutput(args.out, `${JSON.stringify(m.file, null, 4)}\n`, io);
        say(terraformReport(args.out, m));
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
