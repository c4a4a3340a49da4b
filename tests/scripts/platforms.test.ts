// The platform table (scripts/platforms.ts) is what the README's install section tells users.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { assetName, executableName, NODE_VERSION, PLATFORMS, platformKey } from "../../scripts/platforms";

const README = fs.readFileSync(path.join(__dirname, "..", "..", "..", "README.md"), "utf8");

describe("scripts/platforms.ts", () => {
    it("names the assets and executables as the engine looks for them", () => {
        expect(PLATFORMS.map(platformKey)).to.deep.equal(["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"]);
        expect(assetName(PLATFORMS[0], "8.38.0")).to.equal("pulumi-resource-cloud-v8.38.0-linux-amd64.tar.gz");
        expect(PLATFORMS.map(executableName)).to.deep.equal([...Array(4).fill("pulumi-resource-cloud"), "pulumi-resource-cloud.exe"]);
    });

    it("pins a Node (integrity and SHA-256) for every platform it calls self-contained, and says why for the others", () => {
        for (const p of PLATFORMS) {
            if (p.node) {
                expect(p.node.integrity, platformKey(p)).to.match(/^sha512-[A-Za-z0-9+/]{86}==$/);
                expect(p.node.sha256, platformKey(p)).to.match(/^[0-9a-f]{64}$/);
                expect(p.needsNode, platformKey(p)).to.equal(undefined);
            } else {
                expect(p.needsNode, platformKey(p)).to.be.a("string").and.not.equal("");
            }
        }
    });

    it("is the README's platform table, row for row", () => {
        const rows = README.split("\n").filter((l) => /^\| (linux|darwin|windows)-(amd64|arm64) \|/.test(l));
        expect(rows.map((r) => r.split("|")[1].trim())).to.deep.equal(PLATFORMS.map(platformKey));
        PLATFORMS.forEach((p, i) => {
            if (p.node) expect(rows[i], platformKey(p)).to.contain(`self-contained executable`).and.contain(`Node ${NODE_VERSION} inside`);
            else expect(rows[i], platformKey(p)).to.contain("run by `node` from PATH").and.contain(p.needsNode!);
        });
    });
});
