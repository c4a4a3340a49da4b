// `npm run dist`: the release's plugin tarballs, one per platform (scripts/platforms.ts), and SHA256SUMS:
//
//   dist/pulumi-resource-cloud-v<version>-<os>-<arch>.tar.gz     what the engine downloads and unpacks
//   dist/SHA256SUMS                                              `sha256sum -c SHA256SUMS` checks them
//
//   npm run dist [-- --platform linux-amd64 ...]   only those platforms (no SHA256SUMS)
//
// Each platform's tarball holds one executable, Node's license and the bundled code's notices. The executable is
// the pinned Node (verified first) with the plugin injected as a single executable application: lib/boot.js as
// its main script, and main.js, its V8 code cache, google-auth-library's bundle and schema.json as assets
// (provider/process/boot.ts reads them). The code cache is made by the executable itself (natively, or under qemu-user or
// Wine: scripts/runners.ts), so it fits exactly; macOS executables cannot run here and have none (the first start
// writes one to the user's cache). macOS's are signed again, ad hoc, after injection (scripts/macho.ts).
//
//   npm run dist -- --platform node-folder      the unreleased folder packaging (NODE_FOLDER in platforms.ts)
//   npm run dist -- --no-code-cache ...         executables without a code cache, as macOS's (to measure it)
//   npm run dist -- --unpacked ...              each tarball's contents as a folder named like it, without the
//                                               .tar.gz (the tests run these: no gzip and gunzip of 128 MB)
//
// Reproducible: the same checkout and pins give the same bytes (fixed order, owners, modes and mtime in the
// tar; gzip without a name or time; V8's random seed fixed while it makes the code cache).
// Runs on Linux x86-64: the SEA blob is made by the pinned linux-x64 Node, and the other platforms' executables
// run here under emulation.

import { execFileSync, spawn } from "child_process";
import { createHash } from "crypto";
import * as esbuild from "esbuild";
import * as fs from "fs";
import minimist from "minimist";
import * as os from "os";
import * as path from "path";
import { inject } from "postject";
import { ASSETS, NODE_ENGINES, WRITE_CODE_CACHE_ENV } from "../provider/package/packaging";
import { LICENSE, PACKAGE_NAME, PACKAGE_VERSION } from "../provider/package/version";
import { adhocSign, checkNodeFoundationSignature, CPU_TYPE, MH_MAGIC_64 } from "./macho";
import { assetName, CHECKSUMS, executableName, NODE_FOLDER, NODE_VERSION, NodePin, Platform, platformKey, PLATFORMS, cacheDir, sourceDate, tarball, unpackedName } from "./platforms";
import { runnerFor } from "./runners";

const ROOT = path.join(__dirname, "..", "..");
const DIST = path.join(ROOT, "dist");
const CACHE = cacheDir("node");
/** Node's marker that an executable has a SEA blob; ":0" until one is injected. */
export const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/**
 * V8 orders a code cache's contents by hashes whose seed is random on each run, unless the random seed is fixed.
 * The build fixes it while the cache is made, so every build makes the same bytes; V8 leaves that flag out of
 * the flags a cache must match, so the executables (which run with no flags) accept it.
 */
const CACHE_SEED = "--random-seed=20250401";

function log(line: string): void {
    process.stderr.write(`dist: ${line}\n`);
}

function sha256(data: Buffer): string {
    return createHash("sha256").update(data).digest("hex");
}

interface Bundles {
    dir: string;
    main: string;
    boot: string;
    auth: string;
    notices: string;
}

