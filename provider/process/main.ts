// The plugin executable: `pulumi-resource-cloud [--logtostderr] [-v=N] [--tracing X] [ENGINE_ADDRESS]` (anything
// else: the usage on stderr, exit 2).
// Serves the provider on 127.0.0.1 and prints only the port, on the first line of stdout, as the engine
// expects. Works without an engine address (tests, PULUMI_DEBUG_PROVIDERS attach). `start()` is called by the
// launchers: bin/pulumi-resource-cloud (this tree) and lib/boot.js (the packaged plugin, see boot.ts).

import minimist from "minimist";
import * as net from "net";
import { setFlagsFromString } from "v8";
import { Logger } from "../protocol/log";
import { serve } from "../protocol/server";
import { commandLineOf, runCommandOf } from "./command";

/**
 * V8 sizes the heap for the machine's memory, so a long-lived plugin's RSS grows by half under sustained
 * load. These heuristics are read as the heap grows, so they take effect when set at run time; the same flags on
 * the command line would cost ~20 ms of start-up (Node drops its code cache when flags change). Keep the young
 * generation at its initial size and grow the old one in small steps. Not --optimize-for-size: profiled under
 * the bench's invoke load it doubled the plugin's CPU per call (1.6 ms against 0.8 ms on a loaded 2-core
 * machine; a fifth of its busy time was the garbage collector) to save ~5 MB. Set once the port is printed: a V8 code cache is
 * only accepted under the flags it was made with, and boot.ts makes one then.
 */
function tuneHeap(): void {
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--heap-growing-percent=5");
}

/** What the executable takes: the engine's arguments (Pulumi starts a provider plugin so), said for people. */
export const USAGE = [
    "usage: pulumi-resource-cloud [--logtostderr] [-v=N] [--tracing ENDPOINT] [ENGINE_ADDRESS]",
    "",
    "The Pulumi provider plugin of the package `cloud`. The Pulumi engine starts it by itself: it serves the",
    "provider on 127.0.0.1 and prints the port on the first line of stdout.",
    "",
    "  ENGINE_ADDRESS    the engine's gRPC address, HOST:PORT (the plugin logs there, and exits when it is gone)",
    "  --logtostderr     log to stderr too",
    "  -v=N              log verbosity (0: errors and warnings only)",
    "  --tracing ENDPOINT  the engine's tracing endpoint (accepted, not used)",
    "  --help            print this message",
    "",
    "pulumi-resource-cloud migrate-from-gcp --help: moves a stack's Pulumi GCP Endpoints IAM resources to this package.",
    "pulumi-resource-cloud migrate-from-terraform --help: moves a Terraform state's Endpoints IAM resources to this package.",
].join("\n");

/** The engine's arguments, as main() uses them. */
export interface PluginArgs {
    logtostderr: boolean;
    verbosity: number;
    engineAddress?: string;
}

/** A `HOST:PORT` address (`[v6]:PORT` too), the port 1 to 65535. */
function isAddress(text: string): boolean {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/]+):(\d{1,5})$/.exec(text);
    return m !== null && Number(m[2]) > 0 && Number(m[2]) < 65536;
}

/** The engine's arguments, `"help"` for --help, or what is wrong with them (for a person, before the usage). */
export function parseArgs(argv: readonly string[]): PluginArgs | "help" | string {
    const options = { boolean: ["logtostderr", "help", "h"], string: ["v", "tracing"] };
    const args = minimist([...argv], options);
    if (args.help === true || args.h === true) return "help";
    const unknown = Object.keys(args).filter((k) => k !== "_" && !options.boolean.includes(k) && !options.string.includes(k));
    if (unknown.length) return `unknown option ${unknown.map((k) => (k.length === 1 ? `-${k}` : `--${k}`)).join(", ")}`;
    const v = args.v ?? "0";
    if (!/^\d+$/.test(v)) return `-v takes a number (the log verbosity), not ${JSON.stringify(v)}`;
    const positional = args._.map(String);
    if (positional.length > 1) return `one engine address is taken, not ${positional.length} (${positional.map((a) => JSON.stringify(a)).join(", ")})`;
    const [engineAddress] = positional;
    if (engineAddress !== undefined && !isAddress(engineAddress)) {
        return `${JSON.stringify(engineAddress)} is not an engine address (HOST:PORT), nor an option this plugin knows`;
    }
    return { logtostderr: args.logtostderr === true, verbosity: Number(v), ...(engineAddress !== undefined ? { engineAddress } : {}) };
}

/** How often the plugin looks for its engine, and how many missed looks in a row mean it is gone. */
const ENGINE_CHECK_MS = 2000;
const ENGINE_MISSES = 2;

/** Whether something accepts connections at `address` (`host:port`, `[v6]:port`) within a second. */
function listening(address: string): Promise<boolean> {
    const at = address.lastIndexOf(":");
    const host = address.slice(0, at).replace(/^\[|\]$/g, "");
    const port = Number(address.slice(at + 1));
    return new Promise((resolve) => {
        const socket = net.connect({ host, port });
        const done = (alive: boolean) => {
            socket.destroy();
            resolve(alive);
        };
        socket.setTimeout(1000, () => done(true)); // slow is not gone: a busy engine may be slow to accept
        socket.once("connect", () => done(true));
        socket.once("error", () => done(false));
    });
}

