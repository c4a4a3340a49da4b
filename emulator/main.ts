// CLI: `cloud-emulator [flags]` (the flags: cli.ts). Line 1 of stdout is the API base URL and nothing comes
// before it, so a parent process can read it; every other message goes to stderr, except `--help`, which is
// asked-for output. Exit status: 0 after --help or a signal, 1 when the emulator cannot start, 2 on a usage error.

import { HelpRequested, helpText, parseArgs, UsageError } from "./cli";
import { startEmulator } from "./index";
import type { Emulator, EmulatorOptions } from "./types";

/** A listen error: Node names the address it could not listen on, and the port unless it was 0. */
type ListenError = NodeJS.ErrnoException & { address?: string; port?: number };

/** The one-line reason the emulator could not start, with what to do about it where there is something. */
function startFailure(e: unknown): string {
    const err = e as ListenError;
    if (err.syscall !== "listen" || err.address === undefined) return e instanceof Error ? e.message : String(e);
    const port = err.port ?? 0;
    const where = `${err.address}:${port}`;
    if (err.code === "EADDRINUSE") {
        return `port ${port} is already in use (${where}): pick another with --port N, or use --port 0 ` +
            "to let the emulator pick a free one (it prints its URL on stdout line 1)";
    }
    if (err.code === "EACCES") return `not allowed to listen on ${where}: pick a port above 1023 with --port N, or --port 0`;
    if (err.code === "EADDRNOTAVAIL") return `cannot listen on ${where}: ${err.address} is not an address of this machine`;
    return e instanceof Error ? e.message : String(e);
}

/**
 * Stops the emulator when the process that started it exits: a killed `npm run emulator` (even with SIGKILL,
 * which it cannot forward) or test harness must not leave it running. An orphan is re-parented, so its ppid
 * changes. Polled, and unref'd so the timer never keeps the process alive by itself; returns the timer.
 */
function exitWithParent(stop: (why: string) => void): NodeJS.Timeout {
    const parent = process.ppid;
    return setInterval(() => {
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
        process.stderr.write(`cloud-emulator: ${startFailure(e)}\n`);
        process.exitCode = 1;
        return;
    }
    process.stdout.write(`${emulator.url}\n`);
    process.stderr.write(`cloud-emulator: listening at ${emulator.url} (token endpoint ${emulator.tokenUrl})\n`);
    let parentWatch: NodeJS.Timeout | undefined;
    let stopping = false;
    // Once: a signal and the parent's exit (or two signals) may both ask.
    const stop = (why: string): void => {
        if (stopping) return;
        stopping = true;
        clearInterval(parentWatch);
        process.stderr.write(`cloud-emulator: stopping: ${why}\n`);
        emulator.close().then(() => process.exit(0), () => process.exit(0));
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
    parentWatch = exitWithParent(stop);
}

main().catch((e: unknown) => {
    process.stderr.write(`cloud-emulator: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
});
