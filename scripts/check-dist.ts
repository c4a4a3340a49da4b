// Checks the release assets `npm run dist` made, before the release workflow (.github/workflows/release.yml)
// uploads them: every tarball scripts/platforms.ts declares is in the directory, SHA256SUMS lists exactly those
// tarballs with their right SHA-256, and no other tarball is there (the workflow uploads `dist/*.tar.gz`).
//
//   node build/scripts/check-dist.js [DIR]      default: dist/ of this repository
//
// Prints one line per asset (name, size, start of its SHA-256); exits 1 naming each missing, extra or mismatched
// file.

import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { PACKAGE_VERSION } from "../provider/package/version";
import { assetName, CHECKSUMS, PLATFORMS } from "./platforms";

export interface Asset {
    name: string;
    bytes: number;
    sha256: string;
}

export interface DistCheck {
    /** The expected assets that are there, in the platform table's order. */
    assets: Asset[];
    /** What is wrong, one sentence each naming the file; empty when the directory is right. */
    problems: string[];
}

/** Parses a `sha256sum` output file: file name → hex digest, plus the lines it could not read. */
function parseChecksums(text: string): { sums: Map<string, string[]>; bad: string[] } {
    const sums = new Map<string, string[]>();
    const bad: string[] = [];
    for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        // `<hex>  <name>` (text mode) or `<hex> *<name>` (binary mode).
        const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
        if (!m) { bad.push(line); continue; }
        sums.set(m[2], [...(sums.get(m[2]) ?? []), m[1]]);
    }
    return { sums, bad };
}

function sha256(file: string): string {
    return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Checks `dir` against the platform table for release `version`. Reads; never writes. */
export function checkDist(dir: string, version: string = PACKAGE_VERSION): DistCheck {
    const expected = PLATFORMS.map((p) => assetName(p, version));
    const problems: string[] = [];
    const assets: Asset[] = [];
    if (!fs.existsSync(dir)) return { assets, problems: [`${dir} does not exist: run \`npm run dist\``] };

    const present = new Set(fs.readdirSync(dir));
    for (const name of expected) {
        if (!present.has(name)) { problems.push(`missing: ${name}`); continue; }
        const file = path.join(dir, name);
        assets.push({ name, bytes: fs.statSync(file).size, sha256: sha256(file) });
    }
    // Any other tarball would be uploaded by the workflow's `dist/*.tar.gz`.
    for (const name of [...present].sort()) {
        if (name.endsWith(".tar.gz") && !expected.includes(name)) problems.push(`extra: ${name} is not an asset of v${version} in scripts/platforms.ts`);
    }

    if (!present.has(CHECKSUMS)) {
        problems.push(`missing: ${CHECKSUMS}`);
        return { assets, problems };
    }
    const { sums, bad } = parseChecksums(fs.readFileSync(path.join(dir, CHECKSUMS), "utf8"));
    for (const line of bad) problems.push(`${CHECKSUMS}: unreadable line ${JSON.stringify(line)}`);
    for (const name of expected) {
        const listed = sums.get(name);
        if (!listed) problems.push(`${CHECKSUMS} does not list ${name}`);
        else if (listed.length > 1) problems.push(`${CHECKSUMS} lists ${name} ${listed.length} times`);
    }
    for (const name of [...sums.keys()].sort()) {
        if (!expected.includes(name)) problems.push(`${CHECKSUMS} lists ${name}, which is not an asset of v${version}`);
    }
    for (const a of assets) {
        const listed = sums.get(a.name);
        if (listed?.length === 1 && listed[0] !== a.sha256) {
            problems.push(`checksum mismatch: ${a.name} has sha256 ${a.sha256}, ${CHECKSUMS} says ${listed[0]}`);
        }
    }
    return { assets, problems };
}

/** The report's line for one asset: name, size in MB, the first 12 hex digits of its SHA-256. */
export function describe(a: Asset): string {
    return `${a.name}  ${(a.bytes / 1e6).toFixed(1)} MB  sha256 ${a.sha256.slice(0, 12)}`;
}

function main(): void {
    const dir = process.argv[2] ?? path.join(__dirname, "..", "..", "dist");
    const { assets, problems } = checkDist(dir);
    for (const a of assets) process.stdout.write(describe(a) + "\n");
    if (problems.length) {
        for (const p of problems) process.stderr.write(`check-dist: ${p}\n`);
        process.exitCode = 1;
    }
}

if (require.main === module) main();
