// One deployment, one truth: the crash journal and the claims of every plugin process of a run hold across
// processes, crashes, PID reuse and unusable disks. Real plugin processes against the emulator, a stand-in engine
// for their messages, and a PULUMI_HOME shared by every run as on one user's machine.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { Engine, startEngine, until } from "../support/engine";
import { dieAfterWrite as diesAfterWrite, JOURNAL_SAYS, machine as onMachine, skipWithoutMountNamespace, withReadOnly } from "../support/machine";
import { listGrants, MEMBER, Plugin, PLUGIN, pulumiHome, ROLE, Stack } from "../support/plugin";
import { tempDir } from "../support/temp";

const TOKEN = "ya29.deployment-test-token";
const SERVICE = "deployment.endpoints.my-project.cloud.goog";
const PARENT = `services/${SERVICE}`;
const member = (who: string) => ({ serviceName: SERVICE, role: ROLE, member: `user:${who}@example.com` });
const grant = (who: string) => `${ROLE} user:${who}@example.com`;
const { unanswered: UNANSWERED, mayNotBeRecorded: MAY_NOT, unusable: UNUSABLE } = JOURNAL_SAYS;

/** One user's machine (tests/support/machine.ts) with this file's service. */
const machine = (body: (stack: Stack, engine: Engine, home: string) => Promise<void>, home?: string) => onMachine(TOKEN, [SERVICE], body, home);
const dieAfterWrite = (stack: Stack, p: Plugin, create: (p: Plugin) => Promise<unknown>) => diesAfterWrite(stack, PARENT, p, create);

/** A plugin of the stack's current run, started with `start` options, configured as the stack's. */
async function pluginOf(stack: Stack, engine: Engine, home: string, command?: string[]): Promise<Plugin> {
    const p = await Plugin.start({ env: { PULUMI_HOME: home }, args: [engine.address], command });
    await p.configure(undefined, stack.vars());
    return p;
}

