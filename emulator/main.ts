// CLI: `cloud-emulator [flags]`. Line 1 of stdout is the API base URL and nothing comes before it, so a parent
// process can read it; every other message goes to stderr, except `--help`, which is asked-for output.
// Exit status: 0 after --help or a signal, 1 when the emulator cannot start, 2 on a usage error.

import * as fs from "fs";
import minimist from "minimist";
import { startEmulator } from "./index";
import { DEFAULT_MINT_EMAIL } from "./tokens";
import type { Emulator, EmulatorOptions } from "./types";

/** One flag: the parser's configuration and the help text both come from this table. */
interface Flag {
    name: string;
    /** The value's placeholder; none for a switch. */
    arg?: string;
    help: string;
    default: string;
    repeatable?: boolean;
}

const FLAGS: readonly Flag[] = [
    { name: "port", arg: "N", help: "TCP port to listen on; 0 lets the emulator pick a free one (stdout line 1 tells which)", default: "0" },
    { name: "host", arg: "ADDR", help: "interface to bind", default: "127.0.0.1" },
    { name: "access-token", arg: "TOKEN", repeatable: true, help: "a static bearer token accepted with every permission", default: "none" },
    { name: "denied-token", arg: "TOKEN", repeatable: true, help: "a static bearer token that authenticates but holds no permission", default: "none" },
    { name: "state", arg: "FILE", help: "load state from FILE if it exists and rewrite it after every change", default: "state kept in memory only" },
    { name: "fault-rate", arg: "R", help: "fraction 0..1 of /v1/services requests answered with a 429, a 503 or a reset connection", default: "0" },
    { name: "latency-ms", arg: "N", help: "delay each /v1/services request by a random 0..N ms", default: "0" },
    { name: "token-lifetime", arg: "S", help: "lifetime in seconds of the access tokens the emulator issues", default: "3600" },
    { name: "propagation-ms", arg: "N", help: "for N ms after a write, getIamPolicy still answers the previous policy (IAM is eventually consistent)", default: "0" },
    { name: "missing-service", arg: "403|404", help: "status of a request on a service that does not exist (Google answers 403)", default: "403" },
    { name: "quota-per-minute", arg: "N", help: "answer at most N Service Management calls per consumer project (X-Goog-User-Project, else one shared bucket) in any rolling minute, refusing the rest with Google's 429 RESOURCE_EXHAUSTED; Google's quota is 120", default: "no quota" },
    { name: "allow-conditions", help: "accept role bindings with a condition in setIamPolicy; Google does not list Service Management among the resources that accept them, so they are refused with 400 INVALID_ARGUMENT", default: "off, conditions refused" },
    { name: "mint-key", arg: "FILE", help: "write a service-account key (mode 0600) that the token endpoint accepts to FILE", default: "none" },
    { name: "mint-email", arg: "EMAIL", help: "client_email of the key written by --mint-key", default: DEFAULT_MINT_EMAIL },
    { name: "tls-cert", arg: "FILE", help: "serve HTTPS with this PEM certificate chain (needs --tls-key)", default: "plain HTTP" },
    { name: "tls-key", arg: "FILE", help: "the PEM private key of --tls-cert", default: "plain HTTP" },
    { name: "help", help: "print this help and exit (also -h)", default: "" },
];

function helpText(): string {
    const lines = [
        "usage: cloud-emulator [flags]",
        "",
        "A local twin of Google's Service Management API v1 (services, their IAM policies and those of their",
        "consumers), with an OAuth2 token endpoint. Line 1 of stdout is the API base URL; logs go to stderr.",
        "It stops on SIGINT or SIGTERM, and when the process that started it exits.",
        "",
        "flags:",
    ];
    for (const f of FLAGS) {
        const left = `  --${f.name}${f.arg ? ` ${f.arg}` : ""}`;
        const notes = [f.repeatable ? "repeatable" : "", f.default ? `default: ${f.default}` : ""].filter(Boolean).join("; ");
        lines.push(left, ...wrap(`${f.help}${notes ? ` (${notes})` : ""}`, 6, 100));
    }
    return `${lines.join("\n")}\n`;
}

/** `text` in lines of at most `width` columns, each indented by `indent` spaces. */
function wrap(text: string, indent: number, width: number): string[] {
    const out: string[] = [];
    let line = "";
    for (const word of text.split(" ")) {
        if (line && indent + line.length + 1 + word.length > width) {
            out.push(" ".repeat(indent) + line);
            line = word;
        } else {
            line = line ? `${line} ${word}` : word;
        }
    }
    if (line) out.push(" ".repeat(indent) + line);
    return out;
}

class UsageError extends Error {}
/** Thrown by the parser for --help: not an error, but nothing is started either. */
class HelpRequested extends Error {}

/** Repeatable flags come back from minimist as a string or an array; a value-less flag as "". */
function list(args: minimist.ParsedArgs, name: string): string[] {
    const v: unknown = args[name];
    const values = (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
    if (values.some((s) => s === "")) throw new UsageError(`--${name} needs a value`);
    return values;
}

function single(args: minimist.ParsedArgs, name: string): string | undefined {
    const v: unknown = args[name];
    if (v === undefined) return undefined;
    if (Array.isArray(v)) throw new UsageError(`--${name} given more than once`);
    if (v === "") throw new UsageError(`--${name} needs a value`);
    return String(v);
}

function number(args: minimist.ParsedArgs, name: string, ok: (n: number) => boolean): number | undefined {
    const v = single(args, name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n) || !ok(n)) throw new UsageError(`invalid --${name} ${JSON.stringify(v)}`);
    return n;
}

