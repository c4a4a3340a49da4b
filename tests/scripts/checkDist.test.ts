// scripts/check-dist.ts, which the release workflow runs on dist/ before uploading it: on a directory of small
// fake tarballs, it passes when the set matches scripts/platforms.ts and SHA256SUMS, and names the file when one
// is missing, one is extra, or a checksum is wrong.

import { expect } from "chai";
import { execFile } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { PACKAGE_VERSION } from "../../provider/package/version";
import { checkDist } from "../../scripts/check-dist";
import { assetName, CHECKSUMS, PLATFORMS } from "../../scripts/platforms";
import { tempDir } from "../support/temp";

const SCRIPT = path.join(__dirname, "..", "..", "scripts", "check-dist.js");
const VERSION = "1.2.3";

function sha256(data: string): string {
    return crypto.createHash("sha256").update(data).digest("hex");
}

/** A directory with one small fake tarball per platform and their SHA256SUMS, as `npm run dist` lays them out. */
function fakeDist(name: string, version = VERSION): string {
    const dir = tempDir(name);
    const lines = PLATFORMS.map((p) => {
        const asset = assetName(p, version);
        const content = `fake tarball for ${asset}\n`;
        fs.writeFileSync(path.join(dir, asset), content);
        return `${sha256(content)}  ${asset}\n`;
    });
    fs.writeFileSync(path.join(dir, CHECKSUMS), lines.join(""));
    return dir;
}

function cli(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) =>
        execFile(process.execPath, [SCRIPT, dir], (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })));
}

describe("scripts/check-dist (the release assets)", function () {
    it("passes on the platform table's tarballs with a matching SHA256SUMS", () => {
        const { assets, problems } = checkDist(fakeDist("ok"), VERSION);
        expect(problems).to.deep.equal([]);
        expect(assets.map((a) => a.name)).to.deep.equal(PLATFORMS.map((p) => assetName(p, VERSION)));
        expect(assets.map((a) => a.name)).to.include(`pulumi-resource-cloud-v${VERSION}-windows-amd64.tar.gz`);
    });

    it("names a missing tarball", () => {
        const dir = fakeDist("missing");
        const gone = assetName(PLATFORMS[1], VERSION);
        fs.rmSync(path.join(dir, gone));
        expect(checkDist(dir, VERSION).problems).to.deep.equal([`missing: ${gone}`]);
    });

    it("names an extra tarball: another platform, or another release's", () => {
        const dir = fakeDist("extra");
        const other = `pulumi-resource-cloud-v${VERSION}-freebsd-amd64.tar.gz`;
        const older = assetName(PLATFORMS[0], "1.2.2");
        for (const f of [other, older]) fs.writeFileSync(path.join(dir, f), "x");
        expect(checkDist(dir, VERSION).problems).to.have.members([
            `extra: ${other} is not an asset of v${VERSION} in scripts/platforms.ts`,
            `extra: ${older} is not an asset of v${VERSION} in scripts/platforms.ts`,
        ]);
    });

    it("names a tarball whose bytes do not match SHA256SUMS", () => {
        const dir = fakeDist("mismatch");
        const changed = assetName(PLATFORMS[PLATFORMS.length - 1], VERSION);
        fs.appendFileSync(path.join(dir, changed), "changed after SHA256SUMS was written\n");
        const problems = checkDist(dir, VERSION).problems;
        expect(problems).to.have.length(1);
        expect(problems[0]).to.match(new RegExp(`^checksum mismatch: ${changed.replace(/\./g, "\\.")} has sha256 [0-9a-f]{64}, SHA256SUMS says [0-9a-f]{64}$`));
    });

    it("names what SHA256SUMS leaves out or adds, and a missing SHA256SUMS", () => {
        const dir = fakeDist("sums");
        const sums = path.join(dir, CHECKSUMS);
        const [first, ...rest] = fs.readFileSync(sums, "utf8").split("\n").filter((l) => l !== "");
        fs.writeFileSync(sums, [...rest, `${sha256("x")}  notes.txt`, ""].join("\n"));
        expect(checkDist(dir, VERSION).problems).to.deep.equal([
            `${CHECKSUMS} does not list ${first.split("  ")[1]}`,
            `${CHECKSUMS} lists notes.txt, which is not an asset of v${VERSION}`,
        ]);
        fs.rmSync(sums);
        expect(checkDist(dir, VERSION).problems).to.deep.equal([`missing: ${CHECKSUMS}`]);
    });

    it("as a command: one line per asset and exit 0; exit 1 naming the problem on stderr", async () => {
        const dir = fakeDist("cli", PACKAGE_VERSION);
        const good = await cli(dir);
        expect(good.code, good.stderr).to.equal(0);
        expect(good.stderr).to.equal("");
        const lines = good.stdout.trim().split("\n");
        expect(lines).to.have.length(PLATFORMS.length);
        expect(lines[0]).to.match(new RegExp(`^${assetName(PLATFORMS[0], PACKAGE_VERSION).replace(/\./g, "\\.")}  0\\.0 MB  sha256 [0-9a-f]{12}$`));

        const gone = assetName(PLATFORMS[0], PACKAGE_VERSION);
        fs.rmSync(path.join(dir, gone));
        const bad = await cli(dir);
        expect(bad.code).to.equal(1);
        expect(bad.stderr).to.equal(`check-dist: missing: ${gone}\n`);
        expect(bad.stdout.trim().split("\n")).to.have.length(PLATFORMS.length - 1);
    });
});