describe("one deployment, one truth", function () {
    this.timeout(60_000);

    for (const first of ["explicit", "default"] as const) {
        it(`an explicit provider's plugin killed mid-write: the next run records the grant, whichever process stops first (${first} first)`, () => machine(async (stack, engine) => {
            const explicit = await stack.startPlugin(); // the run's second provider process
            await explicit.check(MEMBER, member("explicit"), {}, "m");
            await dieAfterWrite(stack, explicit, (p) => p.create(MEMBER, member("explicit"), false, "m"));

            // The next `pulumi up`: the default provider's process takes the dead process's file first, then the
            // explicit provider's new process creates the same resource again.
            await stack.nextDeployment();
            const byDefault = stack.plugin;
            await byDefault.check(MEMBER, member("other"), {}, "other");
            expect(await until(() => engine.messages.some((m) => m.includes(UNANSWERED))), "the orphan was reported").to.equal(true);
            await byDefault.create(MEMBER, member("other"), false, "other");
            const again = await stack.startPlugin();
            await again.check(MEMBER, member("explicit"), {}, "m");
            const created = await again.create(MEMBER, member("explicit"), false, "m");
            const [a, b] = first === "explicit" ? [again, byDefault] : [byDefault, again];
            expect(await a.stop()).to.equal(0);
            expect(await b.stop()).to.equal(0);
            expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("explicit"), grant("other")]);
            expect(engine.messages.join("\n")).not.to.contain("removed");

            // `pulumi refresh`, then `pulumi destroy`: settled once, never reported again; the destroy removes it.
            engine.logs.length = 0;
            await stack.nextDeployment();
            await stack.plugin.read(MEMBER, created.id, created.properties, member("explicit"), "m");
            await stack.nextDeployment();
            await stack.plugin.delete(MEMBER, created.id, created.properties, "m");
            expect(await stack.plugin.stop()).to.equal(0);
            expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("other")]);
            expect(engine.messages.join("\n")).not.to.contain(UNANSWERED);
        }));
    }

    it("two resources served by two processes of one run that declare one grant are each warned, naming the other", () => machine(async (stack, engine) => {
        const explicit = await stack.startPlugin();
        try {
            await stack.plugin.check(MEMBER, member("dup"), {}, "byDefault");
            await explicit.check(MEMBER, { ...member("dup"), member: "user:DUP@example.com" }, {}, "byExplicit");
            const on = (name: string) => until(() => engine.warningsOn(name).some((w) => w.includes("declares the same grant")));
            expect(await on("byDefault"), "the default provider's resource was warned").to.equal(true);
            expect(await on("byExplicit"), "the explicit provider's resource was warned").to.equal(true);
            expect(engine.warningsOn("byDefault").join("\n")).to.contain("byExplicit");
        } finally {
            await explicit.stop();
        }
    }));

    it("a dead process whose PID a new process got is dead all the same: its unanswered write is reported and removed", async function () {
        const lastPid = "/proc/sys/kernel/ns_last_pid";
        try {
            fs.accessSync(lastPid, fs.constants.W_OK);
        } catch {
            console.log(`      skipped: ${lastPid} is not writable here (it takes root in the PID namespace)`);
            this.skip();
        }
        let reused = false;
        await machine(async (stack, engine, home) => {
            const dead = stack.plugin.child.pid!;
            await stack.plugin.check(MEMBER, member("orphan"), {}, "orphan");
            await dieAfterWrite(stack, stack.plugin, (p) => p.create(MEMBER, member("orphan"), false, "orphan"));
            await engine.nextRun();
            // The next run's plugin gets the dead one's PID: the kernel hands out the PID after ns_last_pid.
            let next: Plugin | undefined;
            for (let i = 0; i < 20 && !next; i++) {
                fs.writeFileSync(lastPid, String(dead - 1));
                const p = await Plugin.start({ env: { PULUMI_HOME: home }, args: [engine.address] });
                if (p.child.pid === dead) next = p;
                else await p.stop();
            }
            if (!next) return; // other processes forked in between every time
            reused = true;
            await next.configure(undefined, stack.vars());
            await next.check(MEMBER, member("other"), {}, "other");
            expect(await until(() => engine.messages.some((m) => m.includes(UNANSWERED) && m.includes("orphan@example.com"))),
                "the orphan was reported").to.equal(true);
            await next.create(MEMBER, member("other"), false, "other");
            expect(await next.stop()).to.equal(0);
            expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("other")]);
        });
        if (!reused) {
            console.log("      skipped: the dead plugin's PID could not be handed to the next one (other processes took it)");
            this.skip();
        }
    });

    it("a process of another run that ends with nothing to keep leaves the folder to a live process that has not written yet", () => machine(async (stack, engine, home) => {
        await stack.plugin.check(MEMBER, member("orphan"), {}, "orphan"); // this run's process knows the stack now
        // `pulumi preview` of the same stack at the same time: its process starts and ends with nothing of its own.
        const previewEngine = await startEngine();
        try {
            const preview = await Plugin.start({ env: { PULUMI_HOME: home }, args: [previewEngine.address] });
            await preview.configure(undefined, stack.vars());
            await preview.check(MEMBER, member("orphan"), {}, "orphan");
            expect(await preview.stop()).to.equal(0);
        } finally {
            previewEngine.close();
        }
        await dieAfterWrite(stack, stack.plugin, (p) => p.create(MEMBER, member("orphan"), false, "orphan"));
        await engine.nextRun();
        const next = await pluginOf(stack, engine, home);
        try {
            await next.check(MEMBER, member("other"), {}, "other");
            expect(await until(() => engine.messages.some((m) => m.includes(UNANSWERED) && m.includes("orphan@example.com"))),
                "the orphan was reported").to.equal(true);
        } finally {
            await next.stop();
        }
    }));

    it("a Create answered but never recorded (the engine killed): refresh says nothing, the next destroy says what to check", () => machine(async (stack, engine) => {
        const kept = await stack.plugin.create(MEMBER, member("kept"), false, "kept");
        await stack.plugin.create(MEMBER, member("pending"), false, "pending");
        // Ctrl-C twice: the engine is gone before it saved the second Create; its plugin is killed.
        stack.plugin.child.kill("SIGKILL");
        await stack.plugin.exited;
        // `pulumi refresh --clear-pending-creates`: the engine reads what it holds, and drops the pending create.
        await stack.nextDeployment();
        await stack.plugin.read(MEMBER, kept.id, kept.properties, member("kept"), "kept");
        await stack.nextDeployment();
        expect(engine.messages.join("\n")).not.to.contain(UNANSWERED).and.not.to.contain(MAY_NOT);
        // `pulumi destroy`: the engine deletes what it holds; nothing declares or mentions the pending one.
        await stack.plugin.delete(MEMBER, kept.id, kept.properties, "kept");
        expect(await stack.plugin.stop()).to.equal(0);
        const said = engine.messages.filter((m) => m.includes(MAY_NOT));
        expect(said).to.have.length(1);
        expect(said[0]).to.contain("pending@example.com").and.contain("pulumi stack export");
        // Never removed on a guess, and said once: the next run is quiet.
        expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("pending")]);
        await stack.nextDeployment();
        await stack.plugin.check(MEMBER, member("other"), {}, "other");
        await stack.plugin.create(MEMBER, member("other"), false, "other");
        expect(await stack.plugin.stop()).to.equal(0);
        expect(engine.messages.filter((m) => m.includes(MAY_NOT))).to.have.length(1);
    }));
});

