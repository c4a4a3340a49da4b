// The crash journal travels with the stack: runner A (its own PULUMI_HOME, `pulumi login`) is killed, its whole
// process group, after Google applied its writes and before any answer; runner B starts with a fresh, empty
// PULUMI_HOME (the backend through PULUMI_BACKEND_URL) and must find what A left — for a `gs://` backend (a GCS
// emulator), a shared `file://` folder, and a backend with no bucket beside a journal location the user names. The
// real CLI and YAML host, the plugin installed from its tarball, against the IAM emulator. The storage's faults:
// each warned once, with the location and the reason, and the deployment done with the journal kept locally.

import { expect } from "chai";
import { ChildProcess, spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { faultyGcs, FAKE_GCS, FakeGcs, startFakeGcs } from "../support/gcs";
import { JOURNAL_SAYS } from "../support/machine";
import { listGrants, ROLE } from "../support/plugin";
import { pidsWith, PulumiSandbox, skipUnless, toolsBin, toolsMissing, waitFor, yaml } from "./support";

const JOURNAL_ENV = "PULUMI_CLOUD_JOURNAL_URL";

describe("e2e: the crash journal travels with the stack (a fresh runner after a crash)", function () {
    this.timeout(600_000);
    this.slow(60_000);

    const token = `e2e-travels-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let gcs: FakeGcs;
    let serial = 0;
    const sandboxes: PulumiSandbox[] = [];
    const started: ChildProcess[] = [];

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml", FAKE_GCS]));
        emu = await startEmulator({ accessTokens: [token] });
        gcs = await startFakeGcs(toolsBin());
    });
    after(async () => {
        await emu?.close();
        await gcs?.close();
        for (const s of sandboxes) s.dispose();
    });
    afterEach(() => {
        for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) process.kill(-c.pid!, "SIGKILL");
        emu?.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
    });

    type Kind = "gs://" | "file://" | "file:// state, journal in gs://";

    /** Two runners of one stack: A logged in to the backend, B a fresh home with PULUMI_BACKEND_URL. */
    async function runners(kind: Kind, label: string) {
        serial++;
        const a = await PulumiSandbox.create(`travels-a${serial}`);
        const b = await PulumiSandbox.create(`travels-b${serial}`);
        sandboxes.push(a, b);
        let url: string;
        const env: NodeJS.ProcessEnv = {};
        if (kind === "file://") {
            url = `file://${path.join(a.dir, "shared-state")}`;
        } else {
            const bucket = `travels-${serial}`;
            await gcs.createBucket(bucket);
            Object.assign(env, { STORAGE_EMULATOR_HOST: gcs.host, GOOGLE_OAUTH_ACCESS_TOKEN: "any-token-the-emulator-takes" });
            if (kind === "gs://") url = `gs://${bucket}`;
            else {
                url = `file://${path.join(a.dir, "shared-state")}`;
                env[JOURNAL_ENV] = `gs://${bucket}/journal`;
            }
        }
        if (url.startsWith("file://")) fs.mkdirSync(url.slice("file://".length), { recursive: true });
        delete a.env.PULUMI_BACKEND_URL;
        Object.assign(a.env, env);
        Object.assign(b.env, env, { PULUMI_BACKEND_URL: url });
        await a.pulumi(["login", url], a.dir);

        const service = `t${serial}-${label}.endpoints.example-project.cloud.goog`;
        emu.createService(service, "example-project");
        const name = `${label}${serial}`;
        const dir = a.project(name, { "Pulumi.yaml": yaml.program(name, { resources: "" }) });
        await a.initStack(dir, emu.url, token);
        // The run's Creates (or Deletes) of one policy in one write: all of them land before any is answered.
        await a.pulumi(["config", "set", "--path", "cloud:batching.sendAfter", "3s"], dir);
        await b.pulumi(["stack", "select", "dev"], dir); // what a fresh runner's job does first
        const members = (n: number) => Array.from({ length: n }, (_, i) => yaml.member(`m${i}`, service, `user:m${i}@example.com`)).join("");
        return {
            a, b, dir, parent: `services/${service}`,
            declare: (n: number) => fs.writeFileSync(path.join(dir, "Pulumi.yaml"), yaml.program(name, { resources: members(n) })),
        };
    }
    const grants = (parent: string) => listGrants(emu.getPolicy(parent));

    /** `pulumi up` on runner `sb`, killed (its whole process group) once IAM holds `count` grants and before any answer. */
    async function killedUp(sb: PulumiSandbox, dir: string, parent: string, count: number): Promise<void> {
        emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 10, delayMs: 60_000 } });
        const child = spawn(path.join(sb.bin, "pulumi"), ["up", "--yes", "--skip-preview", "--non-interactive", "--color", "never"],
            { cwd: dir, env: sb.env, stdio: "ignore", detached: true });
        started.push(child);
        const exited = new Promise((resolve) => child.once("exit", resolve));
        await waitFor(`${count} grants in IAM`, () => grants(parent).length === count, 60_000, 10);
        process.kill(-child.pid!, "SIGKILL");
        // The plugins run in process groups of their own: a lost runner takes them too.
        for (const pid of pidsWith(sb.dir)) process.kill(pid, "SIGKILL");
        await exited;
        await waitFor("runner A's processes gone", () => pidsWith(sb.dir).length === 0, 10_000);
        emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
    }

    /**
     * Runner A deploys `before` Members, then its up to `during` is cut off once IAM holds them all; the program is
     * reverted to `before`, and runner B lifts the lock as Pulumi's message says (`pulumi cancel`).
     */
    async function cutOff(kind: Kind, label: string, before: number, during: number) {
        const r = await runners(kind, label);
        r.declare(before);
        await r.a.pulumi(["up", "--yes", "--skip-preview"], r.dir);
        r.declare(during);
        await killedUp(r.a, r.dir, r.parent, during);
        r.declare(before);
        await r.b.tryPulumi(["cancel", "--yes"], r.dir);
        return r;
    }

    /** Each `pulumi import` command a text gives, as arguments. */
    const importCommands = (text: string): string[][] =>
        [...new Set([...text.matchAll(/`pulumi import --protect=false (\S+) (\S+) '([^']+)'`/g)].map((m) => JSON.stringify([m[1], m[2], m[3]])))]
            .map((s) => ["import", "--protect=false", ...(JSON.parse(s) as string[]), "--yes"]);

    for (const kind of ["gs://", "file://", "file:// state, journal in gs://"] as const) {
        describe(kind, () => {
            it("3 Members added, runner A killed mid-up, the program reverted: runner B's `cancel`, `refresh --clear-pending-creates`, `up` names all 3 with their import commands, which clear them", async () => {
                const r = await cutOff(kind, "added", 1, 4);
                await r.b.pulumi(["refresh", "--yes", "--skip-preview", "--clear-pending-creates"], r.dir);
                const up = await r.b.pulumi(["up", "--yes"], r.dir);
                const orphans = grants(r.parent).filter((g) => g !== `${ROLE} user:m0@example.com`);
                expect(orphans).to.have.length(3);
                for (const g of orphans) expect(up.stdout, `${g} left in IAM and not named by runner B's up`).to.contain(g.split(" ")[1]);
                const commands = importCommands(up.stdout);
                expect(commands, "one import command per grant").to.have.length(3);
                for (const c of commands) await r.b.pulumi(c, r.dir);
                const after = await r.b.pulumi(["up", "--yes"], r.dir);
                expect(grants(r.parent)).to.deep.equal([`${ROLE} user:m0@example.com`]);
                expect(after.stdout).not.to.contain(JOURNAL_SAYS.unanswered);
                expect(after.stdout).not.to.contain(JOURNAL_SAYS.unusable);
            });

            it("3 Members removed, runner A killed mid-up, the program reverted: runner B's `cancel`, `up` puts all 3 back", async () => {
                const r = await cutOff(kind, "removed", 4, 1);
                const up = await r.b.pulumi(["up", "--yes"], r.dir);
                expect(grants(r.parent), up.stdout).to.have.length(4);
                expect(up.stdout).not.to.contain(JOURNAL_SAYS.unusable);
                const again = await r.b.pulumi(["up", "--yes", "--expect-no-changes"], r.dir);
                expect(again.stdout).not.to.contain(JOURNAL_SAYS.removed);
            });
        });
    }

    describe("the journal's storage fails: warned once with the location and the reason, the deployment done, the journal kept locally", () => {
        // The missing bucket is the emulator's own answer; the others a loopback server's, to every request.
        const faults = [
            { what: "a missing bucket", status: undefined, reason: "not found (does the bucket exist?)" },
            { what: "a 403", status: 403, reason: "permission denied" },
            { what: "429s throughout", status: 429, reason: "HTTP 429" },
            { what: "503s throughout", status: 503, reason: "HTTP 503" },
        ];
        for (const f of faults) {
            it(f.what, async () => {
                const proxy = f.status === undefined ? undefined : await faultyGcs(f.status);
                try {
                    serial++;
                    const sb = await PulumiSandbox.create(`travels-fault${serial}`);
                    sandboxes.push(sb);
                    Object.assign(sb.env, { STORAGE_EMULATOR_HOST: proxy?.host ?? gcs.host, GOOGLE_OAUTH_ACCESS_TOKEN: "any", [JOURNAL_ENV]: "gs://journal-bucket/ci" });
                    const service = `f${serial}.endpoints.example-project.cloud.goog`;
                    emu.createService(service, "example-project");
                    const dir = sb.project(`fault${serial}`, { "Pulumi.yaml": yaml.program(`fault${serial}`, { resources: yaml.member("m0", service, "user:m0@example.com") }) });
                    await sb.initStack(dir, emu.url, token);
                    const up = await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
                    expect(grants(`services/${service}`)).to.have.length(1);
                    // Once by the plugin (Pulumi shows it as it comes, then again in its summary of diagnostics).
                    const summary = up.stdout.slice(up.stdout.indexOf("Diagnostics:"));
                    expect(summary.split(JOURNAL_SAYS.unusable).length - 1, up.stdout).to.equal(1);
                    expect(up.stdout).to.contain("gs://journal-bucket/ci/.pulumi/plugins-state/pulumi-resource-cloud/stacks/");
                    expect(up.stdout).to.contain(f.reason);
                    expect(up.stdout).to.contain(path.join(sb.env.PULUMI_HOME!, "plugins-state"));
                    if (proxy) expect(proxy.requests()).to.be.greaterThan(0);
                    const destroy = await sb.pulumi(["destroy", "--yes", "--skip-preview"], dir);
                    expect(grants(`services/${service}`)).to.deep.equal([]);
                    expect(destroy.stdout).to.contain(JOURNAL_SAYS.unusable);
                } finally {
                    await proxy?.close();
                }
            });
        }
    });
});
