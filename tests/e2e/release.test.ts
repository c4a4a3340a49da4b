// The release workflow (.github/workflows/release.yml):
// - actionlint (built by `npm run tools` from tools/actionlint) finds nothing in it, and does find a deliberate
//   mistake in a copy (so a clean result means something). Run without shellcheck and pyflakes, so the result
//   does not depend on what else is on PATH.
// - it ships exactly the assets scripts/platforms.ts declares: the plugin job runs scripts/check-dist.ts on
//   dist/ before uploading `dist/*.tar.gz` and SHA256SUMS, and the release is made of those same files;
// - the version is read from package.json in one place, which fails on a tag that does not name it, and no
//   `${{ }}` expression is pasted into a script.
// The actionlint tests need the tools (skipped without them, failing under CLOUD_E2E_REQUIRED=1); the rest read
// the file.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { CHECKSUMS, PLATFORMS, assetName } from "../../scripts/platforms";
import { REPOSITORY } from "../../provider/package/version";
import { tempDir } from "../support/temp";
import { ROOT, VERSION, run, skipUnless, toolsBin, toolsMissing } from "./support";

const WORKFLOW = path.join(ROOT, ".github", "workflows", "release.yml");
const TEXT = fs.readFileSync(WORKFLOW, "utf8");
const JOBS = ["version", "plugin", "sdks", "test", "publish"];

/** actionlint on one workflow file, its result independent of any shellcheck or pyflakes on PATH. */
function actionlint(file: string) {
    return run(path.join(toolsBin(), "actionlint"), ["-no-color", "-shellcheck=", "-pyflakes=", file],
        { cwd: path.dirname(file), env: process.env, timeoutMs: 60_000 });
}

/** Each job's lines, by name: from `  <name>:` under `jobs:` to the next job. */
function jobs(text: string): Map<string, string> {
    const lines = text.split("\n");
    const out = new Map<string, string>();
    let current: string | undefined;
    let inJobs = false;
    for (const line of lines) {
        if (/^\S/.test(line)) { inJobs = line.startsWith("jobs:"); current = undefined; continue; }
        const m = /^ {2}([A-Za-z_][\w-]*):\s*$/.exec(line);
        if (inJobs && m) { current = m[1]; out.set(current, ""); continue; }
        if (current !== undefined) out.set(current, `${out.get(current)}${line}\n`);
    }
    return out;
}

/** The value of each `key:` in `text`: the rest of its line, or the lines of its block scalar (`|`, `>`). */
function values(text: string, key: string): string[] {
    const lines = text.split("\n");
    const out: string[] = [];
    const re = new RegExp(`^(\\s*)(- )?${key}:\\s*(.*)$`);
    lines.forEach((line, i) => {
        const m = re.exec(line);
        if (!m) return;
        if (!/^[|>][-+]?$/.test(m[3])) { out.push(m[3]); return; }
        const col = m[1].length + (m[2] ? 2 : 0);
        const block: string[] = [];
        for (const next of lines.slice(i + 1)) {
            if (next.trim() !== "" && next.search(/\S/) <= col) break;
            block.push(next.trim());
        }
        out.push(block.join("\n").trim());
    });
    return out;
}

/** Whether shell glob `pattern` (with `*` only) matches `name`. */
function globMatches(pattern: string, name: string): boolean {
    const re = new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
    return re.test(name);
}

