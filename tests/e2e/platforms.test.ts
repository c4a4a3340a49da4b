// `npm run dist` as a release makes it (scripts/dist.ts), and each platform's plugin run the way this machine
// can: linux-amd64 natively with an empty environment (no node anywhere), linux-arm64 under qemu-user, windows-amd64
// under Wine; each prints its port and answers a lookup against the emulator, from the code cache inside it.
// macOS's executables cannot run here: each is checked to be a Mach-O of its CPU with the plugin inside and an
// ad-hoc signature whose every page hash is recomputed (tests/support/macho.ts), and a linux-amd64 executable
// built as they are, without a code cache, runs its first and later starts. Every tarball is installed with
// `pulumi plugin install --file`. In the e2e set: a full build takes minutes, and Wine's and qemu's starts are slow.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { startEmulator } from "../../emulator";
import { checkDist } from "../../scripts/check-dist";
import { SEA_FUSE } from "../../scripts/dist";
import { assetName, CHECKSUMS, executableName, PLATFORMS, platformKey } from "../../scripts/platforms";
import { runnerFor } from "../../scripts/runners";
import { checkAdhocSignedMachO } from "../support/macho";
import { expectAnswersLookup, HOST_PLATFORM, notesOfALookup, Plugin, pluginTarball, unpackPlugin } from "../support/plugin";
import { ROOT, skipUnless, toolsBin, toolsMissing, VERSION } from "./support";

const TOKEN = "ya29.platform-token";

/**
 * These are release checks (every platform built and run, minutes of work): like the rest of the e2e set they run
 * once the tools are built (CI builds them and requires every e2e test), so `npm test` on a new clone stays quick.
 */
const releaseChecksSkipped = () => toolsMissing(["pulumi"]);

describe("npm run dist: every platform's tarball, and SHA256SUMS", function () {
    this.timeout(900_000);
    let out: string;

    before(function () {
        skipUnless(this, releaseChecksSkipped());
        // The build runs each executable to make its code cache: it needs every platform's runner.
        const missing = PLATFORMS.filter((p) => p.runs !== "no").map((p) => ({ p, r: runnerFor(p) })).flatMap(({ p, r }) => ("missing" in r ? [`${platformKey(p)} ${r.missing}`] : []));
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
            const files = list.filter((l) => !l.endsWith("/")).map((l) => l.split(" ").pop()).sort();
            expect(files, `${platformKey(p)}: one executable, two texts`).to.deep.equal(["./NODE-LICENSE.txt", "./THIRD-PARTY-NOTICES.txt", `./${executableName(p)}`]);
        }
    });

    it("makes each macOS executable a Mach-O of its CPU, the plugin inside, signed ad hoc over its final bytes", () => {
        for (const p of PLATFORMS.filter((q) => q.os === "darwin")) {
            const exe = execFileSync("tar", ["-xzOf", path.join(out, assetName(p, VERSION)), `./${executableName(p)}`], { maxBuffer: 1 << 30 });
            const signed = checkAdhocSignedMachO(exe);
            expect(signed.cpu, platformKey(p)).to.equal(p.arch === "arm64" ? "arm64" : "x86_64");
            expect(signed.identifier, platformKey(p)).to.equal(executableName(p));
            expect(signed.seaBlobBytes, `${platformKey(p)}: the plugin's blob`).to.be.greaterThan(1_000_000);
            expect(exe.includes(`${SEA_FUSE}:1`), `${platformKey(p)}: SEA fuse set`).to.equal(true);
        }
    });

    it("`pulumi plugin install --file` of each tarball lays out what the engine runs: the executable and the two texts", () => {
        for (const p of PLATFORMS) {
            const home = fs.mkdtempSync(path.join(out, "..", `cloud-home-${platformKey(p)}-`));
            try {
                execFileSync(path.join(toolsBin(), "pulumi"), ["plugin", "install", "resource", "cloud", VERSION, "--file", path.join(out, assetName(p, VERSION))],
                    { env: { PATH: process.env.PATH, HOME: home, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "1" }, stdio: ["ignore", "ignore", "pipe"] });
                const dir = path.join(home, "plugins", `resource-cloud-v${VERSION}`);
                expect(fs.readdirSync(dir).filter((f) => !f.startsWith(".")).sort(), platformKey(p)).to.deep.equal(["NODE-LICENSE.txt", "THIRD-PARTY-NOTICES.txt", executableName(p)].sort());
                expect(fs.statSync(path.join(dir, executableName(p))).mode & 0o777, platformKey(p)).to.equal(0o755);
            } finally {
                fs.rmSync(home, { recursive: true, force: true });
            }
        }
    });
});

describe("an executable without a code cache inside, as macOS's are (linux-amd64 built so)", function () {
    this.timeout(900_000);
    let dir: string;
    let exe: string;

    before(function () {
        skipUnless(this, releaseChecksSkipped());
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-no-cache-"));
        execFileSync(process.execPath, [path.join(ROOT, "build", "scripts", "dist.js"), "--platform", platformKey(HOST_PLATFORM), "--no-code-cache", "--out", dir],
            { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
        execFileSync("tar", ["-xzf", path.join(dir, assetName(HOST_PLATFORM, VERSION)), "-C", dir]);
        exe = path.join(dir, executableName(HOST_PLATFORM));
    });
    after(() => {
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it("serves on its first start, writing a code cache to the user's cache directory, and starts from it later", async () => {
        const cacheHome = path.join(dir, "cache");
        const start = () => notesOfALookup(["env", "-i", `XDG_CACHE_HOME=${cacheHome}`, exe], {}, TOKEN);
        expect(await start()).to.match(/no usable code cache: writing .*main\.js\.[0-9a-f]{16}\.v[\d.]+-x64\.cache/).and.not.contain("code cache rejected");
        const written = fs.readdirSync(path.join(cacheHome, "pulumi-resource-cloud"));
        expect(written).to.have.length(1);
        expect(await start()).to.contain(`code cache used: ${path.join(cacheHome, "pulumi-resource-cloud", written[0])}`);
    });
});

for (const p of PLATFORMS.filter((q) => q.runs !== "no")) {
    describe(`the ${platformKey(p)} executable runs here (${p.runs === "native" ? "natively, with an empty environment" : `under ${p.runs}`})`, function () {
        this.timeout(900_000);
        let dir: string;
        let exe: string;

        before(function () {
            const runner = runnerFor(p);
            skipUnless(this, releaseChecksSkipped() ?? ("missing" in runner ? `${platformKey(p)}: ${runner.missing}` : undefined));
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