function missingService(n: number | undefined): 403 | 404 | undefined {
    return n === 403 || n === 404 ? n : undefined;
}

function readPem(file: string, flag: string): string {
    try {
        return fs.readFileSync(file, "utf8");
    } catch (e) {
        throw new UsageError(`${flag}: cannot read ${JSON.stringify(file)} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
}

/** minimist reads `--flag -1` as two flags: a negative number after a flag that takes a value is its value. */
function joinNegativeValues(argv: string[]): string[] {
    const takesValue = new Set(FLAGS.filter((f) => f.arg).map((f) => `--${f.name}`));
    const out: string[] = [];
    for (let i = 0; i < argv.length; i++) {
        if (takesValue.has(argv[i]) && /^-\d/.test(argv[i + 1] ?? "")) out.push(`${argv[i]}=${argv[++i]}`);
        else out.push(argv[i]);
    }
    return out;
}

export function parseArgs(argv: string[]): EmulatorOptions {
    const unknown: string[] = [];
    const args = minimist(joinNegativeValues(argv), {
        string: FLAGS.filter((f) => f.arg).map((f) => f.name),
        boolean: FLAGS.filter((f) => !f.arg).map((f) => f.name),
        alias: { h: "help" },
        unknown: (arg) => {
            unknown.push(arg);
            return false;
        },
    });
    if (args.help) throw new HelpRequested();
    if (unknown.length) throw new UsageError(`unknown argument ${unknown[0]}`);
    const options: EmulatorOptions = {
        port: number(args, "port", (n) => Number.isInteger(n) && n >= 0 && n <= 65535),
        host: single(args, "host"),
        accessTokens: list(args, "access-token"),
        deniedTokens: list(args, "denied-token"),
        state: single(args, "state"),
        faultRate: number(args, "fault-rate", (n) => n >= 0 && n <= 1),
        latencyMs: number(args, "latency-ms", (n) => n >= 0),
        tokenLifetime: number(args, "token-lifetime", (n) => n >= 0),
        propagationMs: number(args, "propagation-ms", (n) => n >= 0),
        missingService: missingService(number(args, "missing-service", (n) => n === 403 || n === 404)),
        quotaPerMinute: number(args, "quota-per-minute", (n) => Number.isInteger(n) && n >= 1),
        allowConditions: args["allow-conditions"] === true,
        mintKey: single(args, "mint-key"),
        mintEmail: single(args, "mint-email"),
    };
    if (options.mintEmail && !options.mintKey) throw new UsageError("--mint-email needs --mint-key");
    const cert = single(args, "tls-cert");
    const key = single(args, "tls-key");
    if (!cert !== !key) throw new UsageError("--tls-cert and --tls-key go together");
    if (cert && key) options.tls = { cert: readPem(cert, "--tls-cert"), key: readPem(key, "--tls-key") };
    return options;
}

/** The one-line reason the emulator could not start, with what to do about it where there is something. */
function startFailure(e: unknown, options: EmulatorOptions): string {
    const err = e as NodeJS.ErrnoException;
    const where = `${options.host ?? "127.0.0.1"}:${options.port ?? 0}`;
    if (err.code === "EADDRINUSE") {
        return `port ${options.port ?? 0} is already in use (${where}): pick another with --port N, or use --port 0 ` +
            "to let the emulator pick a free one (it prints its URL on stdout line 1)";
    }
    if (err.code === "EACCES") return `not allowed to listen on ${where}: pick a port above 1023 with --port N, or --port 0`;
    if (err.code === "EADDRNOTAVAIL") return `cannot listen on ${where}: ${options.host} is not an address of this machine`;
    return e instanceof Error ? e.message : String(e);
}

/**
 * Stops the emulator when the process that started it exits: a killed `npm run emulator` (even with SIGKILL,
 * which it cannot forward) or test harness must not leave it running. An orphan is re-parented, so its ppid
 * changes. Polled, and unref'd so the timer never keeps the process alive by itself.
 */
function exitWithParent(stop: (why: string) => void): void {
    const parent = process.ppid;
    setInterval(() => {
        if (process.ppid !== parent) stop(`the parent process (${parent}) exited`);
    }, 1000).unref();
}

async function main(): Promise<void> {
    // Returning with process.exitCode (not process.exit) lets what was written reach a pipe in full.
    let options: EmulatorOptions;
    try {
        options = parseArgs(process.argv.slice(2));
    } catch (e) {
        if (e instanceof HelpRequested) {
            process.stdout.write(helpText());
            process.exitCode = 0;
            return;
        }
        if (!(e instanceof UsageError)) throw e;
        process.stderr.write(`cloud-emulator: ${e.message}\ncloud-emulator: run 'cloud-emulator --help' for the flags\n`);
        process.exitCode = 2;
        return;
    }
    let emulator: Emulator;
    try {
        emulator = await startEmulator(options);
    } catch (e) {
        process.stderr.write(`cloud-emulator: ${startFailure(e, options)}\n`);
        process.exitCode = 1;
        return;
    }
    process.stdout.write(`${emulator.url}\n`);
    process.stderr.write(`cloud-emulator: listening at ${emulator.url} (token endpoint ${emulator.tokenUrl})\n`);
    const stop = (why: string): void => {
        process.stderr.write(`cloud-emulator: stopping: ${why}\n`);
        emulator.close().then(() => process.exit(0), () => process.exit(0));
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
    exitWithParent(stop);
}

main().catch((e: unknown) => {
    process.stderr.write(`cloud-emulator: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
});
