// `npm run dist` as a release makes it (scripts/dist.ts), and each platform's plugin run the way this machine
// can: linux-amd64 natively with an empty environment (no node anywhere), linux-arm64 under qemu-user, windows-amd64
// under Wine; each prints its port and answers a lookup against the emulator, from the code cache inside it.
// macOS's tarballs cannot run here: they are checked for what the engine needs, and the same folder packaging
// runs on Linux in tests/provider/boot.test.ts. In the e2e set: a full build takes a minute or more, and Wine's
// and qemu's starts are slow.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { startEmulator } from "../../emulator";
import { checkDist } from "../../scripts/check-dist";
import { assetName, CHECKSUMS, executableName, PLATFORMS, platformKey } from "../../scripts/platforms";
import { runnerFor } from "../../scripts/runners";
import { expectAnswersLookup, Plugin, pluginTarball, unpackPlugin } from "../support/plugin";
import { ROOT, skipUnless, VERSION } from "./support";

const TOKEN = "ya29.platform-token";

describe("npm run dist: every platform's tarball, and SHA256SUMS", function () {
    this.timeout(900_000);
    let out: string;

    before(function () {
        // The build runs each executable to make its code cache: it needs every platform's runner.
        const missing = PLATFORMS.filter((p) => p.node).map((p) => ({ p, r: runnerFor(p) })).flatMap(({ p, r }) => ("missing" in r ? [`${platformKey(p)} ${r.missing}`] : []));
        skipUnless(this, missing.length ? missing.join("; ") : undefined);
        out = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-dist-test-"));
        execFileSync(process.execPath, [path.join(ROOT, "build", "scripts", "dist.js"), "--out", out], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    });
    after(() => {
        if (out) fs.rmSync(out, { recursive: true, force: true });
    });

    it("makes one tarball per platform of the table and a SHA256SUMS that `sha256sum -c` accepts", () => {
        const check = checkDist(out, VERSION);
        expect(check.problems).to.deep.equal([]);
        expect(check.assets.map((a) => a.name)).to.deep.equal(PLATFORMS.map((p) => assetName(p, VERSION)));
        expect(fs.readdirSync(out).sort()).to.deep.equal([...PLATFORMS.map((p) => assetName(p, VERSION)), CHECKSUMS].sort());
        execFileSync("sha256sum", ["-c", CHECKSUMS], { cwd: out, stdio: "ignore" });
    });

    it("is reproducible: each tarball is byte for byte the one a separate build of that platform made", () => {
        for (const p of PLATFORMS) {
            const here = fs.readFileSync(path.join(out, assetName(p, VERSION)));
            expect(here.equals(fs.readFileSync(pluginTarball(p))), `${platformKey(p)} differs between two builds`).to.equal(true);
        }
    });

    it("lays each tarball out as the engine expects: the executable at the root, the license texts beside it", () => {
        for (const p of PLATFORMS) {
            const list = execFileSync("tar", ["-tvzf", path.join(out, assetName(p, VERSION))], { encoding: "utf8" }).trim().split("\n");
            const exe = list.find((l) => l.endsWith(` ./${executableName(p)}`));
            expect(exe, `${platformKey(p)}: ${executableName(p)} at the root`).to.match(/^-rwxr-xr-x 0\/0 /);
            expect(list.some((l) => l.endsWith(" ./THIRD-PARTY-NOTICES.txt")), platformKey(p)).to.equal(true);
            if (p.node) expect(list.filter((l) => !l.endsWith("/")).length, `${platformKey(p)}: one executable, two texts`).to.equal(3);
            else expect(list.some((l) => l.endsWith(" ./lib/boot.js")) && list.some((l) => l.endsWith(" ./schema.json")), platformKey(p)).to.equal(true);
            expect(list.some((l) => l.endsWith("PulumiPlugin.yaml")), `${platformKey(p)}: no PulumiPlugin.yaml`).to.equal(false);
        }
    });
});

for (const p of PLATFORMS.filter((q) => q.node)) {
    describe(`the ${platformKey(p)} executable runs here (${p.runs === "native" ? "natively, with an empty environment" : `under ${p.runs}`})`, function () {
        this.timeout(900_000);
        let dir: string;
        let exe: string;

        before(function () {
            const runner = runnerFor(p);
            skipUnless(this, "missing" in runner ? `${platformKey(p)}: ${runner.missing}` : undefined);
            dir = fs.mkdtempSync(path.join(os.tmpdir(), `cloud-${platformKey(p)}-`));
            exe = unpackPlugin(path.join(dir, "plugin"), p);
        });
        after(() => {
            if (dir) fs.rmSync(dir, { recursive: true, force: true });
        });

        it("prints its port and answers a lookup against the emulator, from the code cache inside it", async () => {
            const runner = runnerFor(p);
            if ("missing" in runner) throw new Error(runner.missing);
            const [command, args] = runner.command(exe, ["--logtostderr", "-v=9"]);
            const emu = await startEmulator({ accessTokens: [TOKEN] });
            // env -i: nothing from this machine reaches it but what its runner needs.
            const plugin = await Plugin.start({
                command: ["env", "-i", ...Object.entries({ ...runner.env, XDG_CACHE_HOME: path.join(dir, "cache") }).map(([k, v]) => `${k}=${v}`), command, ...args],
                env: {}, outputFiles: p.runs === "wine",
            });
            try {
                await expectAnswersLookup(plugin, emu, TOKEN);
                expect(plugin.stderr).to.contain("code cache used: the executable's");
                expect(fs.existsSync(path.join(dir, "cache"))).to.equal(false);
            } finally {
                // Wine may not pass a SIGINT on: give it a moment, then end it.
                const stopped = await Promise.race([plugin.stop(), new Promise<"late">((r) => setTimeout(() => r("late"), 10_000))]);
                if (stopped === "late") plugin.child.kill("SIGKILL");
                await emu.close();
            }
        });
    });
}
