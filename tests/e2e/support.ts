// Shared by the end-to-end tests: the Pulumi tools built by scripts/tools.sh (the real engine and language
// hosts, from Go modules), the plugin tarball from scripts/dist.ts installed into a throwaway PULUMI_HOME,
// a local file backend and passphrase secrets in a temp dir, and helpers to run `pulumi` there.
//
// Without the tools (a machine that has not run `npm run tools`), every e2e suite skips itself with a message
// saying so, so `npm test` stays green; CI builds the tools first and sets CLOUD_E2E_REQUIRED=1, which turns
// those skips into failures.

import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { LocalWorkspace, PulumiCommand, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { pluginTarball, ROLE } from "../support/plugin";
import { tempDir } from "../support/temp";

export const ROOT = path.join(__dirname, "..", "..", "..");
export const PACKAGE = "cloud";
export const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version;
/** The @pulumi/pulumi version this repository pins; the Python and Go SDKs used in the e2e tests match it. */
export const PULUMI_SDK_VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).dependencies["@pulumi/pulumi"];
export const PASSPHRASE = "e2e-passphrase";
export const SERVICE = "bookstore.endpoints.example-project.cloud.goog";
export const CONSUMER = "consumer-project-1";

/**
 * Pulumi YAML programs from their parts. Each part is YAML text ending in a newline, the entries of one section
 * indented by two spaces; `options` are resource options, indented by six.
 */
export const yaml = {
    /** A program: its name and runtime, then each section given (an empty string gives an empty section). */
    program(name: string, sections: { variables?: string; resources?: string; outputs?: string }): string {
        const parts = (["variables", "resources", "outputs"] as const).filter((k) => sections[k] !== undefined).map((k) => `${k}:\n${sections[k]}`);
        return `name: ${name}\nruntime: yaml\n${parts.join("")}`;
    },
    /** A resource of `type` (a YAML type token such as `cloud:endpoints:ServiceIamMember`), its properties as YAML values. */
    resource(name: string, type: string, properties: Record<string, string>, options = ""): string {
        const props = Object.entries(properties).map(([k, v]) => `      ${k}: ${v}\n`).join("");
        return `  ${name}:\n    type: ${type}\n    properties:\n${props}${options ? `    options:\n${options}` : ""}`;
    },
    member(name: string, service: string, who: string, opts: { role?: string; options?: string } = {}): string {
        return yaml.resource(name, "cloud:endpoints:ServiceIamMember", { serviceName: service, role: opts.role ?? ROLE, member: who }, opts.options);
    },
    binding(name: string, service: string, members: string[], opts: { role?: string; options?: string } = {}): string {
        return yaml.resource(name, "cloud:endpoints:ServiceIamBinding", { serviceName: service, role: opts.role ?? ROLE, members: `[${members.join(", ")}]` }, opts.options);
    },
    policy(name: string, service: string, data: object, opts: { options?: string } = {}): string {
        return yaml.resource(name, "cloud:endpoints:ServiceIamPolicy", { serviceName: service, policyData: `'${JSON.stringify(data)}'` }, opts.options);
    },
    /** A variable holding the etag of a consumer's policy, looked up with fn::invoke. */
    consumersLookup(name: string, service: string, consumer: string): string {
        return `  ${name}:\n    fn::invoke:\n      function: cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy\n` +
            `      arguments:\n        serviceName: ${service}\n        consumerProject: ${consumer}\n      return: etag\n`;
    },
};

/** The directory holding the built tools (whether or not they are there). */
export function toolsBin(): string {
    return execFileSync("bash", [path.join(ROOT, "scripts", "tools.sh"), "--print"], { encoding: "utf8" }).trim();
}

/**
 * Why the e2e tests cannot run here (the tools are not built, or are older than tools/ says), or undefined when
 * they can. Never builds anything: `npm run tools` does.
 */
