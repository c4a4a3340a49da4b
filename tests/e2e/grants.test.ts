// Never lose a grant, never drop state, through the real engine: the `pulumi` CLI and the YAML host with the
// plugin installed from its tarball, against the emulator. Each case is one a user meets: resource options
// that make the engine replace (replaceOnChanges, --replace), a wrong endpoint during refresh, a rename without
// an alias, two resources for one grant, a preview a reviewer reads, and crashes of the plugin and of the CLI.
// The same rules over the protocol alone: tests/resources/ownership.test.ts.

import { expect } from "chai";
import { JOURNAL_SAYS } from "../support/machine";
import { ChildProcess, spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { listGrants, MEMBER, ROLE } from "../support/plugin";
import { pidsWith, processes, PulumiSandbox, RunResult, skipUnless, sleep, toolsMissing, waitFor, yaml } from "./support";




describe("e2e: never lose a grant (real CLI and YAML host)", function () {
    this.timeout(300_000);
    this.slow(30_000);

    const token = `e2e-grants-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    let serial = 0;

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        sb = await PulumiSandbox.create("grants");
    });

    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    /** The `pulumi up` upUnderway started last. */
    let underway: ChildProcess | undefined;
    // A test that fails midway leaves no latency, held answer or running CLI to the next.
    afterEach(() => {
        if (underway && underway.exitCode === null && underway.signalCode === null) underway.kill("SIGKILL");
        underway = undefined;
        emu?.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
    });

    /** A fresh service and a project with stack `dev` configured against the emulator. */
    async function fresh(label: string): Promise<{ service: string; parent: string; dir: string; write(resources: string): void }> {
        serial++;
        const service = `g${serial}-${label}.endpoints.example-project.cloud.goog`;
        emu.createService(service, "example-project");
        const dir = sb.project(`${label}-${serial}`, { "Pulumi.yaml": yaml.program(label, { resources: "" }) });
        await sb.initStack(dir, emu.url, token);
        return {
            service, parent: `services/${service}`, dir,
            write: (resources) => fs.writeFileSync(path.join(dir, "Pulumi.yaml"), yaml.program(label, { resources })),
        };
    }

    const grants = (parent: string) => listGrants(emu.getPolicy(parent));
    const up = (dir: string, ...args: string[]) => sb.pulumi(["up", "--yes", "--skip-preview", ...args], dir);
    /** This package's resources in the stack's state (`pulumi stack export`). */
    async function stateResources(dir: string): Promise<{ type: string; urn: string }[]> {
        const deployment = JSON.parse((await sb.pulumi(["stack", "export"], dir)).stdout).deployment;
        return ((deployment.resources ?? []) as { type: string; urn: string }[]).filter((r) => r.type.startsWith("cloud:endpoints"));
    }
    const stateTypes = async (dir: string) => (await stateResources(dir)).map((r) => r.type);
    const { member, binding, policy } = yaml;

    it("replaceOnChanges on a Binding: the replacement ends with exactly the declared members", async () => {
        const p = await fresh("rocbinding");
        const opts = { options: "      replaceOnChanges: [members]\n" };
        p.write(binding("b", p.service, ["user:a@example.com", "user:b@example.com"], opts));
        await up(p.dir);
        p.write(binding("b", p.service, ["user:a@example.com", "user:c@example.com"], opts));
        const r = await up(p.dir);
        expect(r.stdout).to.match(/\+-1 replaced/);
        expect(grants(p.parent)).to.deep.equal([`${ROLE} user:a@example.com`, `${ROLE} user:c@example.com`]);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], p.dir);
    });

    it("replaceOnChanges on a Policy: the new policy stays, never the empty one of the old policy's delete", async () => {
        const p = await fresh("rocpolicy");
        const opts = { options: "      replaceOnChanges: [policyData]\n" };
        p.write(policy("p", p.service, { bindings: [{ role: ROLE, members: ["user:a@example.com"] }] }, opts));
        await up(p.dir);
        p.write(policy("p", p.service, { bindings: [{ role: ROLE, members: ["user:b@example.com"] }] }, opts));
        const r = await up(p.dir);
        expect(r.stdout).to.match(/\+-1 replaced/);
        expect(grants(p.parent)).to.deep.equal([`${ROLE} user:b@example.com`]);
    });

    it("replaceOnChanges on a Member, and `pulumi up --replace` on a Member, a Binding and a Policy, keep every grant", async () => {
        const p = await fresh("replace");
        const other = await fresh("replacepolicy");
        const text = (
            member("m", p.service, "user:m@example.com", { options: "      replaceOnChanges: [member]\n" }) +
            binding("b", p.service, ["user:b@example.com"], { role: "roles/servicemanagement.admin" }) +
            policy("p", other.service, { bindings: [{ role: ROLE, members: ["user:p@example.com"] }] }));
        p.write(text);
        await up(p.dir);
        const before = grants(p.parent);
        expect(before).to.have.length(2);
        p.write(text.replace("user:m@example.com", "user:M2@example.com"));
        await up(p.dir);
        expect(grants(p.parent)).to.deep.equal(["roles/servicemanagement.admin user:b@example.com", `${ROLE} user:m2@example.com`]);
        const urns = (await stateResources(p.dir)).map((r) => r.urn);
        expect(urns).to.have.length(3);
        const r = await up(p.dir, ...urns.flatMap((u: string) => ["--replace", u]));
        expect(r.stdout).to.match(/\+-3 replaced/);
        expect(grants(p.parent)).to.deep.equal(["roles/servicemanagement.admin user:b@example.com", `${ROLE} user:m2@example.com`]);
        expect(grants(other.parent)).to.deep.equal([`${ROLE} user:p@example.com`]);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], p.dir);
    });

    it("refresh against a wrong endpoint fails with an error naming it, and the stack keeps every resource", async () => {
        const p = await fresh("endpoint");
        p.write(["cat", "dog", "emu"].map((n) => member(n, p.service, `user:${n}@example.com`)).join(""));
        await up(p.dir);
        // A typo in the endpoint: the next `up` fails on its one new grant, naming the endpoint, but the engine
        // keeps the provider's new configuration, which `pulumi refresh` then uses.
        const wrong = emu.url.replace(/v1\/$/, "");
        await sb.pulumi(["config", "set", "cloud:serviceManagementCustomEndpoint", wrong], p.dir);
        p.write(["cat", "dog", "emu", "fox"].map((n) => member(n, p.service, `user:${n}@example.com`)).join(""));
        const u = await sb.tryPulumi(["up", "--yes", "--skip-preview"], p.dir);
        expect(u.code).not.to.equal(0);
        expect(u.stdout).to.contain(wrong).and.contain("cloud:serviceManagementCustomEndpoint").and.not.contain("check serviceName");
        const preview = await sb.tryPulumi(["refresh", "--preview-only"], p.dir);
        expect(preview.stdout).to.contain(wrong).and.not.match(/delete/);
        const r: RunResult = await sb.tryPulumi(["refresh", "--yes"], p.dir);
        expect(r.code).not.to.equal(0);
        expect(r.stdout).to.contain(wrong).and.contain("cloud:serviceManagementCustomEndpoint").and.contain("ending in /v1/");
        expect(r.stdout).not.to.match(/deleted/);
        expect(await stateTypes(p.dir)).to.have.length(3);
        expect(grants(p.parent)).to.have.length(3);
        await sb.pulumi(["config", "set", "cloud:serviceManagementCustomEndpoint", emu.url], p.dir);
        await up(p.dir);
        expect(grants(p.parent)).to.have.length(4);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], p.dir);
    });

    it("a Member renamed without an alias keeps its grant, says so, and survives the next refresh", async () => {
        const p = await fresh("rename");
        p.write(member("cat", p.service, "user:pet@example.com"));
        await up(p.dir);
        p.write(member("dog", p.service, "user:pet@example.com"));
        const r = await up(p.dir);
        expect(r.stdout).to.match(/ServiceIamMember \(cat\)[\s\S]*left a grant[\s\S]*ServiceIamMember::dog/);
        expect(grants(p.parent)).to.deep.equal([`${ROLE} user:pet@example.com`]);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], p.dir);
        expect(await stateTypes(p.dir)).to.deep.equal([MEMBER]);
    });

    it("two Members for one grant in different letter case: each is warned; removing one keeps the other's grant", async () => {
        const p = await fresh("dup");
        p.write(member("lower", p.service, "user:dup@example.com") + member("upper", p.service, "user:DUP@example.com"));
        const r = await up(p.dir);
        expect(r.stdout).to.match(/ServiceIamMember \(lower\):\s*\n\s*warning: .*ServiceIamMember::upper/);
        expect(r.stdout).to.match(/ServiceIamMember \(upper\):\s*\n\s*warning: .*ServiceIamMember::lower/);
        p.write(member("upper", p.service, "user:DUP@example.com"));
        await up(p.dir);
        expect(grants(p.parent)).to.deep.equal([`${ROLE} user:dup@example.com`]);
        await sb.pulumi(["refresh", "--yes", "--expect-no-changes"], p.dir);
    });

    it("a Binding and a Member on one role: both resources are warned of the flip-flop", async () => {
        const p = await fresh("flip");
        p.write(binding("team", p.service, ["user:a@example.com"]) + member("extra", p.service, "user:b@example.com"));
        const r = await up(p.dir);
        expect(r.stdout).to.match(/ServiceIamBinding \(team\):\s*\n\s*warning: .*ServiceIamMember::extra.*flip-flops/);
        expect(r.stdout).to.match(/ServiceIamMember \(extra\):\s*\n\s*warning: .*ServiceIamBinding::team/);
    });

    it("the preview lists the grants a Policy adds and removes, and refresh the members a Binding gained and lost", async () => {
        const p = await fresh("preview");
        const admin = { role: "roles/servicemanagement.admin", members: ["serviceAccount:deployer@example-project.iam.gserviceaccount.com"] };
        const consumers = { role: ROLE, members: ["group:readers@example.com", "user:alice@example.com"] };
        const team = binding("team", p.service, ["user:a@example.com", "user:b@example.com", "user:c@example.com"],
            { role: "roles/servicemanagement.serviceController" });
        const other = await fresh("previewpolicy");
        p.write(policy("p", other.service, { bindings: [admin, consumers] }) + team);
        await up(p.dir);
        p.write(policy("p", other.service, { bindings: [{ role: "roles/editor", members: ["user:bob@example.com"] }, admin, consumers] }) + team);
        const r = await sb.pulumi(["preview", "--diff"], p.dir);
        expect(r.stdout).to.match(/~ policyData: \{\s*\n\s*\+ roles\/editor user:bob@example\.com/);
        expect(r.stdout).not.to.match(/=> "roles\/editor"/);
        expect(r.stdout).not.to.match(/role\s*:/);

        emu.setPolicy(p.parent, { bindings: [{ role: "roles/servicemanagement.serviceController",
            members: ["user:a@example.com", "user:c@example.com", "user:d@example.com"] }] });
        const refresh = await sb.tryPulumi(["refresh", "--preview-only", "--diff"], p.dir);
        expect(refresh.stdout).to.match(/~ members: \[\s*\n\s*- \[1\]: "user:b@example\.com"\s*\n\s*\+ \[2\]: "user:d@example\.com"/);
    });

    /** Starts `pulumi up` of 100 Members at 100 ms of API latency; resolves once a few writes have landed. */
    async function upUnderway(p: { service: string; parent: string; dir: string; write(resources: string): void }): Promise<ChildProcess> {
        p.write(Array.from({ length: 100 }, (_, i) => member(`m${i}`, p.service, `user:m${i}@example.com`)).join(""));
        emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
        const started = spawn(path.join(sb.bin, "pulumi"), ["up", "--yes", "--skip-preview", "--non-interactive", "--color", "never"],
            { cwd: p.dir, env: sb.env, stdio: ["ignore", "pipe", "pipe"] });
        underway = started;
        let out = "";
        started.stdout!.on("data", (d: Buffer) => (out += d.toString()));
        started.stderr!.on("data", (d: Buffer) => (out += d.toString()));
        started.once("exit", () => sb.transcript.push(out));
        await waitFor("20 grants written by `pulumi up`", () => grants(p.parent).length >= 20, 15_000);
        return started;
    }

    for (const next of ["up", "destroy"] as const) {
        it(`kill -9 of the plugin mid-up, then \`pulumi ${next}\`: no grant is left that the user was not told about`, async () => {
            const p = await fresh(`crash${next}`);
            const cli = await upUnderway(p);
            // The worst moment: a write has landed, and its answer is on its way when the plugin dies.
            const landed = grants(p.parent).length;
            emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 1, delayMs: 10_000 } });
            await waitFor("another write landed", () => grants(p.parent).length !== landed, 4000, 10);
            // Every instance of the plugin (the YAML host runs one too, for the schema).
            const plugins = pidsWith(path.join(sb.pluginDir, "pulumi-resource-cloud"));
            expect(plugins, "the installed plugin is running").to.have.length.greaterThan(0);
            for (const pid of plugins) process.kill(pid, "SIGKILL");
            await new Promise((r) => cli.once("exit", r));
            emu.setFaults({ latencyMs: 0 });
            const written = grants(p.parent).length;
            const recorded = (await stateTypes(p.dir)).length;
            process.stdout.write(`      after kill -9: ${written} grants in IAM, ${recorded} in state\n`);

            expect(written, "grants written but not recorded").to.be.greaterThan(recorded);
            emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });

            const r = await sb.pulumi([next, "--yes", "--skip-preview"], p.dir);
            if (next === "up") {
                // Named as the up starts; the program declares them all: the up's Creates record what the dead plugin
                // wrote, and the next run says nothing.
                expect(r.stdout).to.contain(JOURNAL_SAYS.unanswered);
                const again = await sb.pulumi(["preview"], p.dir);
                expect(again.stdout).not.to.contain(JOURNAL_SAYS.unanswered);
                expect(grants(p.parent)).to.have.length(100);
                expect(await stateTypes(p.dir)).to.have.length(100);
                return;
            }
            // destroy removes what Pulumi holds, and names each grant no state holds, never removing it on a guess.
            expect(await stateTypes(p.dir)).to.deep.equal([]);
            const left = grants(p.parent);
            expect(left.length, "what the dead plugin wrote and nothing recorded").to.equal(written - recorded);
            for (const g of left) expect(r.stdout, `${g} left and never named`).to.contain(`${g.split(" ")[1]}`);
            // The user runs the commands the note gives: an import puts each grant in the stack, a destroy removes it.
            const imports = [...r.stdout.matchAll(/`pulumi (import --protect=false [^`]+)`/g)].map((m) => m[1]);
            expect(imports).to.have.length(left.length);
            for (const command of imports) {
                const [, , type, name, id] = /^(import --protect=false) (\S+) (\S+) '([^']+)'$/.exec(command) ?? [];
                await sb.pulumi(["import", "--protect=false", "--yes", "--skip-preview", type, name, id], p.dir);
            }
            const again = await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
            expect(again.stdout).not.to.contain(JOURNAL_SAYS.unanswered);
            expect(grants(p.parent)).to.deep.equal([]);
        });
    }

    it("kill -9 of the CLI mid-up: no plugin process is left 10 s later", async () => {
        const p = await fresh("clikill");
        const cli = await upUnderway(p);
        const descendants = processes().filter((x) => x.ppid === cli.pid).map((x) => x.pid);
        const plugins = () => pidsWith(path.join(sb.pluginDir, "pulumi-resource-cloud"));
        expect(plugins()).to.have.length.greaterThan(0);
        cli.kill("SIGKILL");
        // Each plugin exits once its engine's address stops answering: checked every 100 ms, for up to 10 s.
        await waitFor("every plugin process gone", () => plugins().length === 0, 10_000, 100).catch(() => undefined);
        emu.setFaults({ latencyMs: 0 });
        const left = plugins();
        // The YAML host (Pulumi's, not ours) may still run: it was started under the CLI this test started.
        for (const pid of [...descendants, ...left]) {
            try {
                process.kill(pid, "SIGKILL");
            } catch {
                // already gone
            }
        }
        expect(left, "plugin processes still running").to.deep.equal([]);
    });
});
