// The command the engine runs, read off the `pulumi` process that started this plugin (the engine runs inside the
// CLI, and starts its plugins as its children).
//
// Why: a ReadRequest carries no preview flag. The Reads of `pulumi preview --refresh`, `pulumi refresh
// --preview-only` and `pulumi import --preview-only` look exactly like those of a refresh or import the engine
// saves, and the crash journal must not take what a preview read for a record (journal/journal.ts).
//
// Only what is certain is said: a parent that is not the CLI (a test harness, PULUMI_DEBUG_PROVIDERS), a platform
// whose command lines this cannot read (Windows), or a command line it does not know leaves the run unknown, and
// the journal then goes by what the requests themselves show.

import { execFileSync } from "child_process";
import * as fs from "fs";
import type { RunCommand } from "../journal/journal";

/** The CLI's commands whose Reads (and writes) are saved unless `--preview-only` is given. */
const RECORDING = new Set(["up", "update", "refresh", "destroy", "down", "import"]);
/** The CLI's commands that only preview. */
const PREVIEWING = new Set(["preview", "pre"]);

/** What `argv` (a process's whole command line) says of the run, if it is the Pulumi CLI's. */
export function runCommandOf(argv: readonly string[]): RunCommand {
    const cli = argv.findIndex((a) => /^pulumi(\.exe)?$/i.test(a.split(/[\\/]/).pop() ?? ""));
    if (cli < 0) return {};
    const args = argv.slice(cli + 1);
    // The first word naming a command is the command: global flags (`--cwd DIR`, `--color never`) come before it.
    const command = args.find((a) => RECORDING.has(a) || PREVIEWING.has(a));
    if (command === undefined) return {};
    const rest = args.slice(args.indexOf(command) + 1);
    const flag = (...names: string[]) => rest.some((a) => names.some((n) => a === n || a.startsWith(`${n}=`)));
    // Each value of a flag that takes one, given as `--flag value` or `--flag=value`.
    const values = (...names: string[]) => rest.flatMap((a, i) => names.flatMap((n) =>
        a === n && i + 1 < rest.length ? [rest[i + 1]] : a.startsWith(`${n}=`) ? [a.slice(n.length + 1)] : []));
    const targets = values("--target", "-t");
    const excludes = values("--exclude");
    // `pulumi import` sends the resources it imports, none of the others the stack holds.
    const partial = targets.length > 0 || excludes.length > 0 || command === "import";
    const refresh = command === "refresh" || flag("--refresh", "-r");
    const preview = PREVIEWING.has(command) || flag("--preview-only");
    return { preview, previewsFirst: !preview && RECORDING.has(command) && !flag("--skip-preview", "-f"), partial, refresh,
        ...(targets.length ? { targets } : {}), ...(excludes.length ? { excludes } : {}) };
}

/** The command line of process `pid`, where this platform lets a process read it; undefined elsewhere. */
export function commandLineOf(pid: number): string[] | undefined {
    try {
        if (process.platform === "linux") return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
        // ps joins the arguments with spaces: enough to tell words the CLI takes, none of which holds a space.
        if (process.platform === "darwin") return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 }).trim().split(/\s+/);
    } catch {
        // gone, or not ours to read: unknown
    }
    return undefined;
}
