// Drives the real plugin executable as the engine does: spawn, read the port from stdout line 1, speak
// pulumirpc.ResourceProvider over gRPC with the stubs shipped in @pulumi/pulumi.

import type { Engine } from "./engine";
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import { ResourceProviderClient } from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { Emulator, EmulatorOptions, Policy, startEmulator } from "../../emulator";
import { PropertyMap } from "../../provider/declare/properties";
import { PACKAGE_VERSION as VERSION } from "../../provider/package/version";
import { assetName, executableName, NODE_FOLDER, Platform, platformKey, PLATFORMS, sourceDate, tarball, unpackedName } from "../../scripts/platforms";
import { tempDir } from "./temp";

const ROOT = path.join(__dirname, "..", "..", "..");
export const PLUGIN = path.join(ROOT, "bin", "pulumi-resource-cloud");

/** The platform this machine installs (the tests run on Linux x86-64). */
export const HOST_PLATFORM: Platform = PLATFORMS.find((p) => p.os === "linux" && p.arch === "amd64")!;
/** The plugin as a folder the user's `node` runs (not released; the same on any Unix: scripts/platforms.ts). */
export const FOLDER_PLATFORM: Platform = NODE_FOLDER;

/** A fresh PULUMI_HOME, removed when the test process exits. */
export const pulumiHome = (): string => tempDir("pulumi-home");

/** Runs a subcommand of the plugin executable (`migrate-from-gcp`, …) with `stdin`, as a person at a shell does. */
export function runSubcommand(args: string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
        const child = spawn(PLUGIN, args, { env: { PATH: process.env.PATH, PULUMI_HOME: pulumiHome() } });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("close", (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(stdin);
    });
}

/** Where the tests' tarballs are built (one build shared by every test process). */
const TEST_DIST = path.join(ROOT, "build", "test-dist");
/** What a plugin is built from: when any of it is newer than the build, the plugin is rebuilt. */
const TARBALL_INPUTS = [path.join(ROOT, "build", "provider"), path.join(ROOT, "build", "scripts"), path.join(ROOT, "schema.json"), path.join(ROOT, "package.json")];

function newest(file: string): number {
    const st = fs.statSync(file);
    if (!st.isDirectory()) return st.mtimeMs;
    return Math.max(st.mtimeMs, ...fs.readdirSync(file).map((f) => newest(path.join(file, f))));
}

/** Runs `fn` holding a lock shared by the test processes (mkdir is atomic); a lock older than 10 minutes is stale. */
function withLock<T>(lock: string, fn: () => T): T {
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    for (;;) {
        try {
            fs.mkdirSync(lock);
            break;
        } catch {
            try {
                if (Date.now() - fs.statSync(lock).mtimeMs > 600_000) fs.rmSync(lock, { recursive: true, force: true });
            } catch {
                // released meanwhile
            }
            execFileSync("sleep", ["0.2"]);
        }
    }
    try {
        return fn();
    } finally {
        fs.rmSync(lock, { recursive: true, force: true });
    }
}

/**
 * A platform's plugin as `npm run dist -- --unpacked` makes it (its tarball's contents, scripts/dist.ts), built
 * into build/test-dist when missing or older than the compiled code or the last commit; returns the folder.
 */
