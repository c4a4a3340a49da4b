// One user's machine across runs: an emulator, a PULUMI_HOME every run's plugins share (the deployment's files),
// and a stand-in engine every run's plugins log to; and the crash that leaves a grant written but never answered.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { Engine, startEngine, until } from "./engine";
import { Plugin, PLUGIN, pulumiHome, Stack, startStack } from "./plugin";
import { tempDir } from "./temp";

/** What the plugin tells the user of its crash journal (provider/deployment/deployment.ts), as the tests look for it. */
export const JOURNAL_SAYS = {
    /** A grant a write added for a resource that no run has recorded since (said at a run's end, every run until settled). */
    unanswered: "by a run that stopped before Pulumi recorded it",
    /** A grant a write removed while Pulumi's state still holds it (said at a run's end, every run until settled). */
    removed: "Pulumi's state still holds it",
    /** A Diff asks for an update to put IAM as the program says (the journal disagrees with the engine's state). */
    putBack: "this update puts it back",
    removesUnrecorded: "so this update removes it",
    /** The folder cannot be used. */
    unusable: "cannot keep its crash journal",
};

/**
 * Runs `body` on one machine: the stack's first plugin is the first run's; `nextDeployment` starts the next run's
 * (a new engine run).
 */
export async function machine(token: string, services: string[], body: (stack: Stack, engine: Engine, home: string) => Promise<void>,
    home = pulumiHome()): Promise<void> {
    const engine = await startEngine();
    try {
        const stack = await startStack(token, services, { engine, env: { PULUMI_HOME: home } });
        try {
            await body(stack, engine, home);
        } finally {
            await stack.stop();
        }
    } finally {
        engine.close();
    }
}

/**
 * The write of `create` lands on `parent` (the policy's grants grow, or shrink with `removes`), but its answer is
 * held: `p` dies (kill -9) before the engine hears of it.
 */
export async function dieAfterWrite(stack: Stack, parent: string, p: Plugin, create: (p: Plugin) => Promise<unknown>, removes = false): Promise<void> {
    const members = () => (stack.emu.getPolicy(parent).bindings ?? []).flatMap((b) => b.members).length;
    const before = members();
    stack.emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 1, delayMs: 5000 } });
    create(p).catch(() => undefined);
    expect(await until(() => (removes ? members() < before : members() > before)), "the write landed").to.equal(true);
    p.child.kill("SIGKILL");
    await p.exited;
}

/** Skips the test, saying why, where this machine gives no mount namespace (a read-only mount needs one). */
export function skipWithoutMountNamespace(ctx: Mocha.Context): void {
    try {
        execFileSync("unshare", ["--mount", "true"], { stdio: "ignore" });
    } catch {
        console.log("      skipped: unshare --mount is not allowed here (a read-only mount needs a mount namespace)");
        ctx.skip();
    }
}

/** `command` run in a mount namespace of its own in which `folder` is mounted read-only. */
export function withReadOnly(folder: string, command: string[]): string[] {
    const script = 'f="$1"; shift; mount --bind "$f" "$f" && mount -o remount,bind,ro "$f" && exec "$@"';
    return ["unshare", "--mount", "sh", "-c", script, "sh", folder, ...command];
}

/**
 * The command prefix that starts the plugin as the child of a process whose command line is the CLI's
 * (`pulumi ARGS…`): a shell script named `pulumi` that runs the plugin and hands it the signals it gets, as the
 * engine's process would. The plugin reads its parent's command line (provider/process/command.ts).
 */
export function underCli(args: string[]): string[] {
    const dir = tempDir("cli");
    const script = path.join(dir, "pulumi");
    fs.writeFileSync(script, [
        "#!/bin/sh",
        "# Stands in for the Pulumi CLI's command line: everything after `--` is the plugin's.",
        'while [ "$1" != "--" ]; do shift; done; shift',
        '"$@" & child=$!',
        "trap 'kill -INT $child' INT TERM",
        'wait $child; wait $child',
        "",
    ].join("\n"), { mode: 0o755 });
    return [script, ...args, "--", PLUGIN];
}
