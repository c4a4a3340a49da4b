// The README's walk-through, as a newcomer types it: the commands of "Trying the examples" and of each example, in
// order, in one bash fed line by line, each one's exit status checked; each example's files saved in the folder its
// section names, as the reader saves them. The shell starts from the checkout with the machine's PATH (the tools
// not on it), a HOME of its own and TMPDIR in a throwaway folder: what the README sets (PULUMI_HOME, the login, the
// passphrase) is all it has, and nothing lands in HOME. Confirmations are skipped (PULUMI_SKIP_CONFIRMATIONS), as
// a reader answers yes. Between commands the test reads what happened (the shell's variables, stack outputs, the
// emulator's policies over its HTTP API) without changing anything the README does.
//
// `npm run tools` is the one command not run: the suite skips without its tools, and needs them to be there.

import { expect } from "chai";
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CONSUMER, PulumiSandbox, ROOT, SERVICE, skipUnless, toolsMissing } from "./support";

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");

/** The README's sections (from a `##` or `###` heading to the next), by heading. */
const SECTIONS = new Map([...README.matchAll(/^#{2,3} (.+)\n([\s\S]*?)(?=^#{2,3} |(?![\s\S]))/gm)].map((m) => [m[1], m[2]]));
function section(heading: string): string {
    const text = SECTIONS.get(heading);
    if (text === undefined) throw new Error(`the README has no section "${heading}"`);
    return text;
}
/** A section's fenced blocks of one language, as written. */
const blocks = (text: string, lang: string) => [...text.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]);
/** A block's commands: one per line, a line ending in `\` joined to the next. */
const commands = (block: string) => block.split(/(?<!\\)\n/).filter((l) => l.trim() !== "");

const TRYING = blocks(section("Trying the examples"), "sh");
const [START_EMULATOR, SET_UP_PULUMI, STACK, RUN, CLEAN_UP] = TRYING;
/** The token the README starts the emulator with. */
const TOKEN = /--access-token (\S+)/.exec(START_EMULATOR ?? "")?.[1] ?? "";

/** Each example: its section's folder command, the files saved there (by the README's words), and how it runs. */
const EXAMPLES = (() => {
    const lookup = section("Look up a policy (YAML)");
    const policy = section("Grant a Member and set a policy (YAML)");
    const ts = section("TypeScript");
    return {
        lookup: { folder: blocks(lookup, "sh")[0], files: { "Pulumi.yaml": blocks(lookup, "yaml")[0] }, run: RUN },
        policy: { folder: blocks(policy, "sh")[0], files: { "Pulumi.yaml": blocks(policy, "yaml")[0] }, run: RUN },
        typescript: { folder: blocks(ts, "sh")[0], files: { "Pulumi.yaml": blocks(ts, "yaml")[0], "index.ts": blocks(ts, "ts")[0] }, run: blocks(ts, "sh")[1] },
    };
})();

const SERVICE_PARENT = `services/${SERVICE}`;
const CONSUMER_PARENT = `services/${SERVICE}/consumers/${CONSUMER}`;
const SEEDED_SERVICE = { role: "roles/servicemanagement.serviceConsumer", members: ["user:seeded@example.com"] };
const SEEDED_CONSUMER = { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:seeded@consumer-project-1.iam.gserviceaccount.com"] };

interface Binding { role: string; members: string[]; condition?: unknown }

/** One bash, fed a line at a time as a terminal would be; each line's output and exit status come back. */
class Shell {
    private out = "";
    private err = "";
    private readonly child: ChildProcess;
    private static readonly MARK = "@@readme-test-rc";

    constructor(cwd: string, env: NodeJS.ProcessEnv) {
        // Its own process group, so that the background job the README starts is ended with it.
        this.child = spawn("bash", [], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
        this.child.stdout!.on("data", (d: Buffer) => (this.out += d.toString()));
        this.child.stderr!.on("data", (d: Buffer) => (this.err += d.toString()));
    }

    /** Runs one command line; resolves with what it printed and its exit status. */
    async run(line: string, timeoutMs = 300_000): Promise<{ code: number; stdout: string; stderr: string }> {
        const [out0, err0] = [this.out.length, this.err.length];
        this.child.stdin!.write(`${line}\nprintf '\\n${Shell.MARK} %d\\n' "$?"\n`);
        const mark = new RegExp(`\\n${Shell.MARK} (\\d+)\\n`);
        for (const deadline = Date.now() + timeoutMs; !mark.test(this.out.slice(out0));) {
            if (Date.now() > deadline || this.child.exitCode !== null) {
                throw new Error(`${line}: no answer within ${timeoutMs} ms\n--- stdout\n${this.out.slice(out0)}\n--- stderr\n${this.err.slice(err0)}`);
            }
            await new Promise((r) => setTimeout(r, 50));
        }
        const printed = this.out.slice(out0);
        const m = mark.exec(printed)!;
        // Settle what the command wrote to stderr before its status came back.
        await new Promise((r) => setTimeout(r, 20));
        return { code: Number(m[1]), stdout: printed.slice(0, m.index), stderr: this.err.slice(err0) };
    }

    /** Runs every command of a README block, as written; each must exit 0. */
    async block(text: string): Promise<string> {
        let printed = "";
        for (const line of commands(text)) {
            const r = await this.run(line);
            expect(r.code, `the README's \`${line}\` exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).to.equal(0);
            printed += r.stdout;
        }
        return printed;
    }

    /** What the test reads in the shell (not a README command): a line's output, which must succeed. */
    async read(line: string): Promise<string> {
        const r = await this.run(line);
        if (r.code !== 0) throw new Error(`${line} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
        return r.stdout.trim();
    }

    close(): void {
        try {
            process.kill(-this.child.pid!, "SIGKILL");
        } catch {
            // already gone
        }
    }
}

describe("e2e: the README's walk-through, as written, with the real engine", function () {
    this.timeout(600_000);
    this.slow(60_000);

    let sb: PulumiSandbox;
    let sh: Shell;
    let home: string;
    let emulator: string;

    /** The emulator's IAM API, as the README's curl calls it. */
    async function iam(parent: string, verb: "getIamPolicy" | "setIamPolicy", body: object = {}): Promise<{ bindings?: Binding[]; etag?: string }> {
        const r = await fetch(`${emulator}${parent}:${verb}`, {
            method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" }, body: JSON.stringify(body),
        });
        expect(r.status, `${verb} ${parent}`).to.equal(200);
        return (await r.json()) as { bindings?: Binding[]; etag?: string };
    }
    const bindingsOf = async (parent: string) => (await iam(parent, "getIamPolicy")).bindings ?? [];
    async function seed(): Promise<void> {
        await iam(SERVICE_PARENT, "setIamPolicy", { policy: { bindings: [SEEDED_SERVICE] } });
        await iam(CONSUMER_PARENT, "setIamPolicy", { policy: { bindings: [SEEDED_CONSUMER] } });
    }

    /** One example, as its section says: its folder, its files saved there, step 3's stack, its run command. */
    async function example(which: keyof typeof EXAMPLES): Promise<{ run: string; outputs: Record<string, unknown> }> {
        const { folder, files, run } = EXAMPLES[which];
        await seed();
        await sh.block(folder);
        const dir = await sh.read("pwd");
        expect(dir.startsWith(await sh.read('printf %s "$DEMO"')), `${folder}: a folder of its own in $DEMO`).to.equal(true);
        expect(fs.readdirSync(dir), "an empty folder").to.deep.equal([]);
        for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
        await sh.block(STACK);
        const printed = await sh.block(run);
        return { run: printed, outputs: JSON.parse(await sh.read("pulumi stack output --json --show-secrets")) as Record<string, unknown> };
    }

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        sb = await PulumiSandbox.create("readme", { installPlugin: false });
        home = path.join(sb.dir, "user-home");
        fs.mkdirSync(home);
        const env: NodeJS.ProcessEnv = {
            ...sb.env,
            PATH: process.env.PATH,
            HOME: home,
            TMPDIR: sb.dir,
            // The tools and the pinned Node stay where `npm run tools` and `npm run dist` cached them.
            XDG_CACHE_HOME: process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"),
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        };
        for (const k of ["PULUMI_HOME", "PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE"]) delete env[k];
        sh = new Shell(ROOT, env);
    });
    after(() => {
        sh?.close();
        sb?.dispose();
    });

    it("the README gives the walk-through's steps, and each example's folder, files and run command", () => {
        expect(TRYING, "Trying the examples: emulator, plugin and login, the stack, the run, the clean-up").to.have.length(5);
        expect(TOKEN).to.not.equal("");
        expect(STACK).to.contain("pulumi stack init dev").and.contain(`--secret cloud:accessToken ${TOKEN}`);
        expect(commands(RUN)).to.deep.equal(["pulumi up"]);
        const folders = Object.values(EXAMPLES).map((e) => e.folder.trim());
        for (const f of folders) expect(f).to.match(/^mkdir "\$DEMO\/[a-z]+" && cd "\$DEMO\/[a-z]+"$/);
        expect(new Set(folders).size, "a folder per example").to.equal(folders.length);
        expect(Object.values(EXAMPLES).map((e) => /^runtime: (\S+)$/m.exec(e.files["Pulumi.yaml"])?.[1])).to.deep.equal(["yaml", "yaml", "nodejs"]);
        expect(EXAMPLES.typescript.run, "the TypeScript example's run command").to.be.a("string").and.not.equal(RUN);
    });

    it("steps 1 and 2: the emulator with the service, the plugin installed and the login, all in $DEMO", async () => {
        await sh.block(START_EMULATOR);
        emulator = await sh.read('printf %s "$EMULATOR"');
        expect(emulator).to.match(/^http:\/\/127\.0\.0\.1:\d+\/v1\/$/);
        await sh.block(SET_UP_PULUMI);
        const demo = await sh.read('printf %s "$DEMO"');
        expect(path.dirname(demo), "mktemp -d, under TMPDIR").to.equal(sb.dir);
        expect(fs.existsSync(path.join(demo, "pulumi-home", "plugins", "resource-cloud-v8.38.0"))).to.equal(true);
        expect(await sh.read("pulumi whoami -v")).to.contain(`file://${demo}/state`);
    });

    it("YAML endpoints-iam: both lookups, their etag, policyData and consumer bindings", async () => {
        const { outputs } = await example("lookup");
        expect(outputs.etag).to.equal((await iam(SERVICE_PARENT, "getIamPolicy")).etag);
        expect(JSON.parse(outputs.policyData as string)).to.deep.equal({ bindings: [SEEDED_SERVICE] });
        expect(outputs.consumerBindings).to.deep.equal([SEEDED_CONSUMER]);
    });

    it("YAML endpoints-policy, in a folder of its own: applies the built policy and reads it back byte-equal; the preview shows the policy before the write", async () => {
        const { run, outputs } = await example("policy");
        // The preview `pulumi up` shows reads the policy before the update writes it, as the README says: here the
        // seeded one (on the README's fresh service, `{}`).
        const preview = run.slice(0, run.indexOf("Updating (dev)"));
        const shown = preview.slice(preview.indexOf("sameAsBuilt"), preview.indexOf("Resources:"));
        expect(shown, preview).to.contain(SEEDED_SERVICE.members[0]).and.not.contain("deployer@");
        expect(outputs.sameAsBuilt).to.be.a("string").and.equal(outputs.built);
        const applied = JSON.parse(outputs.sameAsBuilt as string) as { bindings: Binding[] };
        expect(applied.bindings.map((b) => b.role)).to.deep.equal(["roles/servicemanagement.admin", "roles/servicemanagement.serviceConsumer"]);
        // No conditional binding: Google does not list Service Management as taking them.
        expect(applied.bindings.some((b) => b.condition)).to.equal(false);
        // The policy owns the service's whole policy: the seeded grant is gone.
        const service = await bindingsOf(SERVICE_PARENT);
        expect(service).to.have.length(2);
        expect(service.flatMap((b) => b.members)).not.to.include(SEEDED_SERVICE.members[0]);
        // The member joins the consumer policy beside the seeded grant.
        expect((await bindingsOf(CONSUMER_PARENT)).filter((b) => b.role === SEEDED_CONSUMER.role).flatMap((b) => b.members)).to.have.members(
            ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com", ...SEEDED_CONSUMER.members]);
        // Not a README command: destroy undoes both grants.
        await sh.read("pulumi destroy --yes");
        expect(await bindingsOf(SERVICE_PARENT)).to.deep.equal([]);
        expect(await bindingsOf(CONSUMER_PARENT)).to.deep.equal([SEEDED_CONSUMER]);
    });

    it("TypeScript, in a folder of its own: the README's command runs the program on its stack, both forms of the lookups", async () => {
        const { outputs } = await example("typescript");
        // Why the README gives its own command: here `pulumi` has no Node.js language host to run the folder with.
        if (!(await sh.read("command -v pulumi-language-nodejs || true"))) {
            const r = await sh.run("pulumi preview");
            expect(r.code).to.not.equal(0);
            expect(r.stdout + r.stderr).to.contain("no language plugin 'pulumi-language-nodejs' found");
        }
        expect(outputs.consumers).to.deep.equal(SEEDED_SERVICE.members);
        expect(outputs.etag).to.equal((await iam(CONSUMER_PARENT, "getIamPolicy")).etag);
    });

    it("PULUMI_HOME and the login keep everything in $DEMO (crash journal included), nothing in HOME; step 4 ends the emulator and removes it", async () => {
        const demo = await sh.read('printf %s "$DEMO"');
        expect(fs.existsSync(path.join(home, ".pulumi")), "nothing in ~/.pulumi").to.equal(false);
        expect(fs.existsSync(path.join(demo, "state", ".pulumi", "plugins-state", "pulumi-resource-cloud")), "the crash journal beside the state").to.equal(true);
        expect(fs.readdirSync(path.join(demo, "state", ".pulumi", "stacks")).sort()).to.deep.equal(["endpoints-iam", "endpoints-policy", "endpoints-ts"]);
        await sh.block(CLEAN_UP);
        expect(fs.existsSync(demo)).to.equal(false);
        // The emulator no longer answers.
        const answers = () => fetch(emulator).then(() => true, () => false);
        for (const deadline = Date.now() + 10_000; await answers();) {
            if (Date.now() > deadline) throw new Error(`the emulator still answers at ${emulator} after step 4`);
            await new Promise((r) => setTimeout(r, 100));
        }
    });
});