export function toolsMissing(tools = ["pulumi", "pulumi-language-yaml"]): string | undefined {
    const key = tools.join(" ");
    if (!missingTools.has(key)) missingTools.set(key, checkTools(tools));
    return missingTools.get(key);
}

/** toolsMissing's answers, per list of tools: the tools do not change during a test run. */
const missingTools = new Map<string, string | undefined>();

function checkTools(tools: string[]): string | undefined {
    try {
        execFileSync("bash", [path.join(ROOT, "scripts", "tools.sh"), "--check"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
        const stderr = String((e as { stderr?: unknown }).stderr ?? e).trim().split("\n").pop();
        return stderr?.replace(/^tools\.sh: /, "") ?? "the Pulumi tools are not built: run `npm run tools`";
    }
    const bin = toolsBin();
    const missing = tools.filter((t) => !fs.existsSync(path.join(bin, t)));
    return missing.length ? `${missing.join(", ")} missing from ${bin}: run \`npm run tools\`` : undefined;
}

/**
 * Skips the test, or the whole suite when called from `before`, with a visible reason when something it needs is
 * missing. With CLOUD_E2E_REQUIRED=1 (CI) a missing piece fails instead: CI must not pass by skipping.
 */
export function skipUnless(ctx: Mocha.Context, reason: string | undefined): void {
    if (reason === undefined) return;
    if (process.env.CLOUD_E2E_REQUIRED === "1") throw new Error(`CLOUD_E2E_REQUIRED=1, but ${reason}`);
    process.stdout.write(`      (skipped: ${reason})\n`);
    ctx.skip();
}

/**
 * Why a test that builds an SDK package with `tool` cannot run here, or undefined. Such tests belong to the e2e
 * set: they run when the Pulumi tools (`tools`, built by `npm run tools`; CI builds them) are there, not merely
 * because a toolchain is on PATH.
 */
export function e2eNeeds(tool: string, tools = ["pulumi"]): string | undefined {
    return toolsMissing(tools) ?? (onPath(tool) ? undefined : `${tool} is not on PATH`);
}

/** Whether an executable is on PATH (this process's, or the one given). */
export function onPath(cmd: string, PATH = process.env.PATH): boolean {
    return (PATH ?? "").split(path.delimiter).filter((d) => d !== "").some((d) => {
        try {
            fs.accessSync(path.join(d, cmd), fs.constants.X_OK);
            return true;
        } catch {
            return false;
        }
    });
}

export { pluginTarball };

/**
 * The running processes (Linux: /proc), other than this one: each one's PID, parent's PID, start time (clock ticks
 * since boot: with the PID, which process it is) and command line.
 */
export function processes(): { pid: number; ppid: number; start: string; cmdline: string }[] {
    const out: { pid: number; ppid: number; start: string; cmdline: string }[] = [];
    for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
        try {
            const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
            const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
            out.push({ pid: Number(entry), ppid: Number(fields[1]), start: fields[19], cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, "utf8") });
        } catch {
            // gone meanwhile
        }
    }
    return out;
}

/** PIDs of running processes whose command line mentions `text` (the installed plugin runs as `<dir>/pulumi-resource-cloud`). */
export const pidsWith = (text: string) => processes().filter((p) => p.cmdline.includes(text)).map((p) => p.pid);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `pred` every `stepMs` until it holds; throws, saying what did not happen, once `timeoutMs` has passed. */
export async function waitFor(what: string, pred: () => boolean, timeoutMs: number, stepMs = 25): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !pred();) {
        if (Date.now() >= deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
        await sleep(stepMs);
    }
}

export interface RunResult {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** Runs a command; resolves with its exit code and output (never rejects for a non-zero exit). */
export function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<RunResult> {
    return new Promise((resolve, reject) => {
        const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 300_000);
        child.once("error", (e) => { clearTimeout(timer); reject(e); });
        child.once("close", (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
        child.stdin.end(opts.input ?? "");
    });
}

/** Throws, with everything the command printed, unless it exited 0. */
export async function ok(p: Promise<RunResult>, what: string): Promise<RunResult> {
    const r = await p;
    if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    return r;
}

/** The environment of this process without anything that could configure the provider or the CLI. */
function cleanEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
        if (/^(GOOGLE_|GCLOUD_|CLOUDSDK_|PULUMI_|USER_PROJECT_OVERRIDE$)/.test(k)) continue;
        env[k] = v;
    }
    return env;
}

