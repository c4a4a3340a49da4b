// CLI: `cloud-emulator [flags]`. Line 1 of stdout is the API base URL and nothing comes before it, so a parent
// process can read it; every other message goes to stderr.

import * as fs from "fs";
import minimist from "minimist";
import { startEmulator } from "./index";
import type { EmulatorOptions } from "./types";

const USAGE = `usage: cloud-emulator [--port N] [--host 127.0.0.1] [--access-token TOKEN]... [--denied-token TOKEN]...
                      [--state FILE] [--fault-rate R] [--latency-ms N] [--token-lifetime S]
                      [--propagation-ms N] [--missing-service 403|404] [--mint-key FILE [--mint-email EMAIL]]
                      [--tls-cert FILE --tls-key FILE]`;

const STRINGS = ["port", "host", "access-token", "denied-token", "state", "fault-rate", "latency-ms", "token-lifetime", "propagation-ms", "missing-service", "mint-key", "mint-email", "tls-cert", "tls-key"];

class UsageError extends Error {}

/** Repeatable flags come back from minimist as a string or an array; a value-less flag as "". */
function list(v: unknown): string[] {
    const values = (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
    if (values.some((s) => s === "")) throw new UsageError("a token flag needs a value");
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

export function parseArgs(argv: string[]): EmulatorOptions {
    const unknown: string[] = [];
    const args = minimist(argv, {
        string: STRINGS,
        boolean: ["help"],
        unknown: (arg) => {
            unknown.push(arg);
            return false;
        },
    });
    if (unknown.length) throw new UsageError(`unknown argument ${unknown[0]}`);
    if (args.help) throw new UsageError("");
    const options: EmulatorOptions = {
        port: number(args, "port", (n) => Number.isInteger(n) && n >= 0 && n <= 65535),
        host: single(args, "host"),
        accessTokens: list(args["access-token"]),
        deniedTokens: list(args["denied-token"]),
        state: single(args, "state"),
        faultRate: number(args, "fault-rate", (n) => n >= 0 && n <= 1),
        latencyMs: number(args, "latency-ms", (n) => n >= 0),
        tokenLifetime: number(args, "token-lifetime", (n) => n >= 0),
        propagationMs: number(args, "propagation-ms", (n) => n >= 0),
        missingService: missingService(number(args, "missing-service", (n) => n === 403 || n === 404)),
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

async function main(): Promise<void> {
    let options: EmulatorOptions;
    try {
        options = parseArgs(process.argv.slice(2));
    } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        if (e.message) process.stderr.write(`cloud-emulator: ${e.message}\n`);
        process.stderr.write(`${USAGE}\n`);
        process.exit(e.message ? 2 : 0);
    }
    const emulator = await startEmulator(options);
    process.stdout.write(`${emulator.url}\n`);
    process.stderr.write(`cloud-emulator: listening at ${emulator.url} (token endpoint ${emulator.tokenUrl})\n`);
    const stop = (): void => {
        emulator.close().then(() => process.exit(0), () => process.exit(0));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
}

main().catch((e: unknown) => {
    process.stderr.write(`cloud-emulator: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
});
