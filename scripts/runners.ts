// How this (Linux x86-64) machine runs a platform's executable: natively, under qemu-user, or under Wine. Used
// by the build (to make each executable's code cache with that executable) and by the tests that start them.

import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { cacheDir, Platform, platformKey } from "./platforms";

export interface Runner {
    /** The command line that runs `exe` with `args`. */
    command(exe: string, args?: string[]): [string, string[]];
    /** Environment the runner needs (merged over the caller's). */
    env: Record<string, string>;
}

/** The aarch64 C library qemu-user loads an arm64 Linux binary's dynamic libraries from. */
const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";

interface SystemPackage { name: string; file: string; runner: string }

/** scripts/system-packages.tsv: the Debian packages a runner needs, each with a file it provides. */
function systemPackages(): SystemPackage[] {
    // Compiled to build/scripts/; the table stays beside the sources.
    const table = path.join(__dirname, "..", "..", "scripts", "system-packages.tsv");
    return fs.readFileSync(table, "utf8").split("\n")
        .filter((line) => line.trim() !== "" && !line.startsWith("#"))
        .map((line) => {
            const [name, file, runner] = line.split("\t");
            return { name, file, runner };
        });
}

/** Why `runner` cannot run here (the packages whose file is missing, with the command that installs them), or undefined. */
function missingPackages(runner: string): string | undefined {
    const absent = systemPackages().filter((p) => p.runner === runner && !fs.existsSync(p.file));
    if (absent.length === 0) return undefined;
    const names = absent.map((p) => p.name).join(" ");
    return `needs ${absent.map((p) => `${p.name} (${p.file})`).join(", ")}: apt-get install --no-install-recommends ${names}, or bash scripts/system-packages.sh`;
}

function onPath(name: string): string | undefined {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
        const file = path.join(dir, name);
        try {
            fs.accessSync(file, fs.constants.X_OK);
            return file;
        } catch {
            // not here
        }
    }
    return undefined;
}

function wineBinary(): string | undefined {
    // Debian's wine64 package puts its loader outside PATH.
    for (const candidate of [onPath("wine64"), "/usr/lib/wine/wine64", onPath("wine")]) {
        if (candidate && fs.existsSync(candidate)) return candidate;
    }
    return undefined;
}

/**
 * A Wine prefix of the project's own, set up once to report Windows 10 (Node refuses to start on the Windows 7
 * that a new prefix reports).
 */
function winePrefix(wine: string): string {
    const prefix = cacheDir("wine");
    const stamp = path.join(prefix, ".win10");
    if (!fs.existsSync(stamp)) {
        fs.mkdirSync(prefix, { recursive: true });
        execFileSync(wine, ["winecfg", "-v", "win10"], {
            env: { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all" }, stdio: "ignore", timeout: 300_000,
        });
        fs.writeFileSync(stamp, "");
    }
    return prefix;
}

/** This machine's runner for `p`, or why there is none (with what to install). */
export function runnerFor(p: Platform): Runner | { missing: string } {
    if (process.platform !== "linux" || process.arch !== "x64") {
        return p.runs === "native" ? { command: (exe, args = []) => [exe, args], env: {} } : { missing: `runs only on Linux x86-64` };
    }
    switch (p.runs) {
        case "native":
            return { command: (exe, args = []) => [exe, args], env: {} };
        case "qemu": {
            const missing = missingPackages("qemu");
            const qemu = onPath("qemu-aarch64") ?? onPath("qemu-aarch64-static");
            if (missing || !qemu) return { missing: missing ?? "needs qemu-aarch64 on PATH" };
            return { command: (exe, args = []) => [qemu, ["-L", ARM64_SYSROOT, exe, ...args]], env: {} };
        }
        case "wine": {
            const wine = wineBinary();
            if (!wine) return { missing: missingPackages("wine") ?? "needs wine64" };
            return { command: (exe, args = []) => [wine, [exe, ...args]], env: { WINEPREFIX: winePrefix(wine), WINEDEBUG: "-all" } };
        }
        case "no":
            return { missing: `${platformKey(p)} executables do not run here` };
    }
}