/**
 * A throwaway Pulumi installation: PULUMI_HOME with the plugin installed from the tarball, a file backend and
 * passphrase secrets, the tools first on PATH. Everything lives under one temp dir, removed by `dispose()`.
 */
export class PulumiSandbox {
    readonly env: NodeJS.ProcessEnv;
    /** Every line `pulumi` printed, to check that no secret shows in output. */
    readonly transcript: string[] = [];

    private constructor(readonly dir: string, readonly bin: string) {
        this.env = {
            ...cleanEnv(),
            PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
            PULUMI_HOME: path.join(dir, "home"),
            PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
            PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
            PULUMI_SKIP_UPDATE_CHECK: "true",
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
            PULUMI_SKIP_CONFIRMATIONS: "true",
            NO_COLOR: "1",
        };
    }

    /** `installPlugin: false`: no plugin installed, and the engine allowed to download plugins. */
    static async create(name: string, { installPlugin = true } = {}): Promise<PulumiSandbox> {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cloud-e2e-${name}-`));
        for (const d of ["home", "state"]) fs.mkdirSync(path.join(dir, d));
        const sandbox = new PulumiSandbox(dir, toolsBin());
        if (installPlugin) await sandbox.installPlugin(VERSION, pluginTarball());
        else delete sandbox.env.PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION;
        return sandbox;
    }

    /** The directory the plugin was installed to. */
    get pluginDir(): string {
        return this.pluginDirOf(VERSION);
    }

    /** Where release `version` of the plugin is installed (`""`: the start every release's folder shares). */
    pluginDirOf(version: string): string {
        return path.join(this.dir, "home", "plugins", `resource-${PACKAGE}-v${version}`);
    }

    /** Installs the plugin's tarball `file` as release `version`, as a user does by hand. */
    async installPlugin(version: string, file: string): Promise<void> {
        await this.pulumi(["plugin", "install", "resource", PACKAGE, version, "--file", file], this.dir);
    }

    /** A project directory with the given files. */
    project(name: string, files: Record<string, string>): string {
        const dir = path.join(this.dir, "projects", name);
        fs.mkdirSync(dir, { recursive: true });
        for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
        return dir;
    }

    /**
     * Creates stack `dev` in `cwd`, configured through stack config as a user would: the emulator's endpoint,
     * and the token as a secret read from stdin (so it is not even on a command line).
     */
    async initStack(cwd: string, endpoint: string, token: string): Promise<void> {
        await this.pulumi(["stack", "init", "dev"], cwd);
        await this.pulumi(["config", "set", "cloud:serviceManagementCustomEndpoint", endpoint], cwd);
        await this.pulumi(["config", "set", "--secret", "cloud:accessToken"], cwd, token);
    }

    /** Runs `pulumi ARGS` in `cwd`; throws unless it exits 0. */
    async pulumi(args: string[], cwd: string, input?: string): Promise<RunResult> {
        const r = await this.tryPulumi(args, cwd, input);
        if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
        return r;
    }

    /**
     * Runs `pulumi ARGS` in `cwd`, whatever its exit code. The sandbox skips confirmations, which the CLI takes as
     * `--yes` and refuses beside `--preview-only`: there it does not.
     */
    async tryPulumi(args: string[], cwd: string, input?: string): Promise<RunResult> {
        const env = args.includes("--preview-only") ? { ...this.env, PULUMI_SKIP_CONFIRMATIONS: "" } : this.env;
        const r = await run(path.join(this.bin, "pulumi"), [...args, "--non-interactive", "--color", "never"], { cwd, env, input });
        this.transcript.push(`$ pulumi ${args.join(" ")}`, r.stdout, r.stderr);
        return r;
    }

    /** Runs another command with this sandbox's environment (plus `env`). */
    async exec(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<RunResult> {
        const r = await run(cmd, args, { cwd, env: { ...this.env, ...env }, timeoutMs });
        this.transcript.push(`$ ${cmd} ${args.join(" ")}`, r.stdout, r.stderr);
        return r;
    }

    /**
     * Runs a shell script (a guide's commands) in `cwd` as a user runs it: no confirmation skipped by the
     * environment (the sandbox's PULUMI_SKIP_CONFIRMATIONS), `env` added. Throws unless it exits 0 (`fails`: unless
     * it does not).
     */
    async script(script: string, cwd: string, { env = {}, fails = false }: { env?: NodeJS.ProcessEnv; fails?: boolean } = {}): Promise<RunResult> {
        const r = await this.exec("bash", ["-euo", "pipefail", "-c", script], cwd, { PULUMI_SKIP_CONFIRMATIONS: "", ...env });
        if (fails === (r.code === 0)) throw new Error(`${script}\nexited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
        return r;
    }

