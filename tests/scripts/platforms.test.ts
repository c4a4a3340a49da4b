// The platform table (scripts/platforms.ts) is what the README's install section tells users.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { assetName, executableName, NODE_FOLDER, NODE_VERSION, PLATFORMS, platformKey } from "../../scripts/platforms";

const README = fs.readFileSync(path.join(__dirname, "..", "..", "..", "README.md"), "utf8");

describe("scripts/platforms.ts", () => {
    it("names the assets and executables as the engine looks for them", () => {
        expect(PLATFORMS.map(platformKey)).to.deep.equal(["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"]);
        expect(assetName(PLATFORMS[0], "8.38.0")).to.equal("pulumi-resource-cloud-v8.38.0-linux-amd64.tar.gz");
        expect(PLATFORMS.map(executableName)).to.deep.equal([...Array(4).fill("pulumi-resource-cloud"), "pulumi-resource-cloud.exe"]);
    });

    it("pins one Node (package, integrity and SHA-256) for every platform, of NODE_VERSION", () => {
        for (const p of PLATFORMS) {
            expect(p.node, platformKey(p)).to.not.equal(undefined);
            expect(p.node!.package, platformKey(p)).to.match(/^node-(bin-)?(linux|darwin|win)-(x64|arm64)$/);
            expect(p.node!.integrity, platformKey(p)).to.match(/^sha512-[A-Za-z0-9+/]{86}==$/);
            expect(p.node!.sha256, platformKey(p)).to.match(/^[0-9a-f]{64}$/);
        }
        expect(new Set(PLATFORMS.map((p) => p.node!.package)).size).to.equal(PLATFORMS.length);
        expect(NODE_VERSION).to.match(/^22\.\d+\.\d+$/);
    });

    it("keeps the unreleased folder packaging apart: its own name, no Node, not in the table", () => {
        expect(platformKey(NODE_FOLDER)).to.equal("node-folder");
        expect(NODE_FOLDER.node).to.equal(undefined);
        expect(PLATFORMS).to.not.include(NODE_FOLDER);
    });

    it("is the README's platform table, row for row: every platform a self-contained executable", () => {
        const rows = README.split("\n").filter((l) => /^\| (linux|darwin|windows)-(amd64|arm64) \|/.test(l));
        expect(rows.map((r) => r.split("|")[1].trim())).to.deep.equal(PLATFORMS.map(platformKey));
        PLATFORMS.forEach((p, i) => {
            expect(rows[i], platformKey(p)).to.contain("self-contained executable").and.contain(`Node ${NODE_VERSION} inside`).and.not.contain("PATH");
        });
    });
});