/** The provider, its entry and google-auth-library, bundled by esbuild. */
function bundle(dir: string): Bundles {
    const common: esbuild.BuildOptions = {
        bundle: true, platform: "node", target: "node20", format: "cjs", legalComments: "external", logLevel: "warning",
        absWorkingDir: ROOT,
    };
    const main = path.join(dir, ASSETS.main);
    // boot.ts runs main.js through vm, which has no ES module loader: import() becomes require().
    esbuild.buildSync({ ...common, entryPoints: ["provider/process/main.ts"], outfile: main, external: ["google-auth-library"], supported: { "dynamic-import": false } });
    // boot.ts reads main.js as latin1, which is exact for ASCII and faster than UTF-8: esbuild escapes non-ASCII
    // characters except in regular expression literals, so check.
    const text = fs.readFileSync(main, "latin1");
    const bad = text.split("\n").findIndex((l) => /[^\x20-\x7e\t\r]/.test(l));
    if (bad >= 0) throw new Error(`main.js line ${bad + 1} has non-ASCII characters: write them as \\u escapes`);
    const boot = path.join(dir, "boot.js");
    esbuild.buildSync({ ...common, entryPoints: ["provider/process/boot.ts"], outfile: boot, define: { BUNDLE_ID: JSON.stringify(sha256(Buffer.from(text)).slice(0, 16)) } });
    const auth = path.join(dir, ASSETS.auth);
    esbuild.buildSync({ ...common, entryPoints: ["google-auth-library"], outfile: auth });
    const notices = path.join(dir, "THIRD-PARTY-NOTICES.txt");
    fs.writeFileSync(notices, [main, boot, auth].map((f) => `${f}.LEGAL.txt`).filter((f) => fs.existsSync(f))
        .map((f) => fs.readFileSync(f, "utf8")).join("\n"));
    return { dir, main, boot, auth, notices };
}

/** The tarballs whose integrity this build checked, by package (linux-amd64's gives the binary and the license). */
const checkedPackages = new Set<string>();