describe("never silent: a folder that cannot be used is said, and the deployment goes on", function () {
    this.timeout(60_000);

    /** A PULUMI_HOME whose plugin folder `spoil` makes unfit; returns that folder. */
    function spoiled(spoil: (folder: string) => void): { home: string; folder: string } {
        const home = pulumiHome();
        const folder = path.join(home, "plugins-state", "pulumi-resource-cloud");
        fs.mkdirSync(path.dirname(folder), { recursive: true });
        spoil(folder);
        return { home, folder };
    }

    const cases: [string, (folder: string) => void, string][] = [
        ["open to others", (f) => { fs.mkdirSync(f, { mode: 0o700 }); fs.chmodSync(f, 0o777); }, "open to other users"],
        ["another user's", (f) => { fs.mkdirSync(f, { mode: 0o700 }); fs.chownSync(f, 4242, 4242); }, "belongs to another user"],
        ["a symbolic link", (f) => fs.symlinkSync(tempDir("elsewhere"), f), "symbolic link"],
    ];
    for (const [what, spoil, reason] of cases) {
        it(`the plugin's folder ${what}: warned once with the path and the reason, never used, the Create goes through`, async function () {
            if (what === "another user's" && process.getuid?.() !== 0) {
                console.log("      skipped: giving a folder to another user takes root");
                this.skip();
            }
            const { home, folder } = spoiled(spoil);
            const before = fs.readdirSync(folder);
            await machine(async (stack, engine) => {
                await stack.plugin.check(MEMBER, member("a"), {}, "a");
                await stack.plugin.create(MEMBER, member("a"), false, "a");
                const warned = engine.messages.filter((m) => m.includes(UNUSABLE));
                expect(warned).to.have.length(1);
                expect(warned[0]).to.contain(folder).and.contain(reason);
                expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("a")]);
            }, home);
            expect(fs.readdirSync(folder)).to.deep.equal(before);
        });
    }

    it("a read-only PULUMI_HOME: warned with the path and the reason, the Create goes through", async function () {
        skipWithoutMountNamespace(this);
        const home = pulumiHome();
        fs.mkdirSync(home, { recursive: true });
        // The plugin in a mount namespace of its own, where PULUMI_HOME is mounted read-only.
        const readOnly = withReadOnly(home, [PLUGIN]);
        await machine(async (stack, engine) => {
            await engine.nextRun();
            const p = await pluginOf(stack, engine, home, readOnly);
            try {
                await p.check(MEMBER, member("ro"), {}, "ro");
                await p.create(MEMBER, member("ro"), false, "ro");
                const warned = engine.messages.filter((m) => m.includes(UNUSABLE));
                expect(warned).to.have.length(1);
                expect(warned[0]).to.contain(home).and.contain("EROFS");
                expect(listGrants(stack.emu.getPolicy(PARENT))).to.deep.equal([grant("ro")]);
            } finally {
                expect(await p.stop()).to.equal(0);
            }
        }, home);
    });
});
