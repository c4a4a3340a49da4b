// Entry point for in-process use: `const emu = await startEmulator({ accessTokens: ["t"] })`.

import { ChildProcess, spawn } from "child_process";
import * as path from "path";
import * as readline from "readline";
import { writeFileAtomic } from "./state";
import { EmulatorServer } from "./server";
import type { Emulator, EmulatorOptions } from "./types";

export type {
    AuditConfig, AuditLogConfig, AuthorizedUserFile, Behavior, Binding, Condition, Emulator, EmulatorOptions, FaultKind,
    FaultSettings, IssueTokenOptions, ManagedService, Policy, RequestRecord, ServiceAccountKey,
} from "./types";

/** Starts an emulator listening on `options.host`:`options.port`; resolves once it accepts connections. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
    const emulator = new EmulatorServer(options);
    await emulator.listen();
    if (options.mintKey) {
        try {
            const key = emulator.mintServiceAccountKey(options.mintEmail ? { clientEmail: options.mintEmail } : {});
            writeFileAtomic(options.mintKey, `${JSON.stringify(key, null, 2)}\n`);
        } catch (e) {
            await emulator.close();
            throw e;
        }
    }
    return emulator;
}

/**
 * Runs the emulator's CLI (`bin/cloud-emulator ARGS`) as a process of its own, so it does not share an event
 * loop with the caller; resolves with the base URL it prints on stdout line 1.
 */
export function spawnEmulator(args: string[], stderr: "inherit" | "ignore" = "ignore"): Promise<{ url: string; child: ChildProcess }> {
    const bin = path.join(__dirname, "..", "..", "bin", "cloud-emulator");
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", stderr] });
    return new Promise((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once("line", (url) => resolve({ url, child }));
        child.once("exit", (code) => reject(new Error(`the emulator exited with ${code} before printing its URL`)));
    });
}