/** The pinned npm package's tarball, from the cache or the registry (via npm, so its registry settings apply). */
function nodePackage(pin: NodePin): string {
    const file = path.join(CACHE, `${pin.package}-${NODE_VERSION}.tgz`);
    if (checkedPackages.has(pin.package)) return file;
    const integrity = (data: Buffer) => `sha512-${createHash("sha512").update(data).digest("base64")}`;
    if (fs.existsSync(file) && integrity(fs.readFileSync(file)) === pin.integrity) {
        checkedPackages.add(pin.package);
        return file;
    }
    fs.mkdirSync(CACHE, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(CACHE, "fetch-"));
    try {
        log(`fetching ${pin.package}@${NODE_VERSION} from the npm registry`);
        execFileSync("npm", ["pack", `${pin.package}@${NODE_VERSION}`, "--silent", "--pack-destination", tmp], { stdio: ["ignore", "ignore", "inherit"] });
        const got = path.join(tmp, `${pin.package}-${NODE_VERSION}.tgz`);
        const actual = integrity(fs.readFileSync(got));
        if (actual !== pin.integrity) throw new Error(`${pin.package}@${NODE_VERSION}: the registry's tarball has integrity ${actual}, but scripts/platforms.ts pins ${pin.integrity}`);
        fs.renameSync(got, file);
        checkedPackages.add(pin.package);
        return file;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/** The binaries checked in this build, by package (the builder's Node is linux-amd64's too). */
const verified = new Map<string, Buffer>();

/** What kind of executable `data` is: "elf-x64", "elf-arm64", "pe-x64", "macho-x64", "macho-arm64", or undefined. */
function executableKind(data: Buffer): string | undefined {
    if (data.readUInt32LE(0) === MH_MAGIC_64) {
        const cpu = data.readUInt32LE(4);
        return cpu === CPU_TYPE.x86_64 ? "macho-x64" : cpu === CPU_TYPE.arm64 ? "macho-arm64" : undefined;
    }
    if (data.readUInt32BE(0) === 0x7f454c46) {
        const machine = data.readUInt16LE(18);
        return machine === 0x3e ? "elf-x64" : machine === 0xb7 ? "elf-arm64" : undefined;
    }
    if (data.readUInt16BE(0) === 0x4d5a) {
        const pe = data.readUInt32LE(0x3c);
        return data.readUInt32BE(pe) === 0x50450000 && data.readUInt16LE(pe + 4) === 0x8664 ? "pe-x64" : undefined;
    }
    return undefined;
}

/** The kind of executable (as executableKind names it) that `p`'s Node must be. */
function expectedKind(p: Platform): string {
    const format = { linux: "elf", darwin: "macho", windows: "pe" }[p.os];
    return `${format}-${p.arch === "amd64" ? "x64" : "arm64"}`;
}

/**
 * The platform's Node binary, checked before anything is injected into it: the package's integrity, the
 * binary's SHA-256, its format and CPU, an unset SEA fuse, and on macOS the Node.js Foundation's signature.
 * Extracted and checked once per build.
 */
export function nodeBinary(p: Platform, pin: NodePin): Buffer {
    const known = verified.get(pin.package);
    if (known) return known;
    // --occurrence=1: tar stops once it has the member, instead of reading the rest of the archive for another.
    const binary = execFileSync("tar", ["--occurrence=1", "-xzOf", nodePackage(pin), `package/${pin.binary}`], { maxBuffer: 1 << 30 });
    checkNodeBinary(p, pin, binary);
    verified.set(pin.package, binary);
    return binary;
}

/** The platform's checked Node binary as an executable file in `work`, written there once (linux-amd64's builds and makes a cache). */
export function nodeFile(p: Platform, pin: NodePin, work: string): string {
    const file = path.join(work, `${pin.package}-${path.basename(pin.binary)}`);
    if (!fs.existsSync(file)) fs.writeFileSync(file, nodeBinary(p, pin), { mode: 0o755 });
    return file;
}

/** Node's license text, from a pinned package that has it (the Windows one has none; the text is one per release). */
function nodeLicense(pin: NodePin): Buffer {
    return execFileSync("tar", ["--occurrence=1", "-xzOf", nodePackage(pin), "package/LICENSE"]);
}

/**
 * Throws, naming what is wrong, unless `binary` is the pinned Node for `p`, with its SEA fuse present and unset,
 * and (macOS) signed by the Node.js Foundation's Developer ID over exactly these bytes: the pins came from the
 * registry, and the signature says the registry's package is Node's own build.
 */
export function checkNodeBinary(p: Platform, pin: NodePin, binary: Buffer): void {
    const where = `${pin.package}@${NODE_VERSION} ${pin.binary}`;
    if (sha256(binary) !== pin.sha256) throw new Error(`${where}: SHA-256 ${sha256(binary)}, but scripts/platforms.ts pins ${pin.sha256}`);
    const kind = executableKind(binary);
    const expected = expectedKind(p);
    if (kind !== expected) throw new Error(`${where}: is ${kind ?? "not an executable we know"}, not ${expected}`);
    const fuse = binary.indexOf(SEA_FUSE);
    if (fuse < 0 || binary.indexOf(SEA_FUSE, fuse + 1) >= 0 || binary.indexOf(`${SEA_FUSE}:0`) !== fuse) {
        throw new Error(`${where}: expected exactly one SEA fuse, unset (an executable something was already injected into?)`);
    }
    if (p.os === "darwin") {
        try {
            checkNodeFoundationSignature(binary);
        } catch (e) {
            throw new Error(`${where}: not Node's own signed build: ${e instanceof Error ? e.message : String(e)}`);
        }
    }
}

/**
 * Runs a command until it exits; fails with its stderr when it does not exit 0 within `ms`. Its output goes to
 * a file: Node under Wine cannot write to a pipe from here.
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, ms: number, work: string): Promise<void> {
    const errFile = path.join(work, `stderr-${Date.now()}`);
    const err = fs.openSync(errFile, "w");
    return new Promise<void>((resolve, reject) => {
        const child = spawn(command, args, { env, stdio: ["ignore", "ignore", err] });
        const timer = setTimeout(() => child.kill("SIGKILL"), ms);
        child.on("error", reject);
        child.on("exit", (code, signal) => {
            clearTimeout(timer);
            if (code === 0) return resolve();
            const text = fs.readFileSync(errFile, "utf8").trim().slice(-2000);
            reject(new Error(`${path.basename(command)} ${args.join(" ")} failed (${signal ?? `exit ${code}`}): ${text}`));
        });
    }).finally(() => fs.closeSync(err));
}

/** Makes a SEA blob with the pinned linux-x64 Node (the blob's format is Node's version's, not a platform's). */
function seaBlob(builder: string, work: string, b: Bundles, schema: string, cache: string | undefined): Buffer {
    const config = path.join(work, "sea-config.json");
    const blob = path.join(work, "sea.blob");
    const assets: Record<string, string> = { [ASSETS.main]: b.main, [ASSETS.auth]: b.auth, [ASSETS.schema]: schema };
    if (cache) assets[ASSETS.cache] = cache;
    // The blob keeps the main script's path as given: relative to the bundles' folder, it is the same every build.
    fs.writeFileSync(config, JSON.stringify({
        main: path.relative(b.dir, b.boot), output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false,
        // No flags, whatever the environment: NODE_OPTIONS meant for a user's program must not reach the plugin
        // (and would make V8 refuse the code cache).
        execArgv: [], execArgvExtension: "none", assets,
    }));
    execFileSync(builder, ["--experimental-sea-config", config], { cwd: b.dir, stdio: "ignore" });
    return fs.readFileSync(blob);
}

/** Writes `binary` with `blob` injected to `out`; a Mach-O is signed again, ad hoc, as its executable's name. */
async function injectInto(p: Platform, binary: Buffer, blob: Buffer, out: string): Promise<void> {
    fs.writeFileSync(out, binary, { mode: 0o755 });
    // postject reports the ELF notes it rewrites on the console; only failures matter here.
    const quiet = console.log;
    const quietWarn = console.warn;
    console.log = () => undefined;
    console.warn = () => undefined;
    try {
        // On macOS, Node looks for the blob in a segment of this name; postject drops Node's signature there.
        await inject(out, "NODE_SEA_BLOB", blob, { sentinelFuse: SEA_FUSE, overwrite: true, ...(p.os === "darwin" ? { machoSegmentName: "NODE_SEA" } : {}) });
    } finally {
        console.log = quiet;
        console.warn = quietWarn;
    }
    if (p.os === "darwin") fs.writeFileSync(out, adhocSign(fs.readFileSync(out), executableName(p)));
}

/** The builder: the pinned linux-x64 Node, extracted once per build, and Node's license text. */
function builderNode(work: string): { node: string; license: Buffer } {
    const linux = PLATFORMS.find((p) => p.os === "linux" && p.arch === "amd64" && p.node);
    if (!linux?.node) throw new Error("scripts/platforms.ts: linux-amd64 must pin a Node (it builds every blob)");
    return { node: nodeFile(linux, linux.node, work), license: nodeLicense(linux.node) };
}

/**
 * This platform's Node makes the code cache: it runs the bundle up to its port line (V8 accepts a cache only
 * under the Node version and flags that made it; it checks the source's length, not the file it came from).
 */
async function codeCache(p: Platform, pin: NodePin, b: Bundles, work: string): Promise<string> {
    const runner = runnerFor(p);
    if ("missing" in runner) {
        throw new Error(`${platformKey(p)}: its executable's code cache is made by its own Node, so the build runs it, and it ${runner.missing}`);
    }
    const node = nodeFile(p, pin, work);
    const folder = fs.mkdtempSync(path.join(work, "folder-"));
    folderLayout(b, folder);
    const cache = path.join(work, `${platformKey(p)}.cache`);
    const [command, args] = runner.command(node, [CACHE_SEED, path.join(folder, "lib", "boot.js")]);
    await run(command, args, { PATH: process.env.PATH ?? "", HOME: work, ...runner.env, [WRITE_CODE_CACHE_ENV]: cache }, 300_000, work);
    return cache;
}

/**
 * A self-contained platform's files: the executable, Node's license. Its code cache is made where the platform
 * runs here (not macOS: its executable writes one to the user's cache on its first start), unless `noCache`.
 */
async function selfContainedLayout(p: Platform, pin: NodePin, b: Bundles, stage: string, work: string, builder: { node: string; license: Buffer }, noCache: boolean): Promise<void> {
    const binary = nodeBinary(p, pin);
    const cache = p.runs === "no" || noCache ? undefined : await codeCache(p, pin, b, work);
    await injectInto(p, binary, seaBlob(builder.node, work, b, path.join(ROOT, "schema.json"), cache), path.join(stage, executableName(p)));
    fs.writeFileSync(path.join(stage, "NODE-LICENSE.txt"), builder.license);
}

/** The launcher of a folder packaging: finds `node`, or says what is missing. */
const LAUNCHER = `#!/bin/sh
# pulumi-resource-${PACKAGE_NAME}: the provider plugin, run by the node (${NODE_ENGINES}) on PATH.
if ! command -v node >/dev/null 2>&1; then
    echo "pulumi-resource-${PACKAGE_NAME}: needs Node.js ${NODE_ENGINES} on PATH on this platform, and there is no node there: install Node.js (https://nodejs.org, or \\\`brew install node\\\`) and run the Pulumi command again" >&2
    exit 127
fi
dir=$(dirname "$0")
# Node would read NODE_EXTRA_CA_CERTS, and build its whole certificate store, before the plugin runs (~35 ms
# of every start); the plugin adds those certificates itself before its first TLS connection.
if [ -n "\${NODE_EXTRA_CA_CERTS:-}" ]; then
    PULUMI_CLOUD_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
    export PULUMI_CLOUD_EXTRA_CA_CERTS
    unset NODE_EXTRA_CA_CERTS
fi
# glibc's malloc (Linux), tuned for a long-lived process whose JavaScript runs on one thread (a user's values
# win): two arenas, not one per thread; a fixed mmap threshold, so V8's big temporary blocks go back to the system.
MALLOC_ARENA_MAX=\${MALLOC_ARENA_MAX:-2}
MALLOC_MMAP_THRESHOLD_=\${MALLOC_MMAP_THRESHOLD_:-131072}
export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
exec node "$dir/lib/boot.js" "$@"
`;

/**
 * A folder its user's `node` runs (NODE_FOLDER; and where the build makes a code cache): the launcher, lib/boot.js, lib/main.js, google-auth-library under
 * lib/node_modules, schema.json (the server finds it at lib/..). There is deliberately no PulumiPlugin.yaml
 * (that would make the engine run the folder through the Node language host).
 */
function folderLayout(b: Bundles, stage: string): void {
    const lib = path.join(stage, "lib");
    fs.mkdirSync(path.join(lib, "node_modules", "google-auth-library"), { recursive: true });
    fs.copyFileSync(b.boot, path.join(lib, "boot.js"));
    fs.copyFileSync(b.main, path.join(lib, "main.js"));
    fs.copyFileSync(b.auth, path.join(lib, "node_modules", "google-auth-library", "index.js"));
    fs.copyFileSync(path.join(ROOT, "schema.json"), path.join(stage, "schema.json"));
    fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify({
        name: `pulumi-resource-${PACKAGE_NAME}`, version: PACKAGE_VERSION, license: LICENSE, private: true,
        main: "lib/boot.js", engines: { node: NODE_ENGINES },
    }, null, 2)}\n`);
    fs.writeFileSync(path.join(stage, `pulumi-resource-${PACKAGE_NAME}`), LAUNCHER, { mode: 0o755 });
}

/** Fixed modes (the umask must not show in the tarball): executables 755, other files 644, folders 755. */
function fixModes(dir: string, executables: Set<string>): void {
    fs.chmodSync(dir, 0o755);
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, e.name);
        if (e.isDirectory()) fixModes(file, executables);
        else fs.chmodSync(file, executables.has(e.name) ? 0o755 : 0o644);
    }
}

/**
 * Builds the tarballs of `platforms` into `outDir` (executables without a code cache if `noCache`; with `unpacked`,
 * their contents as folders instead); returns their paths.
 */
export async function dist(platforms: readonly Platform[], outDir = DIST, noCache = false, unpacked = false): Promise<string[]> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-dist-"));
    try {
        const b = bundle(path.join(work, "bundles"));
        const mtime = sourceDate();
        const builder = platforms.some((p) => p.node) ? builderNode(work) : undefined;
        fs.mkdirSync(outDir, { recursive: true });
        const made: string[] = [];
        for (const p of platforms) {
            const started = Date.now();
            const tarballPath = path.join(outDir, assetName(p, PACKAGE_VERSION));
            // An unpacked stage is made beside where it ends up, so it is renamed into place whole.
            const stage = fs.mkdtempSync(unpacked ? `${unpackedName(tarballPath)}.tmp-` : path.join(work, `${platformKey(p)}-`));
            if (p.node && builder) await selfContainedLayout(p, p.node, b, stage, work, builder, noCache);
            else folderLayout(b, stage);
            fs.copyFileSync(b.notices, path.join(stage, "THIRD-PARTY-NOTICES.txt"));
            fixModes(stage, new Set([executableName(p)]));
            let out = tarballPath;
            if (unpacked) {
                out = unpackedName(tarballPath);
                fs.rmSync(out, { recursive: true, force: true });
                fs.renameSync(stage, out);
            } else tarball(stage, out, mtime);
            const size = unpacked ? "" : `${(fs.statSync(out).size / 1e6).toFixed(1)} MB, `;
            log(`${path.relative(ROOT, out)}: ${size}` +
                `${p.node ? `self-contained (Node ${NODE_VERSION}${p.runs === "no" || noCache ? ", no code cache" : ""})` : "a folder run by the node on PATH"}, ${((Date.now() - started) / 1000).toFixed(1)} s`);
            made.push(out);
        }
        return made;
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

/** SHA256SUMS for `files`, in the format `sha256sum -c` reads. */
export function writeChecksums(files: string[], outDir = DIST): string {
    const lines = [...files].sort().map((f) => `${sha256(fs.readFileSync(f))}  ${path.basename(f)}\n`);
    const out = path.join(outDir, CHECKSUMS);
    fs.writeFileSync(out, lines.join(""));
    return out;
}

async function main(): Promise<void> {
    const args = minimist(process.argv.slice(2), { string: ["platform", "out"], boolean: ["code-cache", "unpacked"], default: { "code-cache": true } });
    const wanted = ([] as string[]).concat(args.platform ?? []);
    const known = [...PLATFORMS, NODE_FOLDER];
    const unknown = wanted.filter((w) => !known.some((p) => platformKey(p) === w));
    if (unknown.length) throw new Error(`unknown platform ${unknown.join(", ")}: one of ${known.map(platformKey).join(", ")}`);
    const platforms = wanted.length ? known.filter((p) => wanted.includes(platformKey(p))) : PLATFORMS;
    const outDir = args.out ? path.resolve(args.out) : DIST;
    const started = Date.now();
    const noCache = args["code-cache"] === false;
    const unpacked = args.unpacked === true;
    const made = await dist(platforms, outDir, noCache, unpacked);
    // SHA256SUMS is the release's: only for a whole release build.
    if (!wanted.length && !noCache && !unpacked) made.push(writeChecksums(made, outDir));
    for (const f of made) process.stdout.write(`${path.relative(process.cwd(), f)}\n`);
    log(`${made.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (require.main === module) {
    main().catch((e: unknown) => {
        process.stderr.write(`dist: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exit(1);
    });
}