export function pluginFolder(platform: Platform = HOST_PLATFORM): string {
    const folder = unpackedName(path.join(TEST_DIST, assetName(platform, VERSION)));
    // The files' time in a tarball is the last commit's: a new commit makes other bytes.
    const stamp = `${folder}.date`;
    const date = String(sourceDate());
    return withLock(path.join(TEST_DIST, ".lock"), () => {
        const fresh = fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === date && fs.statSync(stamp).mtimeMs >= Math.max(...TARBALL_INPUTS.map(newest));
        if (!fresh) {
            execFileSync(process.execPath, [path.join(ROOT, "build", "scripts", "dist.js"), "--unpacked", "--platform", platformKey(platform), "--out", TEST_DIST],
                { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
            fs.writeFileSync(stamp, date);
        }
        return folder;
    });
}

/** A platform's plugin tarball as `npm run dist` makes it: pluginFolder() packed by the build's own tarball(). */
export function pluginTarball(platform: Platform = HOST_PLATFORM): string {
    const stamp = `${pluginFolder(platform)}.date`;
    const file = path.join(TEST_DIST, assetName(platform, VERSION));
    return withLock(path.join(TEST_DIST, ".lock"), () => {
        if (!fs.existsSync(file) || fs.statSync(file).mtimeMs < fs.statSync(stamp).mtimeMs) tarball(unpackedName(file), file);
        return file;
    });
}

/** The plugin as `pulumi plugin install` leaves it: the tarball's contents copied into `dir`; returns the executable. */
export function unpackPlugin(dir: string, platform: Platform = HOST_PLATFORM): string {
    fs.cpSync(pluginFolder(platform), dir, { recursive: true, preserveTimestamps: true });
    return path.join(dir, executableName(platform));
}

/**
 * Mocha hooks for a suite: the packaged plugin of `platform` unpacked into a fresh temporary folder before it,
 * the folder removed after it. The returned object is filled in when the suite starts.
 */
export function usePackagedPlugin(name: string, platform: Platform = HOST_PLATFORM): { dir: string; launcher: string } {
    const installed = { dir: "", launcher: "" };
    before(function () {
        this.timeout(600_000); // a first build makes the executable and its code cache (under emulation for some)
        installed.dir = fs.mkdtempSync(path.join(os.tmpdir(), `cloud-${name}-`));
        installed.launcher = unpackPlugin(path.join(installed.dir, "plugin"), platform);
    });
    after(() => fs.rmSync(installed.dir, { recursive: true, force: true }));
    return installed;
}

export interface InvokeResult {
    return?: PropertyMap;
    failures: { property: string; reason: string }[];
}

/** A running plugin process and a client for it. */
export class Plugin {
    stdout = "";
    stderr = "";
    readonly exited: Promise<number | null>;

    private constructor(readonly child: ChildProcess, readonly port: number, readonly client: ResourceProviderClient) {
        this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    }

    /**
     * Starts the plugin with only the given environment variables (plus PATH/HOME), so no machine config leaks in.
     * Each process gets a PULUMI_HOME of its own (its crash journal, see provider/deployment/deployment.ts) unless
     * `env` names one: processes that stand for one user's successive deployments share it.
     */
    static async start(opts: { env?: NodeJS.ProcessEnv; args?: string[]; command?: string[]; outputFiles?: boolean } = {}): Promise<Plugin> {
        const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: path.join(__dirname, "no-home"), ...opts.env };
        env.PULUMI_HOME ??= pulumiHome();
        const [cmd, ...pre] = opts.command ?? [PLUGIN];
        if (opts.outputFiles) return Plugin.startWithFiles(cmd, [...pre, ...(opts.args ?? [])], env);
        const child = spawn(cmd, [...pre, ...(opts.args ?? [])], { env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
        const port = await new Promise<number>((resolve, reject) => {
            child.stdout!.on("data", (d: Buffer) => {
                out += d.toString();
                const nl = out.indexOf("\n");
                if (nl >= 0) resolve(Number(out.slice(0, nl)));
            });
            child.once("exit", (code) => reject(new Error(`plugin exited with ${code} before printing its port: ${err}`)));
        });
        const plugin = new Plugin(child, port, Plugin.client(port));
        plugin.stdout = out;
        child.stdout!.on("data", (d: Buffer) => (plugin.stdout += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (plugin.stderr += d.toString()));
        plugin.stderr = err;
        return plugin;
    }

    /** A client for the plugin at `port`, sized as the engine's: far above gRPC's 4 MB default (policies and inputs can be large). */
    private static client(port: number): ResourceProviderClient {
        return new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
            "grpc.max_receive_message_length": 400 * 1024 * 1024,
            "grpc.max_send_message_length": 400 * 1024 * 1024,
        });
    }

    /**
     * Like start(), with stdout and stderr going to files (read once the port is there; `stdout`/`stderr` are not
     * kept up to date): Node under Wine cannot write to a pipe from a Linux process.
     */
    private static async startWithFiles(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Plugin> {
        const dir = tempDir("plugin-output");
        const [outFile, errFile] = [path.join(dir, "stdout"), path.join(dir, "stderr")];
        const [out, err] = [fs.openSync(outFile, "w"), fs.openSync(errFile, "w")];
        const child = spawn(cmd, args, { env, stdio: ["ignore", out, err] });
        fs.closeSync(out);
        fs.closeSync(err);
        let exited: number | null | undefined;
        child.once("exit", (code) => (exited = code));
        let port: number | undefined;
        while (port === undefined) {
            const text = fs.readFileSync(outFile, "utf8");
            if (text.includes("\n")) port = Number(text.slice(0, text.indexOf("\n")));
            else if (exited !== undefined) throw new Error(`plugin exited with ${exited} before printing its port: ${fs.readFileSync(errFile, "utf8")}`);
            else await new Promise((r) => setTimeout(r, 50));
        }
        const plugin = new Plugin(child, port, Plugin.client(port));
        plugin.stdout = fs.readFileSync(outFile, "utf8");
        plugin.stderr = fs.readFileSync(errFile, "utf8");
        return plugin;
    }

    /** Calls one unary method by name, promisified. */
    call<Res>(method: string, req: object): Promise<Res> {
        const fn = (this.client as unknown as Record<string, Function>)[method];
        return new Promise<Res>((resolve, reject) =>
            fn.call(this.client, req, (err: grpc.ServiceError | null, res: Res) => (err ? reject(err) : resolve(res))));
    }

    /** Configure, as the engine sends it: typed args and/or `cloud:config:<key>` variables. */
    /** Configure, as the engine sends it; `urn`: the provider resource's (the default one's, or an explicit one's). */
    async configure(args?: PropertyMap, variables: Record<string, string> = {}, urn?: string): Promise<pb.ConfigureResponse> {
        const req = new pb.ConfigureRequest().setAcceptsecrets(true).setAcceptresources(true);
        if (urn) req.setUrn(urn);
        if (args) req.setArgs(Struct.fromJavaScript(args));
        for (const [k, v] of Object.entries(variables)) req.getVariablesMap().set(k, v);
        return this.call<pb.ConfigureResponse>("configure", req);
    }

    async invoke(tok: string, args: PropertyMap, preview = false): Promise<InvokeResult> {
        const res = await this.call<pb.InvokeResponse>("invoke", new pb.InvokeRequest().setTok(tok).setArgs(Struct.fromJavaScript(args)).setPreview(preview));
        return {
            return: res.getReturn()?.toJavaScript() as PropertyMap | undefined,
            failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
        };
    }

    async checkConfig(news: PropertyMap): Promise<{ inputs: PropertyMap; failures: { property: string; reason: string }[] }> {
        const res = await this.call<pb.CheckResponse>("checkConfig",
            new pb.CheckRequest().setUrn("urn:pulumi:dev::proj::pulumi:providers:cloud::default").setNews(Struct.fromJavaScript(news)));
        return {
            inputs: (res.getInputs()?.toJavaScript() ?? {}) as PropertyMap,
            failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
        };
    }

    // The resource RPCs, with the request fields the engine fills in. `name` is the resource's name in its URN
    // (`urn:pulumi:dev::proj::<type>::<name>`): two resources of one type need two names.

    /** The URN the resource RPCs below send for a resource of `type` named `name`. */
    urn(type: string, name = "r"): string {
        return `urn:pulumi:dev::proj::${type}::${name}`;
    }

    async check(type: string, news: PropertyMap, olds: PropertyMap = {}, name?: string): Promise<{ inputs: PropertyMap; failures: { property: string; reason: string }[] }> {
        const res = await this.call<pb.CheckResponse>("check", new pb.CheckRequest().setUrn(this.urn(type, name)).setType(type)
            .setOlds(Struct.fromJavaScript(olds)).setNews(Struct.fromJavaScript(news)));
        return {
            inputs: (res.getInputs()?.toJavaScript() ?? {}) as PropertyMap,
            failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
        };
    }

    async diff(type: string, id: string, olds: PropertyMap, news: PropertyMap, name?: string):
        Promise<{ changes: number; diffs: string[]; replaces: string[]; deleteBeforeReplace: boolean; detailed: Record<string, string> }> {
        const res = await this.call<pb.DiffResponse>("diff", new pb.DiffRequest().setUrn(this.urn(type, name)).setType(type).setId(id)
            .setOlds(Struct.fromJavaScript(olds)).setOldInputs(Struct.fromJavaScript(olds)).setNews(Struct.fromJavaScript(news)));
        const kinds = Object.fromEntries(Object.entries(pb.PropertyDiff.Kind).map(([k, v]) => [v, k]));
        const detailed: Record<string, string> = {};
        for (const [path, d] of res.getDetaileddiffMap().entries()) detailed[path] = kinds[d.getKind()];
        return { changes: res.getChanges(), diffs: res.getDiffsList(), replaces: res.getReplacesList(), deleteBeforeReplace: res.getDeletebeforereplace(), detailed };
    }

    async create(type: string, properties: PropertyMap, preview = false, name?: string): Promise<{ id: string; properties: PropertyMap }> {
        const res = await this.call<pb.CreateResponse>("create", new pb.CreateRequest().setUrn(this.urn(type, name)).setType(type)
            .setProperties(Struct.fromJavaScript(properties)).setPreview(preview));
        return { id: res.getId(), properties: (res.getProperties()?.toJavaScript() ?? {}) as PropertyMap };
    }

    async read(type: string, id: string, properties: PropertyMap = {}, inputs: PropertyMap = {}, name?: string): Promise<{ id: string; properties: PropertyMap; inputs: PropertyMap }> {
        const res = await this.call<pb.ReadResponse>("read", new pb.ReadRequest().setUrn(this.urn(type, name)).setType(type).setId(id)
            .setProperties(Struct.fromJavaScript(properties)).setInputs(Struct.fromJavaScript(inputs)));
        return {
            id: res.getId(),
            properties: (res.getProperties()?.toJavaScript() ?? {}) as PropertyMap,
            inputs: (res.getInputs()?.toJavaScript() ?? {}) as PropertyMap,
        };
    }

    async update(type: string, id: string, olds: PropertyMap, news: PropertyMap, preview = false, name?: string): Promise<PropertyMap> {
        const res = await this.call<pb.UpdateResponse>("update", new pb.UpdateRequest().setUrn(this.urn(type, name)).setType(type).setId(id)
            .setOlds(Struct.fromJavaScript(olds)).setOldInputs(Struct.fromJavaScript(olds)).setNews(Struct.fromJavaScript(news)).setPreview(preview));
        return (res.getProperties()?.toJavaScript() ?? {}) as PropertyMap;
    }

    async delete(type: string, id: string, properties: PropertyMap, name?: string): Promise<void> {
        await this.call("delete", new pb.DeleteRequest().setUrn(this.urn(type, name)).setType(type).setId(id)
            .setProperties(Struct.fromJavaScript(properties)).setOldInputs(Struct.fromJavaScript(properties)));
    }

    empty<Res>(method: string): Promise<Res> {
        return this.call<Res>(method, new Empty());
    }

    /** The environment the plugin process runs with, as its launcher left it (Linux: /proc). */
    environ(): Map<string, string> {
        const entries = fs.readFileSync(`/proc/${this.child.pid}/environ`, "utf8").split("\0").filter(Boolean);
        return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
    }

    /** SIGINT, as the engine ends a plugin (unless it is gone already); resolves with the exit code. */
    async stop(): Promise<number | null> {
        this.client.close();
        if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGINT");
        return this.exited;
    }
}

/**
 * Checks that a started plugin really serves: configured for `emu` (whose access tokens include `token`), it
 * answers a consumers lookup of a service it creates there.
 */
export async function expectAnswersLookup(plugin: Plugin, emu: Emulator, token: string): Promise<void> {
    const service = "answers.endpoints.answers-project.cloud.goog";
    emu.createService(service, "answers-project");
    await plugin.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:accessToken": token });
    const res = await plugin.invoke(CONSUMERS_FN, { serviceName: service, consumerProject: "answers-consumer-1" });
    if (res.failures.length || (res.return as PropertyMap | undefined)?.consumerProject !== "answers-consumer-1") {
        throw new Error(`the plugin did not answer the lookup: ${JSON.stringify(res)}`);
    }
}

/**
 * Starts the plugin by `command` with debug notes on stderr (`env` only, beside PATH and HOME), checks that it answers
 * a lookup against an emulator of its own, and returns its notes.
 */
export async function notesOfALookup(command: string[], env: NodeJS.ProcessEnv = {}, token = "ya29.lookup-notes-token"): Promise<string> {
    const emu = await startEmulator({ accessTokens: [token] });
    const plugin = await Plugin.start({ command, args: ["--logtostderr", "-v=9"], env });
    try {
        await expectAnswersLookup(plugin, emu, token);
        return plugin.stderr;
    } finally {
        await plugin.stop();
        await emu.close();
    }
}

export const SERVICE_FN = "cloud:endpoints/getServiceIamPolicy:getServiceIamPolicy";
export const CONSUMERS_FN = "cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy";
export const MEMBER = "cloud:endpoints/serviceIamMember:ServiceIamMember";
export const CONSUMER_MEMBER = "cloud:endpoints/consumersIamMember:ConsumersIamMember";
export const BINDING = "cloud:endpoints/serviceIamBinding:ServiceIamBinding";
export const POLICY = "cloud:endpoints/serviceIamPolicy:ServiceIamPolicy";
/** The role the tests grant: the one Service Management consumers are given. */
export const ROLE = "roles/servicemanagement.serviceConsumer";

/** A policy's grants as sorted lines: `role member`, the role followed by `[condition title]` when conditional. */
export function listGrants(policy: Pick<Policy, "bindings">): string[] {
    return (policy.bindings ?? []).flatMap((b) => b.members.map((m) => `${b.role}${b.condition ? `[${b.condition.title}]` : ""} ${m}`)).sort();
}

/** How a stack's emulator and plugin processes are started. */
export interface StackOptions {
    /** The emulator's options; the stack's token is added to its access tokens. */
    emulator?: EmulatorOptions;
    /**
     * An engine (tests/support/engine.ts) or its address, passed to every plugin process: their log calls go there.
     * With an engine, each `nextDeployment` is a new engine run (a new address).
     */
    engine?: string | Engine;
    /** Environment variables of every plugin process (Plugin.start's `env`). */
    env?: NodeJS.ProcessEnv;
}

/** An emulator with services, and a plugin configured against it through Configure. */
export interface Stack {
    readonly emu: Emulator;
    /** The plugin process of the current deployment. */
    readonly plugin: Plugin;
    /** Another plugin process, started and configured as the stack's (with an explicit provider, the engine runs one more). */
    startPlugin(): Promise<Plugin>;
    /** A new plugin process, configured as before: what the engine does for the next `pulumi up`. */
    nextDeployment(): Promise<void>;
    /** Configure variables pointing at the emulator with the stack's token; `extra` adds or overrides keys. */
    vars(extra?: Record<string, string>): Record<string, string>;
    configure(extra?: Record<string, string>): Promise<pb.ConfigureResponse>;
    /** Stops the plugin (resolving with its exit code) and the emulator. */
    stop(): Promise<number | null>;
}

export async function startStack(token: string, services: string[], opts: StackOptions = {}): Promise<Stack> {
    const emu = await startEmulator({ ...opts.emulator, accessTokens: [token, ...(opts.emulator?.accessTokens ?? [])] });
    const vars = (extra: Record<string, string> = {}) => ({
        "cloud:config:serviceManagementCustomEndpoint": emu.url,
        "cloud:config:accessToken": token,
        "cloud:config:requestTimeout": "20s",
        ...extra,
    });
    // One user's machine: every plugin process of the stack shares its PULUMI_HOME (the deployment's files).
    const env: NodeJS.ProcessEnv = { PULUMI_HOME: pulumiHome(), ...opts.env };
    const startPlugin = async () => {
        const engine = typeof opts.engine === "string" ? opts.engine : opts.engine?.address;
        const p = await Plugin.start({ env, args: engine === undefined ? [] : [engine] });
        try {
            await p.configure(undefined, vars());
        } catch (e) {
            await p.stop();
            throw e;
        }
        return p;
    };
    let plugin: Plugin;
    try {
        for (const s of services) emu.createService(s, "my-project");
        plugin = await startPlugin();
    } catch (e) {
        await emu.close();
        throw e;
    }
    return {
        emu,
        get plugin() {
            return plugin;
        },
        startPlugin,
        vars,
        configure: (extra) => plugin.configure(undefined, vars(extra)),
        async nextDeployment() {
            // The engine starts a plugin per deployment: what one deployment's program declared is not the next's.
            // Stopping the last one waits for its writes to be confirmed (its drain).
            await plugin.stop();
            if (typeof opts.engine === "object") await opts.engine.nextRun();
            plugin = await startPlugin();
        },
        async stop() {
            const code = await plugin.stop();
            await emu.close();
            return code;
        },
    };
}

/**
 * Mocha hooks for a suite: start an emulator with `services` and a configured plugin before it, stop both after
 * (the plugin's exit code is kept). The returned object is filled in when the suite starts; its `plugin` is always
 * the current deployment's.
 */
export function useStack(token: string, services: string[], opts: StackOptions = {}): Stack & { exitCode?: number | null } {
    let inner: Stack | undefined;
    const started = (): Stack => {
        if (!inner) throw new Error("the stack is started in the suite's before hook: use it in tests and hooks only");
        return inner;
    };
    const stack: Stack & { exitCode?: number | null } = {
        get emu() {
            return started().emu;
        },
        get plugin() {
            return started().plugin;
        },
        startPlugin: () => started().startPlugin(),
        nextDeployment: () => started().nextDeployment(),
        vars: (extra) => started().vars(extra),
        configure: (extra) => started().configure(extra),
        stop: () => started().stop(),
    };
    before(async () => {
        inner = await startStack(token, services, opts);
    });
    after(async () => {
        if (inner) stack.exitCode = await inner.stop();
    });
    return stack;
}

/** The gRPC error a call fails with; fails the test if it succeeds. */
export async function rpcError(call: Promise<unknown>): Promise<grpc.ServiceError> {
    try {
        await call;
    } catch (e) {
        return e as grpc.ServiceError;
    }
    throw new Error("expected the call to fail");
}