/**
 * Calls `gone` once the engine that started the plugin has gone away without stopping it (its process killed):
 * the plugin was handed to another parent, or the engine's address refuses connections twice in a row. A
 * plugin must not outlive its deployment, holding writes nobody will hear of.
 */
function watchEngine(address: string | undefined, parent: number, gone: (why: string) => void): void {
    let misses = 0;
    let probing = false;
    const timer = setInterval(() => {
        if (process.ppid !== parent) {
            clearInterval(timer);
            return gone(`the engine's process (${parent}) has exited`);
        }
        if (!address || probing) return;
        probing = true;
        void listening(address).then((alive) => {
            probing = false;
            misses = alive ? 0 : misses + 1;
            if (misses >= ENGINE_MISSES) {
                clearInterval(timer);
                gone(`the engine at ${address} no longer accepts connections`);
            }
        });
    }, ENGINE_CHECK_MS);
    timer.unref();
}

/**
 * Serves the provider and prints the port; resolves once the port line is written. `startup` notes how the
 * launcher started it (e.g. whether a code cache was used), logged at debug level.
 */
async function main(args: PluginArgs, startup: string[]): Promise<void> {
    const log = new Logger(args.verbosity, args.logtostderr);
    const engineAddress = args.engineAddress;
    log.attach(engineAddress);
    for (const note of startup) log.debug(note);
    // Signals are handled before the port is printed: the engine may stop a plugin as soon as it has the port.
    let shutdown: (() => Promise<void>) | undefined;
    let stopping = false;
    const parent = process.ppid;
    let engineGone = false;
    // Whether the engine is still there at shutdown: then it has every answer this plugin sent (journal/journal.ts).
    const engineAlive = async () => !engineGone && process.ppid === parent && (!engineAddress || await listening(engineAddress));
    const stop = () => {
        if (stopping) return;
        stopping = true;
        void (shutdown?.() ?? Promise.resolve()).then(() => process.exit(0));
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    // On Windows the engine stops a plugin with a CTRL_BREAK_EVENT to its process group (Pulumi's
    // cmdutil.shutdownProcessGroup), which Node delivers as SIGBREAK; a console's Ctrl-C arrives as SIGINT.
    if (process.platform === "win32") process.on("SIGBREAK", stop);
    // The CLI's command line, read when the journal first needs it: the CLI lives as long as the run.
    const served = await serve(log, engineAddress, engineAlive, () => runCommandOf(commandLineOf(parent) ?? []));
    shutdown = served.shutdown;
    process.stdout.write(`${served.port}\n`);
    // Without an engine address (tests, a debugger attaching) only the parent process is watched.
    watchEngine(engineAddress, parent, (why) => {
        engineGone = true;
        process.stderr.write(`pulumi-resource-cloud: ${why}: finishing the writes already sent, then exiting\n`);
        stop();
    });
    // A bug leaves the plugin in a state nobody knows: say so with its context, and exit non-zero so the engine
    // reports a failed plugin rather than trusting answers from it.
    const crash = (what: string) => (e: unknown) => {
        log.error(`${what}: ${e instanceof Error ? e.stack ?? e.message : String(e)}; the plugin stops`);
        process.stderr.write(`pulumi-resource-cloud: ${what}: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
        setTimeout(() => process.exit(1), 200); // lets the engine's Log call go out
    };
    process.on("uncaughtException", crash("unexpected error"));
    process.on("unhandledRejection", crash("unexpected rejection"));
}

/** Runs the plugin; `startup` as for main(); `afterPort` runs once the port is printed, before tuneHeap(). */
export function start(startup: string[] = [], afterPort?: () => void): void {
    const subcommand = process.argv[2];
    if (subcommand === "migrate-from-gcp" || subcommand === "migrate-from-terraform") {
        // A subcommand for people (never what the engine passes): loaded only when asked for.
        void import("../migrate/cli").then((m) => (subcommand === "migrate-from-gcp" ? m.runMigrate : m.runMigrateFromTerraform)(process.argv.slice(3), process)).then((code) => {
            process.exitCode = code;
        });
        return;
    }
    const args = parseArgs(process.argv.slice(2));
    if (args === "help") {
        process.stdout.write(`${USAGE}\n`);
        return;
    }
    if (typeof args === "string") {
        // A person at a terminal, not the engine: say what is wrong and how the plugin is run; print no port.
        process.stderr.write(`pulumi-resource-cloud: ${args}\n\n${USAGE}\n`);
        process.exitCode = 2;
        return;
    }
    main(args, startup).then(() => {
        afterPort?.();
        tuneHeap();
    }).catch((e: unknown) => {
        process.stderr.write(`pulumi-resource-cloud: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exit(1);
    });
}
