// The plugin executable: `pulumi-resource-cloud [--logtostderr] [-v=N] [--tracing X] [ENGINE_ADDRESS]`.
// Serves the provider on 127.0.0.1 and prints only the port, on the first line of stdout, as the engine
// expects. Works without an engine address (tests, PULUMI_DEBUG_PROVIDERS attach). `start()` is called by the
// launchers: bin/pulumi-resource-cloud (this tree) and lib/boot.js (the packaged plugin, see boot.ts).

import minimist from "minimist";
import * as net from "net";
import { setFlagsFromString } from "v8";
import { Logger } from "./log";
import { serve } from "./server";

/**
 * V8 sizes the heap for the machine's memory, so a long-lived plugin's RSS grows by half under sustained
 * load. These heuristics are read as the heap grows and as code is optimized, so they take effect when set at
 * run time; the same flags on the command line would cost ~20 ms of start-up (Node drops its code cache when
 * flags change). Keep the young generation at its initial size, grow the old one in small steps, and let V8
 * favour size over speed (Node 22's V8: ~10 MB less after thousands of lookups, for ~10% of the plugin's own
 * CPU per call, which is small beside the API's latency). Set once the port is printed: a V8 code cache is only
 * accepted under the flags it was made with, and boot.ts makes one then.
 */
function tuneHeap(): void {
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--heap-growing-percent=5");
    setFlagsFromString("--optimize-for-size");
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
function watchEngine(address: string | undefined, gone: (why: string) => void): void {
    const parent = process.ppid;
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
async function main(startup: string[]): Promise<void> {
    const args = minimist(process.argv.slice(2), {
        boolean: ["logtostderr"],
        string: ["v", "tracing"],
    });
    const verbosity = Number(args.v ?? 0) || 0;
    const log = new Logger(verbosity, args.logtostderr === true);
    const engineAddress = args._.map(String).find((a) => a.length > 0);
    log.attach(engineAddress);
    for (const note of startup) log.debug(note);
    // Signals are handled before the port is printed: the engine may stop a plugin as soon as it has the port.
    let shutdown: (() => Promise<void>) | undefined;
    let stopping = false;
    const stop = () => {
        if (stopping) return;
        stopping = true;
        void (shutdown?.() ?? Promise.resolve()).then(() => process.exit(0));
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    const served = await serve(log, engineAddress);
    shutdown = served.shutdown;
    process.stdout.write(`${served.port}\n`);
    // Without an engine address (tests, a debugger attaching) only the parent process is watched.
    watchEngine(engineAddress, (why) => {
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
    main(startup).then(() => {
        afterPort?.();
        tuneHeap();
    }).catch((e: unknown) => {
        process.stderr.write(`pulumi-resource-cloud: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exit(1);
    });
}