    /** The stack's checkpoint as the file backend stores it (what `pulumi stack export` shows, raw). */
    stateFiles(): { file: string; text: string }[] {
        const out: { file: string; text: string }[] = [];
        const walk = (d: string) => {
            for (const e of fs.readdirSync(d, { withFileTypes: true })) {
                const p = path.join(d, e.name);
                if (e.isDirectory()) walk(p);
                // Only files: the crash journal beside a file:// backend's state keeps a named pipe per live process
                // (its liveness marker), and opening one to read blocks until a writer comes.
                else if (e.isFile()) out.push({ file: p, text: fs.readFileSync(p, "latin1") });
            }
        };
        walk(path.join(this.dir, "state"));
        return out;
    }

    dispose(): void {
        fs.rmSync(this.dir, { recursive: true, force: true });
    }
}

/** Stack outputs as `pulumi stack output --json --show-secrets` prints them. */
export async function stackOutputs(sb: PulumiSandbox, cwd: string): Promise<Record<string, unknown>> {
    const r = await sb.pulumi(["stack", "output", "--json", "--show-secrets"], cwd);
    return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Asserts that `secret` appears nowhere: not in anything printed, not in any state or backend file. */
export function assertNeverInClear(sb: PulumiSandbox, secret: string, extra: string[] = []): void {
    const places = [
        ...sb.transcript.map((text, i) => ({ where: `output #${i}`, text })),
        ...sb.stateFiles().map(({ file, text }) => ({ where: file, text })),
        ...extra.map((text, i) => ({ where: `extra #${i}`, text })),
    ];
    const leaks = places.filter((p) => p.text.includes(secret)).map((p) => p.where);
    if (leaks.length) throw new Error(`the secret appears unencrypted in: ${leaks.join(", ")}`);
}

/** Copies a directory tree (files only, following no links). */
export function copyTree(from: string, to: string): void {
    fs.cpSync(from, to, { recursive: true, dereference: false });
}

/** Where the e2e tests compile the SDK and their TypeScript programs; scripts/up-typescript.ts uses another. */
const E2E_STAGE = path.join(ROOT, "build", "e2e");

const nodeSdks = new Map<string, Promise<string>>();
/**
 * sdk/nodejs compiled as its publisher would: a copy under `stageRoot` in build/ (so `@pulumi/pulumi` resolves to
 * this repository's, the one the running process uses), built with its own `npm run build` (tsc with the SDK's own
 * tsconfig, package.json copied into bin/). Resolves to the package directory (its `main` is bin/index.js), once
 * per process.
 */
export function compiledNodeSdk(stageRoot = E2E_STAGE): Promise<string> {
    let nodeSdk = nodeSdks.get(stageRoot);
    nodeSdk ??= (async () => {
        const stage = path.join(stageRoot, "sdk-nodejs");
        fs.rmSync(stage, { recursive: true, force: true });
        copyTree(path.join(ROOT, "sdk", "nodejs"), stage);
        const env = { ...process.env, PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}` };
        await ok(run("npm", ["run", "--silent", "build"], { cwd: stage, env }), "npm run build (sdk/nodejs)");
        return stage;
    })();
    nodeSdks.set(stageRoot, nodeSdk);
    return nodeSdk;
}

/**
 * A TypeScript program compiled as a user's would be against the SDK: `index.ts` (the given text) with
 * tests/e2e/programs/nodejs/tsconfig.json, in `<stageRoot>/<name>`, the compiled SDK linked into its node_modules
 * under the SDK's own package name. Resolves to the compiled entry (bin/index.js).
 */
export async function compileNodeProgram(name: string, indexTs: string, stageRoot = E2E_STAGE): Promise<string> {
    const sdk = await compiledNodeSdk(stageRoot);
    const sdkName: string = JSON.parse(fs.readFileSync(path.join(ROOT, "sdk", "nodejs", "package.json"), "utf8")).name;
    const stage = path.join(stageRoot, name);
    fs.rmSync(stage, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(path.join(stage, "node_modules", sdkName)), { recursive: true });
    copyTree(path.join(ROOT, "tests", "e2e", "programs", "nodejs", "tsconfig.json"), path.join(stage, "tsconfig.json"));
    fs.writeFileSync(path.join(stage, "index.ts"), indexTs);
    fs.symlinkSync(sdk, path.join(stage, "node_modules", sdkName), "dir");
    await ok(run(path.join(ROOT, "node_modules", ".bin", "tsc"), ["-p", stage], { cwd: stage, env: process.env }),
        `tsc -p (the TypeScript program ${name} against sdk/nodejs)`);
    return path.join(stage, "bin", "index.js");
}

/**
 * Stack `dev` of an Automation API inline program run by the sandbox's `pulumi` (no language host: the program
 * runs in this process), configured as initStack configures a CLI stack: the endpoint, and the token as a secret.
 */
export async function inlineStack(sb: PulumiSandbox, projectName: string, program: PulumiFn, endpoint: string, token: string): Promise<Stack> {
    const pulumiCommand = await PulumiCommand.get({ root: path.dirname(sb.bin) });
    const envVars: Record<string, string> = {};
    for (const [k, v] of Object.entries(sb.env)) if (v !== undefined) envVars[k] = v;
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: "dev", projectName, program }, {
        workDir: sb.project(projectName, {}),
        pulumiHome: sb.env.PULUMI_HOME,
        pulumiCommand,
        envVars,
        secretsProvider: "passphrase",
        projectSettings: { name: projectName, runtime: "nodejs", backend: { url: sb.env.PULUMI_BACKEND_URL } },
    });
    await stack.setConfig("cloud:serviceManagementCustomEndpoint", { value: endpoint });
    await stack.setConfig("cloud:accessToken", { value: token, secret: true });
    return stack;
}

let venv: Promise<string> | undefined;
/**
 * A Python virtualenv with `pulumi` from PyPI at this repository's @pulumi/pulumi version and sdk/python installed
 * (from a copy, so sdk/ gets no build files); resolves to its python executable, once per test run.
 */
export function pythonWithSdk(): Promise<string> {
    venv ??= (async () => {
        const dir = tempDir("e2e-venv");
        const py = path.join(dir, "venv", "bin", "python");
        const sdkCopy = path.join(dir, "sdk-python");
        copyTree(path.join(ROOT, "sdk", "python"), sdkCopy);
        const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" };
        await ok(run("python3", ["-m", "venv", path.join(dir, "venv")], { cwd: dir, env }), "python3 -m venv");
        await ok(run(py, ["-m", "pip", "install", "--quiet", `pulumi==${PULUMI_SDK_VERSION}`, sdkCopy], { cwd: dir, env, timeoutMs: 600_000 }),
            "pip install pulumi and sdk/python");
        return py;
    })();
    return venv;
}