describe("release workflow (.github/workflows/release.yml)", function () {
    this.timeout(120_000);
    const byJob = jobs(TEXT);

    it("has the jobs version, plugin, sdks, test and publish", () => {
        expect([...byJob.keys()]).to.deep.equal(JOBS);
    });

    it("actionlint finds nothing in it", async function () {
        skipUnless(this, toolsMissing(["actionlint"]));
        const r = await actionlint(WORKFLOW);
        expect(r.stdout + r.stderr).to.equal("");
        expect(r.code).to.equal(0);
    });

    it("actionlint reports a mistake: publish needing a job that does not exist", async function () {
        skipUnless(this, toolsMissing(["actionlint"]));
        const broken = TEXT.replace("needs: [version, plugin, sdks, test]", "needs: [version, plugin, sdks, tests]");
        expect(broken, "the copy differs").not.to.equal(TEXT);
        const file = path.join(tempDir("release-workflow"), "release.yml");
        fs.writeFileSync(file, broken);
        const r = await actionlint(file);
        expect(r.code).to.equal(1);
        expect(r.stdout).to.match(/^release\.yml:\d+:\d+: job "publish" needs job "tests" which does not exist in this workflow \[job-needs\]$/m);
    });

    it("uploads and releases exactly the platform table's tarballs and SHA256SUMS, checked by check-dist first", () => {
        const plugin = byJob.get("plugin") ?? "";
        const dist = plugin.indexOf("npm run dist");
        const check = plugin.indexOf("node build/scripts/check-dist.js");
        const sums = plugin.indexOf(`sha256sum -c ${CHECKSUMS}`);
        const upload = plugin.indexOf("actions/upload-artifact@");
        expect(dist, "npm run dist").to.be.greaterThan(-1);
        expect(check, "check-dist runs after dist").to.be.greaterThan(dist);
        expect(sums, "sha256sum -c runs after dist").to.be.greaterThan(dist);
        expect(upload, "the upload comes after the checks").to.be.greaterThan(Math.max(check, sums));
        const uploaded = values(plugin, "path").flatMap((v) => v.split("\n"));
        expect(uploaded).to.deep.equal(["dist/*.tar.gz", `dist/${CHECKSUMS}`]);

        const release = values(byJob.get("publish") ?? "", "run").filter((s) => s.includes("gh release create"));
        expect(release).to.have.length(1);
        const files = release[0].split(/\s+/).map((t) => t.replace(/^"|"$/g, "")).filter((t) => t.startsWith("dist/"));
        expect(files, "the release's files are the uploaded ones").to.deep.equal(uploaded);
        for (const p of PLATFORMS) {
            const asset = `dist/${assetName(p, VERSION)}`;
            expect(files.filter((f) => globMatches(f, asset)), asset).to.have.length(1);
        }
        // check-dist refuses any other *.tar.gz in dist/ (tests/scripts/checkDist.test.ts), so the glob is exact.
        expect(globMatches("dist/*.tar.gz", "dist/other.tar.gz")).to.equal(true);
    });

    it("reads the version from package.json once, in the version job, which every other job needs", () => {
        const reads = TEXT.match(/require\("\.\/package\.json"\)\.version/g) ?? [];
        expect(reads).to.have.length(1);
        expect(byJob.get("version")).to.contain('require("./package.json").version');
        for (const job of JOBS.filter((j) => j !== "version")) {
            expect(values(byJob.get(job) ?? "", "needs").join(" "), job).to.match(/\bversion\b/);
        }
        const publish = byJob.get("publish") ?? "";
        expect(values(publish, "needs")).to.deep.equal(["[version, plugin, sdks, test]"]);
        expect(values(publish, "if")).to.deep.equal(["github.event_name == 'push' && github.ref_type == 'tag'"]);
    });

    it("the version job fails on a tag that is not v<package.json's version>, or in a repository other than package.json's, and passes otherwise", async () => {
        const [script] = values(byJob.get("version") ?? "", "run");
        const home = REPOSITORY.replace(/^https:\/\/github\.com\//, "");
        const check = async (refType: string, refName: string, repository = home) => {
            const output = path.join(tempDir("github-output"), "out");
            fs.writeFileSync(output, "");
            const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
                REF_TYPE: refType, REF_NAME: refName, GITHUB_OUTPUT: output, GITHUB_REPOSITORY: repository };
            const r = await run("bash", ["-e", "-c", script], { cwd: ROOT, env });
            return { ...r, output: fs.readFileSync(output, "utf8") };
        };
        const good = await check("tag", `v${VERSION}`);
        expect(good.code, good.stderr).to.equal(0);
        expect(good.output).to.equal(`version=${VERSION}\n`);
        const dispatched = await check("branch", "main");
        expect(dispatched.code).to.equal(0);
        expect(dispatched.output).to.equal(`version=${VERSION}\n`);
        const bad = await check("tag", "v0.0.1");
        expect(bad.code).to.equal(1);
        expect(bad.stdout).to.contain(`::error::tag v0.0.1 does not match package.json's version ${VERSION}`);
        expect(bad.output).to.equal("");
        const fork = await check("tag", `v${VERSION}`, "someone-else/pulumi-resource-cloud");
        expect(fork.code).to.equal(1);
        expect(fork.stdout).to.contain("::error::package.json's repository.url is").and.contain("someone-else/pulumi-resource-cloud");
    });

    it("pastes no ${{ }} expression into a script: values reach scripts through env", () => {
        const scripts = values(TEXT, "run");
        expect(scripts.length).to.be.greaterThan(10);
        expect(scripts.filter((s) => s.includes("${{"))).to.deep.equal([]);
    });
});
