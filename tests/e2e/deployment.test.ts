// One deployment, one truth, through the real engine: the `pulumi` CLI and the YAML host with the plugin installed
// from its tarball, against the emulator. Several plugin processes per run (an explicit provider beside the
// default one), a preview beside an update, crashes of one plugin process and of the CLI, and a home the plugin
// cannot write. The same rules over the protocol alone: tests/deployment/deployment.test.ts.

import { expect } from "chai";
import { ChildProcess, spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { JOURNAL_SAYS, skipWithoutMountNamespace, withReadOnly } from "../support/machine";
import { listGrants, ROLE } from "../support/plugin";
import { recordWrites } from "../support/proxy";
import { PulumiSandbox, skipUnless, sleep, toolsMissing, waitFor, yaml } from "./support";


const { unanswered: UNANSWERED, unusable: UNUSABLE, removed: REMOVED, removesUnrecorded: REMOVES } = JOURNAL_SAYS;

describe("e2e: one deployment, one truth (real CLI and YAML host)", function () {
    this.timeout(300_000);
    this.slow(30_000);

    const token = `e2e-deployment-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    let serial = 0;
    const started: ChildProcess[] = [];

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        sb = await PulumiSandbox.create("deployment");
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });
    afterEach(() => {
        for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
        emu?.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
    });

    async function fresh(label: string) {
        serial++;
        const service = `d${serial}-${label}.endpoints.example-project.cloud.goog`;
        emu.createService(service, "example-project");
        const dir = sb.project(`${label}-${serial}`, { "Pulumi.yaml": yaml.program(label, { resources: "" }) });
        await sb.initStack(dir, emu.url, token);
        return {
            service, parent: `services/${service}`, dir,
            write: (resources: string) => fs.writeFileSync(path.join(dir, "Pulumi.yaml"), yaml.program(label, { resources })),
        };
    }
    const grants = (parent: string) => listGrants(emu.getPolicy(parent));
    async function stateUrns(dir: string): Promise<string[]> {
        const deployment = JSON.parse((await sb.pulumi(["stack", "export"], dir)).stdout).deployment;
        return ((deployment.resources ?? []) as { type: string; urn: string }[]).filter((r) => r.type.startsWith("cloud:endpoints")).map((r) => r.urn);
    }
    /** `pulumi ARGS` started in the background (its own process group, as a terminal's job), with its output kept. */
    function background(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; output: () => string; exited: Promise<void> } {
        const child = spawn(path.join(sb.bin, "pulumi"), [...args, "--non-interactive", "--color", "never"],
            { cwd: dir, env: { ...sb.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
        started.push(child);
        let out = "";
        child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        void exited.then(() => sb.transcript.push(out));
        return { child, output: () => out, exited };
    }

    /**
     * One member through the default provider, first (its process hears of the stack first, and so takes over what
     * dead processes left), then members m0…m{n-1} through the explicit provider `prov` (pointed at `endpoint`).
     */
    const program = (service: string, endpoint: string, n: number) =>
        yaml.member("byDefault", service, "user:default@example.com") +
        yaml.resource("prov", "pulumi:providers:cloud", { serviceManagementCustomEndpoint: endpoint, accessToken: token }) +
        Array.from({ length: n }, (_, i) => yaml.member(`m${i}`, service, `user:m${i}@example.com`, { options: "      provider: ${prov}\n" })).join("");

    /**
     * The worst moment, brought about: a write has landed and its answer is on its way when the explicit provider's
     * plugin (the one process whose writes reach `proxy`) is killed.
     */
    async function killWriterAfterALandedWrite(parent: string, proxy: { writers: Set<number> }): Promise<void> {
        const landed = grants(parent).length;
        emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 1, delayMs: 10_000 } });
        await waitFor("another write landed", () => grants(parent).length !== landed, 10_000, 10);
        expect(proxy.writers.size, "the explicit provider's plugin is the one writer").to.equal(1);
        process.kill([...proxy.writers][0], "SIGKILL");
    }

    /**
     * kill -9 of the CLI with writes under way (their writes land, their answers find no engine); the plugins end by
     * themselves once their engine is gone, their writes finished; the user lifts the lock, as Pulumi's message says.
     */
    async function killCliMidWrites(run: { child: ChildProcess; exited: Promise<void> }, dir: string): Promise<void> {
        emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 3, delayMs: 1500 } });
        await sleep(300);
        run.child.kill("SIGKILL");
        await run.exited;
        await sleep(2000);
        emu.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
        await sb.pulumi(["cancel", "--yes"], dir);
    }

    it("kill -9 of an explicit provider's plugin mid-write, then up, refresh and destroy: the up records what it wrote, nothing is said or removed on a guess", async () => {
        const p = await fresh("explicit");
        const proxy = await recordWrites(emu.url, { senders: true });
        try {
            p.write(program(p.service, proxy.url, 30));
            emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
            const first = background(p.dir, ["up", "--yes", "--skip-preview"]);
            await waitFor("10 grants written", () => grants(p.parent).length >= 10, 60_000);
            await killWriterAfterALandedWrite(p.parent, proxy);
            await first.exited;
            emu.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
            expect(grants(p.parent).length, "grants written but not recorded").to.be.greaterThan((await stateUrns(p.dir)).length);

            // Named as the up starts; the program still declares every grant: the up's Creates find them and the
            // engine records them. Nothing is removed, and later runs say nothing of them.
            const up = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
            expect(up.stdout).to.contain(UNANSWERED);
            expect(up.stdout).not.to.contain("removed");
            expect(grants(p.parent)).to.have.length(31);
            expect(await stateUrns(p.dir)).to.have.length(31);

            const refresh = await sb.pulumi(["refresh", "--yes", "--skip-preview"], p.dir);
            expect(refresh.stdout).not.to.contain(UNANSWERED);
            const destroy = await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
            expect(destroy.stdout).not.to.contain(UNANSWERED);
            expect(grants(p.parent)).to.deep.equal([]);
        } finally {
            await proxy.close();
        }
    });

    it("`pulumi preview` beside `pulumi up` of one stack, the up's plugin killed mid-write: the next up records every grant, destroy leaves none", async () => {
        const p = await fresh("beside");
        const proxy = await recordWrites(emu.url, { senders: true });
        try {
            p.write(program(p.service, proxy.url, 30));
            emu.setFaults({ latencyMs: 100, minLatencyMs: 100 });
            const up = background(p.dir, ["up", "--yes", "--skip-preview"]);
            await waitFor("5 grants written", () => grants(p.parent).length >= 5, 60_000);
            const preview = background(p.dir, ["preview"]);
            // Only the up writes: the preview's plugins send no setIamPolicy.
            await killWriterAfterALandedWrite(p.parent, proxy);
            await Promise.all([up.exited, preview.exited]);
            emu.setFaults({ latencyMs: 0, minLatencyMs: 0, slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });

            await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
            expect(grants(p.parent)).to.have.length(31);
            expect(await stateUrns(p.dir)).to.have.length(31);
            const destroy = await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
            expect(destroy.stdout).not.to.contain("could not remove");
            expect(grants(p.parent)).to.deep.equal([]);
        } finally {
            await proxy.close();
        }
    });

    it("a read-only plugins-state beside the stack's state (a file:// backend): the warning names the folder and the reason, the journal is kept in PULUMI_HOME, and the deployment is done", async function () {
        skipWithoutMountNamespace(this);
        const p = await fresh("readonly");
        p.write(yaml.member("a", p.service, "user:a@example.com"));
        // The CLI itself writes to the backend's folder (its stacks, locks): the plugin's own folder there is made read-only.
        const folder = path.join(sb.env.PULUMI_BACKEND_URL!.slice("file://".length), ".pulumi", "plugins-state");
        fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
        const [cmd, ...args] = withReadOnly(folder, [path.join(sb.bin, "pulumi"), "up", "--yes", "--skip-preview", "--non-interactive", "--color", "never"]);
        const r = await sb.exec(cmd, args, p.dir);
        expect(r.code, r.stdout + r.stderr).to.equal(0);
        expect(r.stdout).to.contain(UNUSABLE).and.contain(folder).and.contain("EROFS");
        expect(r.stdout).to.contain(`It keeps it in ${path.join(sb.env.PULUMI_HOME!, "plugins-state")}`);
        expect(grants(p.parent)).to.deep.equal([`roles/servicemanagement.serviceConsumer user:a@example.com`]);
    });

    /** `pulumi up` of Members m0…m{n-1} at 200 ms of API latency, in the background, once `written` grants are in IAM. */
    async function upUnderWay(p: Awaited<ReturnType<typeof fresh>>, n: number, written: number,
        env: NodeJS.ProcessEnv = {}): Promise<ReturnType<typeof background>> {
        p.write(Array.from({ length: n }, (_, i) => yaml.member(`m${i}`, p.service, `user:m${i}@example.com`)).join(""));
        emu.setFaults({ latencyMs: 200, minLatencyMs: 200 });
        const up = background(p.dir, ["up", "--yes", "--skip-preview"], env);
        await waitFor(`${written} grants written`, () => grants(p.parent).length >= written, 60_000);
        return up;
    }

    /**
     * Ctrl-C twice, in a terminal: SIGINT to its whole foreground job (the CLI, its language host and plugins); the
     * second makes the CLI exit at once.
     */
    async function ctrlCTwice(up: { child: ChildProcess; exited: Promise<void> }): Promise<void> {
        process.kill(-up.child.pid!, "SIGINT");
        await sleep(20);
        process.kill(-up.child.pid!, "SIGINT");
        await up.exited;
        await sleep(2000);
        emu.setFaults({ latencyMs: 0, minLatencyMs: 0 });
    }

    it("Ctrl-C once mid-up: the engine records the answers it waited for; the next up names nothing and records the rest", async () => {
        const p = await fresh("ctrlconce");
        const up = await upUnderWay(p, 40, 10);
        // Creates are in flight (their writes sent): the engine's Cancel reaches the plugin before their answers.
        process.kill(-up.child.pid!, "SIGINT");
        await up.exited;
        emu.setFaults({ latencyMs: 0, minLatencyMs: 0 });
        expect(up.output()).to.contain("canceled");
        const next = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        expect(next.stdout).not.to.contain(UNANSWERED);
        expect(grants(p.parent)).to.have.length(40);
        expect(await stateUrns(p.dir)).to.have.length(40);
        const destroy = await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
        expect(destroy.stdout).not.to.contain(UNANSWERED);
        expect(grants(p.parent)).to.deep.equal([]);
    });

    it("a Binding's update cut off after its write, the program reverted, `pulumi preview --refresh`, then `pulumi up`: the member the program does not declare is removed, and said", async () => {
        const p = await fresh("previewrefresh");
        const proxy = await recordWrites(emu.url, { senders: true });
        try {
            const binding = (members: string[]) => yaml.resource("prov", "pulumi:providers:cloud", { serviceManagementCustomEndpoint: proxy.url, accessToken: token }) +
                yaml.binding("b", p.service, members, { options: "      provider: ${prov}\n" });
            p.write(binding(["user:a@example.com"]));
            await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
            proxy.writers.clear();
            p.write(binding(["user:a@example.com", "user:x@example.com"]));
            const cut = background(p.dir, ["up", "--yes", "--skip-preview"]);
            await killWriterAfterALandedWrite(p.parent, proxy);
            await cut.exited;
            emu.setFaults({ slowAnswers: { verb: "setIamPolicy", count: 0, delayMs: 0 } });
            expect(grants(p.parent)).to.have.length(2);
            // The user reverts the program; CI previews with a refresh; then the ups.
            p.write(binding(["user:a@example.com"]));
            await sb.pulumi(["preview", "--refresh"], p.dir);
            const up = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
            expect(up.stdout).to.contain(REMOVES).and.contain("user:x@example.com");
            expect(grants(p.parent)).to.deep.equal([`roles/servicemanagement.serviceConsumer user:a@example.com`]);
            const again = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
            expect(again.stdout).not.to.contain("x@example.com");
        } finally {
            await proxy.close();
        }
    });

    it("kill -9 of the CLI mid-destroy, then Pulumi's recovery (cancel, refresh, destroy), then ups of another program: nothing is said of the destroyed grants", async () => {
        const p = await fresh("destroykill");
        p.write(Array.from({ length: 30 }, (_, i) => yaml.member(`m${i}`, p.service, `user:m${i}@example.com`)).join(""));
        await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        emu.setFaults({ latencyMs: 200, minLatencyMs: 200 });
        const destroy = background(p.dir, ["destroy", "--yes", "--skip-preview"]);
        await waitFor("10 grants removed", () => grants(p.parent).length <= 20, 60_000);
        await killCliMidWrites(destroy, p.dir);
        await sb.pulumi(["refresh", "--yes", "--skip-preview"], p.dir);
        await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
        expect(grants(p.parent)).to.deep.equal([]);
        expect(await stateUrns(p.dir)).to.deep.equal([]);
        p.write(yaml.member("other", p.service, "user:other@example.com"));
        const said: string[] = [];
        for (let i = 0; i < 2; i++) said.push((await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir)).stdout);
        expect(said.join("\n")).not.to.contain(REMOVED).and.not.to.contain(UNANSWERED);
    });

    it("two Members of one grant, `pulumi destroy --target` of one, then its replacement deleted first (deleteBeforeReplace): the other's grant stays throughout, nothing is said", async () => {
        const p = await fresh("twomembers");
        const program = (aWho: string) => yaml.member("a", p.service, aWho, { options: "      deleteBeforeReplace: true\n" }) + yaml.member("b", p.service, "user:g@example.com");
        p.write(program("user:g@example.com"));
        await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        const [urnA] = (await stateUrns(p.dir)).filter((u) => u.endsWith("::a"));
        // No Check in a destroy: only what the stack held tells that b still declares the grant.
        const destroyed = await sb.pulumi(["destroy", "--yes", "--skip-preview", "--target", urnA], p.dir);
        expect(grants(p.parent), "b's grant stays").to.deep.equal(["roles/servicemanagement.serviceConsumer user:g@example.com"]);
        expect(destroyed.stdout).to.contain("left a grant").and.to.contain("ServiceIamMember::b");
        const again = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        expect(again.stdout).not.to.contain("crash journal");
        // a's member changes: its old self is deleted before b is checked (a comes first in the program).
        p.write(program("user:h@example.com"));
        const up = await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        expect(up.stdout).not.to.contain("crash journal");
        expect(grants(p.parent)).to.deep.equal(["roles/servicemanagement.serviceConsumer user:g@example.com", "roles/servicemanagement.serviceConsumer user:h@example.com"]);
        await sb.pulumi(["preview", "--expect-no-changes"], p.dir);
    });

    it("Ctrl-C twice mid-up, the program reverted, `pulumi preview`, then `pulumi up` with its preview: neither names a grant the state holds; the up removes them and names what it leaves", async () => {
        const p = await fresh("ctrlcrevert");
        await ctrlCTwice(await upUnderWay(p, 60, 20));
        // The engine recorded the Creates answered before the Ctrl-C; the plugin cannot know which it recorded.
        const held = (await stateUrns(p.dir)).map((u) => u.split("::").pop()!);
        expect(held.length, "Creates recorded before the Ctrl-C").to.be.greaterThan(1);
        const namedIn = (out: string) => [...out.matchAll(/(m\d+)@example\.com on services\/\S+ was written for/g)].map((m) => m[1]);
        // The user reverts the program to its first Member and looks: the preview sends none of the Members it would
        // delete, so its silence on them says nothing of whether the engine holds them.
        p.write(yaml.member("m0", p.service, "user:m0@example.com"));
        const preview = await sb.pulumi(["preview"], p.dir);
        for (const n of namedIn(preview.stdout)) expect(held, `${n} named "in no state" by the preview, yet the state holds it`).not.to.include(n);
        const pending = (JSON.parse((await sb.pulumi(["stack", "export"], p.dir)).stdout).deployment.pending_operations ?? []).length;
        if (pending) await sb.pulumi(["refresh", "--yes", "--skip-preview", "--clear-pending-creates"], p.dir);
        const before = (await stateUrns(p.dir)).map((u) => u.split("::").pop()!);
        // `pulumi up --yes`: its preview, then its update (a later run of the same CLI), which deletes what the state
        // holds and the program dropped, and names what is in IAM and in no state.
        const next = await sb.pulumi(["up", "--yes"], p.dir);
        for (const n of namedIn(next.stdout)) expect(before, `${n} named "in no state" by the up, yet the state held it`).not.to.include(n);
        const left = grants(p.parent).filter((g) => g !== `${ROLE} user:m0@example.com`);
        for (const g of left) expect(next.stdout, `${g} left in IAM and not named by the up`).to.contain(g.split(" ")[1]);
        process.stdout.write(`      ${held.length} held after the Ctrl-C; the preview named ${namedIn(preview.stdout).length}, the up ${namedIn(next.stdout).length}; ${left.length} left in IAM\n`);
    });

    it("kill -9 of the CLI mid-up after answered Creates it never saved, then `pulumi up` with its preview and nothing to change: its update names every grant left in IAM and in no state", async () => {
        const p = await fresh("clikillnochange");
        p.write(yaml.member("m0", p.service, "user:m0@example.com"));
        await sb.pulumi(["up", "--yes", "--skip-preview"], p.dir);
        // Without checkpoints the engine saves the update only at its end: every Create answered before the kill is
        // answered and never recorded — what only the run that sends every resource may name.
        await killCliMidWrites(await upUnderWay(p, 60, 20, { PULUMI_SKIP_CHECKPOINTS: "true" }), p.dir);
        expect(await stateUrns(p.dir), "the state as the first up left it").to.have.length(1);
        const orphans = grants(p.parent).filter((g) => g !== `${ROLE} user:m0@example.com`);
        // The program declares what the state holds: the update changes nothing, and only the CLI's order of runs
        // (its preview first, then its update) tells the update's plugin that it is no preview.
        p.write(yaml.member("m0", p.service, "user:m0@example.com"));
        const next = await sb.pulumi(["up", "--yes", "--expect-no-changes"], p.dir);
        const update = next.stdout.slice(next.stdout.indexOf("Updating ("));
        process.stdout.write(`      ${orphans.length} in IAM and in no state; the update names ${orphans.filter((g) => update.includes(g.split(" ")[1])).length}\n`);
        expect(orphans.length).to.be.greaterThan(10);
        for (const g of orphans) expect(update, `${g} left in IAM and not named by the update`).to.contain(g.split(" ")[1]);
        expect(update).not.to.contain("user:m0@example.com");
    });

    for (const how of ["Ctrl-C twice", "kill -9 of the CLI"] as const) {
        it(`${how} mid-up, \`pulumi refresh --clear-pending-creates\`, \`pulumi destroy\`: no grant is left unsaid`, async () => {
            const p = await fresh(how === "Ctrl-C twice" ? "ctrlc" : "clikill");
            const up = await upUnderWay(p, 100, 20);
            if (how === "Ctrl-C twice") await ctrlCTwice(up);
            else await killCliMidWrites(up, p.dir);
            const pending = (JSON.parse((await sb.pulumi(["stack", "export"], p.dir)).stdout).deployment.pending_operations ?? []).length;
            process.stdout.write(`      after ${how}: ${grants(p.parent).length} grants in IAM, ${(await stateUrns(p.dir)).length} in state, ${pending} pending operations\n`);
            const refresh = await sb.pulumi(["refresh", "--yes", "--skip-preview", "--clear-pending-creates"], p.dir);
            const destroy = await sb.pulumi(["destroy", "--yes", "--skip-preview"], p.dir);
            const said = refresh.stdout + destroy.stdout;
            const left = grants(p.parent);
            process.stdout.write(`      then refresh and destroy: ${left.length} grants left, each named to the user\n`);
            for (const g of left) expect(said, `${g} left in IAM and never named`).to.contain(g.split(" ")[1]);
        });
    }
});
