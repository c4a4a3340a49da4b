// The CLI's flags: one table that both the parser and `--help` are made from. No side effects: main.ts runs
// the CLI, and tests import the table and the parser.

import * as fs from "fs";
import minimist from "minimist";
import { DEFAULT_MINT_EMAIL } from "./tokens";
import { DEFAULTS, type EmulatorOptions } from "./types";

/** What the flags parse into: the emulator's options, and the values parseArgs combines or acts on itself. */
interface ParsedFlags extends EmulatorOptions {
    help?: boolean;
    tlsCert?: string;
    tlsKey?: string;
}

/** One flag: the parser's configuration and the help text both come from this table. */
export interface Flag {
    /** Given as `--name`. */
    name: string;
    /** A one-letter alias, given as `-x`. */
    short?: string;
    /** Where the value goes. */
    key: keyof ParsedFlags;
    /** The value's placeholder; none for a switch (true when given, else false). */
    arg?: string;
    /** Given more than once, its values make a list; a flag that is not repeatable may be given once. */
    repeatable?: boolean;
    /** The value is a number, valid when this holds. */
    valid?: (n: number) => boolean;
    help: string;
    default: string;
}

export const FLAGS: readonly Flag[] = [
    {
        name: "port", key: "port", arg: "N", valid: (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
        help: "TCP port to listen on; 0 lets the emulator pick a free one (stdout line 1 tells which)", default: String(DEFAULTS.port),
    },
    { name: "host", key: "host", arg: "ADDR", help: "interface to bind", default: DEFAULTS.host },
    {
        name: "access-token", key: "accessTokens", arg: "TOKEN", repeatable: true,
        help: "a static bearer token accepted with every permission", default: "none",
    },
    {
        name: "denied-token", key: "deniedTokens", arg: "TOKEN", repeatable: true,
        help: "a static bearer token that authenticates but holds no permission", default: "none",
    },
    {
        name: "state", key: "state", arg: "FILE", help: "load state from FILE if it exists and rewrite it after every change",
        default: "state kept in memory only",
    },
    {
        name: "fault-rate", key: "faultRate", arg: "R", valid: (n) => n >= 0 && n <= 1,
        help: "fraction 0..1 of /v1/services requests answered with a 429, a 503 or a reset connection", default: String(DEFAULTS.faultRate),
    },
    {
        name: "latency-ms", key: "latencyMs", arg: "N", valid: (n) => n >= 0,
        help: "delay each /v1/services request by a random 0..N ms", default: String(DEFAULTS.latencyMs),
    },
    {
        name: "token-lifetime", key: "tokenLifetime", arg: "S", valid: (n) => n >= 0,
        help: "lifetime in seconds of the access tokens the emulator issues", default: String(DEFAULTS.tokenLifetime),
    },
    {
        name: "propagation-ms", key: "propagationMs", arg: "N", valid: (n) => n >= 0,
        help: "for N ms after a write, getIamPolicy still answers the previous policy (IAM is eventually consistent)",
        default: String(DEFAULTS.propagationMs),
    },
    {
        name: "missing-service", key: "missingService", arg: "403|404", valid: (n) => n === 403 || n === 404,
        help: "status of a request on a service that does not exist (Google answers 403)", default: String(DEFAULTS.missingService),
    },
    {
        name: "quota-per-minute", key: "quotaPerMinute", arg: "N", valid: (n) => Number.isInteger(n) && n >= 1,
        help: "answer at most N Service Management calls per consumer project (X-Goog-User-Project, else one shared bucket) " +
            "in any rolling minute, refusing the rest with Google's 429 RESOURCE_EXHAUSTED; Google's quota is 120",
        default: "no quota",
    },
    {
        name: "allow-conditions", key: "allowConditions",
        help: "accept role bindings with a condition in setIamPolicy; Google does not list Service Management among the " +
            "resources that accept them, so they are refused with 400 INVALID_ARGUMENT",
        default: "off, conditions refused",
    },
    {
        name: "mint-key", key: "mintKey", arg: "FILE",
        help: "write a service-account key (mode 0600) that the token endpoint accepts to FILE", default: "none",
    },
    { name: "mint-email", key: "mintEmail", arg: "EMAIL", help: "client_email of the key written by --mint-key", default: DEFAULT_MINT_EMAIL },
    {
        name: "tls-cert", key: "tlsCert", arg: "FILE", help: "serve HTTPS with this PEM certificate chain (needs --tls-key)",
        default: "plain HTTP",
    },
    { name: "tls-key", key: "tlsKey", arg: "FILE", help: "the PEM private key of --tls-cert", default: "plain HTTP" },
    { name: "help", short: "h", key: "help", help: "print this help and exit", default: "" },
];

export function helpText(): string {
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
        const notes = [f.short ? `also -${f.short}` : "", f.repeatable ? "repeatable" : "", f.default ? `default: ${f.default}` : ""]
            .filter(Boolean).join("; ");
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

export class UsageError extends Error {}
/** Thrown by the parser for --help: not an error, but nothing is started either. */
export class HelpRequested extends Error {}

/** A repeatable flag comes back from minimist as a string or an array; a value-less flag as "". */
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

/** A flag's value as the table says to read it. */
function value(args: minimist.ParsedArgs, f: Flag): string | string[] | number | boolean | undefined {
    if (!f.arg) return args[f.name] === true;
    if (f.repeatable) return list(args, f.name);
    if (f.valid) return number(args, f.name, f.valid);
    return single(args, f.name);
}

/** `--name` of the flag whose value goes to `key`. */
function flagOf(key: keyof ParsedFlags): string {
    const f = FLAGS.find((g) => g.key === key);
    if (!f) throw new Error(`no flag sets ${key}`);
    return `--${f.name}`;
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

/** The emulator's options from the command line; throws HelpRequested for --help, UsageError on a bad one. */
export function parseArgs(argv: string[]): EmulatorOptions {
    const unknown: string[] = [];
    const args = minimist(joinNegativeValues(argv), {
        string: FLAGS.filter((f) => f.arg).map((f) => f.name),
        boolean: FLAGS.filter((f) => !f.arg).map((f) => f.name),
        alias: Object.fromEntries(FLAGS.filter((f) => f.short).map((f) => [f.short!, f.name])),
        unknown: (arg) => {
            unknown.push(arg);
            return false;
        },
    });
    const parsed: ParsedFlags = {};
    // Help first: asked for, it wins over every other flag, valid or not.
    const help = FLAGS.find((f) => f.key === "help")!;
    if (value(args, help)) throw new HelpRequested();
    if (unknown.length) throw new UsageError(`unknown argument ${unknown[0]}`);
    for (const f of FLAGS) Object.assign(parsed, { [f.key]: value(args, f) });
    const { help: _help, tlsCert, tlsKey, ...options } = parsed;
    if (options.mintEmail && !options.mintKey) throw new UsageError(`${flagOf("mintEmail")} needs ${flagOf("mintKey")}`);
    if (!tlsCert !== !tlsKey) throw new UsageError(`${flagOf("tlsCert")} and ${flagOf("tlsKey")} go together`);
    if (tlsCert && tlsKey) options.tls = { cert: readPem(tlsCert, flagOf("tlsCert")), key: readPem(tlsKey, flagOf("tlsKey")) };
    return options;
}
