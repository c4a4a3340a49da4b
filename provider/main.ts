// The plugin executable: `pulumi-resource-cloud [--logtostderr] [-v=N] [--tracing X] [ENGINE_ADDRESS]`.
// Serves the provider on 127.0.0.1 and prints only the port, on the first line of stdout, as the engine
// expects. Works without an engine address (tests, PULUMI_DEBUG_PROVIDERS attach). `start()` is called by the
// launchers: bin/pulumi-resource-cloud (this tree) and lib/boot.js (the packaged plugin, see boot.ts).

import minimist from "minimist";
import { setFlagsFromString } from "v8";
import { Logger } from "./log";
import { serve } from "./server";

/**
 * V8 sizes the heap for the machine's memory, so a long-lived plugin's RSS grows by half under sustained
 * load. These two heuristics are read as the heap grows, so they take effect when set at run time; the same
 * limits as command-line flags would cost ~20 ms of start-up (Node drops its code cache when flags change).
 * Keep the young generation at its initial size and grow the old one in small steps. Set once the port is
 * printed: a V8 code cache is only accepted under the flags it was made with, and boot.ts makes one then.
 */
function tuneHeap(): void {
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--heap-growing-percent=5");
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
    const served = await serve(log);
    shutdown = served.shutdown;
    process.stdout.write(`${served.port}\n`);
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
