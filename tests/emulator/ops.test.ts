// Operating the emulator: request log, fault injection, persisted state, the admin surface and the CLI.

import { expect } from "chai";
import { spawn, type ChildProcess } from "child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from "fs";
import { connect, createServer, type AddressInfo } from "net";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { Readable } from "stream";
import { createInterface } from "readline";
import { startEmulator, type Emulator, type Policy, type ServiceAccountKey } from "../../emulator";
import { FLAGS, HelpRequested, parseArgs, UsageError } from "../../emulator/cli";
import { body, call, signJwt } from "./http";

const TOKEN = "ops-token";
const SERVICE = "ops.endpoints.my-project.cloud.goog";
/** build/tests/emulator → repository root. */
const ROOT = resolve(__dirname, "../../..");
const MAIN = join(ROOT, "build", "emulator", "main.js");

/** Runs the built CLI to its end (for runs that start nothing). */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
    // "close", not "exit": both pipes are read to their end.
    return new Promise((done) => child.on("close", (code) => done({ code, stdout, stderr })));
}

/** The first line `stream` carries; fails when it ends before one. */
function firstLine(stream: NodeJS.ReadableStream, what: string): Promise<string> {
    return new Promise((done, fail) => {
        let text = "";
        const onData = (d: Buffer | string): void => {
            text += d.toString();
            const nl = text.indexOf("\n");
            if (nl < 0) return;
            stream.off("data", onData);
            done(text.slice(0, nl));
        };
        stream.on("data", onData);
        stream.once("end", () => fail(new Error(`${what} ended before a line: ${JSON.stringify(text)}`)));
    });
}

describe("emulator: operations", function () {
    this.timeout(15_000);
    let dir: string;

    before(() => {
        dir = mkdtempSync(join(tmpdir(), "cloud-emulator-test-"));
    });
    after(() => {
        rmSync(dir, { recursive: true, force: true });
    });

    describe("in-process", () => {
        let emu: Emulator;
        before(async () => {
            emu = await startEmulator({ accessTokens: [TOKEN] });
            emu.createService(SERVICE, "my-project");
        });
        after(async () => {
            await emu.close();
        });

        it("records every request with its status, and can be reset to prove none was sent", async () => {
            emu.resetRequests();
            expect(emu.requests).to.deep.equal([]);
            await call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { token: TOKEN });
            await call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`);
            expect(emu.requests.map(({ method, path, status }) => ({ method, path, status }))).to.deep.equal([
                { method: "POST", path: `/v1/services/${SERVICE}:getIamPolicy`, status: 200 },
                { method: "POST", path: `/v1/services/${SERVICE}:getIamPolicy`, status: 401 },
            ]);
            // The admin surface sees the same log, and is not itself recorded.
            const admin = await call("GET", `${emu.origin}/__emulator/requests`);
            expect(body<{ count: number }>(admin).count).to.equal(2);
            await call("POST", `${emu.origin}/__emulator/requests:reset`);
            expect(emu.requests).to.have.length(0);
        });

        it("at fault rate 1 answers only 429 (Retry-After: 0), 503 or a reset, and changes nothing", async () => {
            emu.setFaults({ rate: 1 });
            const seen = new Set<string>();
            const replies = await Promise.all(Array.from({ length: 60 }, () =>
                call("POST", `${emu.url}services/${SERVICE}:setIamPolicy`, {
                    token: TOKEN, body: { policy: { bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }] } },
                })));
            for (const r of replies) {
                if (r.reset) {
                    seen.add("reset");
                    continue;
                }
                expect(r.status).to.be.oneOf([429, 503]);
                seen.add(String(r.status));
                if (r.status === 429) {
                    expect(r.headers["retry-after"]).to.equal("0");
                    expect(body<{ error: { status: string } }>(r).error.status).to.equal("RESOURCE_EXHAUSTED");
                } else {
                    expect(body<{ error: { status: string } }>(r).error.status).to.equal("UNAVAILABLE");
                }
            }
            expect([...seen].sort()).to.deep.equal(["429", "503", "reset"]);
            expect(emu.getPolicy(`services/${SERVICE}`).etag).to.equal("ACAB");
            // The token endpoint is never faulted.
            const user = emu.mintAuthorizedUser();
            const t = await call("POST", emu.tokenUrl, { body: { grant_type: "refresh_token", ...user } });
            expect(t.status).to.equal(200);

            const off = await call("POST", `${emu.origin}/__emulator/faults`, { body: { rate: 0, latencyMs: 0 } });
            expect(off.json).to.deep.equal({ rate: 0, latencyMs: 0, minLatencyMs: 0 });
            expect((await call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { token: TOKEN })).status).to.equal(200);
            expect((await call("POST", `${emu.origin}/__emulator/faults`, { body: { rate: 2 } })).status).to.equal(400);
        });

        it("a `lost` fault carries the request out and closes the connection instead of answering: a write applied, its answer never seen", async () => {
            emu.setFaults({ rate: 1, kinds: ["lost"] });
            try {
                const r = await call("POST", `${emu.url}services/${SERVICE}:setIamPolicy`, {
                    token: TOKEN, body: { policy: { bindings: [{ role: "roles/viewer", members: ["user:lost@example.com"] }] } },
                });
                expect(r.reset, "no answer came").to.equal(true);
            } finally {
                emu.setFaults({ rate: 0, kinds: ["429", "503", "reset"] });
            }
            expect(emu.getPolicy(`services/${SERVICE}`).bindings).to.deep.equal([{ role: "roles/viewer", members: ["user:lost@example.com"] }]);
            expect(() => emu.setFaults({ kinds: ["timeout" as never] })).to.throw(RangeError, "429, 503, reset, lost");
        });

        it("a write whose sender left while it waited for its latency still lands; quiet() resolves once it has, and watchPolicies saw it stored", async () => {
            const parent = `services/${SERVICE}`;
            emu.setPolicy(parent, { bindings: [] });
            const seen: string[] = [];
            const unwatch = emu.watchPolicies((name) => seen.push(name));
            emu.setFaults({ latencyMs: 300, minLatencyMs: 300 });
            try {
                emu.resetRequests();
                const payload = JSON.stringify({ policy: { bindings: [{ role: "roles/viewer", members: ["user:late@example.com"] }] } });
                // A client killed right after sending: the whole request goes out, then the connection closes.
                const socket = connect(Number(new URL(emu.origin).port), "127.0.0.1");
                await new Promise<void>((done) => socket.once("connect", () => done()));
                socket.end(`POST /v1/${parent}:setIamPolicy HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n` +
                    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
                for (let i = 0; i < 100 && emu.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
                socket.destroy();
                let quiet = false;
                const waited = emu.quiet().then(() => (quiet = true));
                await new Promise((r) => setTimeout(r, 50));
                expect(quiet, "quiet while the write waits for its latency").to.equal(false);
                expect(emu.getPolicy(parent).bindings ?? []).to.deep.equal([]);
                await waited;
                expect(emu.getPolicy(parent).bindings).to.deep.equal([{ role: "roles/viewer", members: ["user:late@example.com"] }]);
                expect(seen, "the write, stored").to.deep.equal([parent]);
                await emu.quiet(); // nothing pending: at once
            } finally {
                unwatch();
                emu.setFaults({ latencyMs: 0, minLatencyMs: 0 });
            }
        });

        it("delays API requests by up to latencyMs", async () => {
            emu.setFaults({ latencyMs: 150 });
            const start = Date.now();
            const replies = await Promise.all(Array.from({ length: 20 }, () =>
                call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { token: TOKEN })));
            const elapsed = Date.now() - start;
            emu.setFaults({ latencyMs: 0 });
            expect(replies.every((r) => r.status === 200)).to.equal(true);
            expect(elapsed).to.be.within(20, 1000);
            expect(() => emu.setFaults({ rate: -1 })).to.throw(RangeError);
        });
    });

    it("persists services, policies, keys and refresh tokens in --state across two emulators", async () => {
        const state = join(dir, "state.json");
        const first = await startEmulator({ accessTokens: [TOKEN], state, allowConditions: true });
        let key: ServiceAccountKey;
        let set: Policy;
        let user: ReturnType<Emulator["mintAuthorizedUser"]>;
        try {
            const created = await call("POST", `${first.url}services`, { token: TOKEN, body: { serviceName: SERVICE, producerProjectId: "my-project" } });
            expect(created.status).to.equal(200);
            const r = await call("POST", `${first.url}services/${SERVICE}/consumers/example.com%3Amy-proj:setIamPolicy`, {
                token: TOKEN,
                body: { policy: { version: 3, bindings: [{ role: "roles/servicemanagement.reporter", members: ["user:a@example.com"], condition: { title: "t", expression: "true" } }] } },
            });
            expect(r.status, r.text).to.equal(200);
            set = body<Policy>(r);
            key = first.mintServiceAccountKey({ clientEmail: "persist@other-project.iam.gserviceaccount.com" });
            expect(key.project_id).to.equal("other-project");
            user = first.mintAuthorizedUser();
        } finally {
            await first.close();
        }
        expect(statSync(state).mode & 0o777).to.equal(0o600);
        expect(readFileSync(state, "utf8")).to.not.contain(user.refresh_token);

        const second = await startEmulator({ accessTokens: [TOKEN], state, allowConditions: true });
        try {
            const got = await call("GET", `${second.url}services/${SERVICE}`, { token: TOKEN });
            expect(got.json).to.deep.equal({ serviceName: SERVICE, producerProjectId: "my-project" });
            const read = await call("POST", `${second.url}services/${SERVICE}/consumers/example.com%3Amy-proj:getIamPolicy`, {
                token: TOKEN, body: { options: { requestedPolicyVersion: 3 } },
            });
            expect(read.json).to.deep.equal(set);
            // A key minted by the first instance still signs for the second.
            const iat = Math.floor(Date.now() / 1000);
            const assertion = signJwt(key.private_key, { iss: key.client_email, scope: "https://www.googleapis.com/auth/cloud-platform",
                aud: "https://oauth2.googleapis.com/token", iat, exp: iat + 600 }, { kid: key.private_key_id });
            const t = await call("POST", second.tokenUrl, { body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion } });
            expect(t.status, t.text).to.equal(200);
            const r = await call("POST", second.tokenUrl, { body: { grant_type: "refresh_token", ...user } });
            expect(r.status).to.equal(200);
            // Etags keep moving forward after a restart.
            const next = await call("POST", `${second.url}services/${SERVICE}/consumers/example.com%3Amy-proj:setIamPolicy`, {
                token: TOKEN, body: { policy: { etag: set.etag, version: 3, bindings: set.bindings } },
            });
            expect(next.status).to.equal(200);
            expect(body<Policy>(next).etag).to.not.equal(set.etag);
        } finally {
            await second.close();
        }
    });

    it("writes a --mint-key file with mode 0600 that the token endpoint accepts", async () => {
        const file = join(dir, "key.json");
        const emu = await startEmulator({ mintKey: file, mintEmail: "ci@ci-project.iam.gserviceaccount.com" });
        try {
            expect(statSync(file).mode & 0o777).to.equal(0o600);
            const key = JSON.parse(readFileSync(file, "utf8")) as ServiceAccountKey;
            expect(key.client_email).to.equal("ci@ci-project.iam.gserviceaccount.com");
            expect(key.token_uri).to.equal(emu.tokenUrl);
            const iat = Math.floor(Date.now() / 1000);
            const assertion = signJwt(key.private_key, { iss: key.client_email, scope: "https://www.googleapis.com/auth/cloud-platform",
                aud: "https://oauth2.googleapis.com/token", iat, exp: iat + 600 });
            const t = await call("POST", emu.tokenUrl, { body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion } });
            expect(t.status, t.text).to.equal(200);
        } finally {
            await emu.close();
        }
    });

    it("CLI: prints exactly the base URL on stdout line 1, serves, and exits 0 on SIGINT", async () => {
        const bin = join(ROOT, "bin", "cloud-emulator");
        expect(existsSync(bin)).to.equal(true);
        const keyFile = join(dir, "cli-key.json");
        const child = spawn(bin, ["--access-token", "cli-a", "--access-token", "cli-b", "--denied-token", "cli-d",
            "--token-lifetime", "60", "--missing-service", "404", "--propagation-ms", "0", "--mint-key", keyFile], { stdio: ["ignore", "pipe", "pipe"] });
        const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
        try {
            let stdout = "";
            child.stdout.setEncoding("utf8");
            child.stdout.on("data", (d: string) => { stdout += d; });
            const line = await new Promise<string>((done, fail) => {
                const rl = createInterface({ input: child.stdout });
                rl.once("line", (l) => { rl.close(); done(l); });
                child.once("exit", (code) => fail(new Error(`exited ${code} before printing`)));
            });
            expect(line).to.match(/^http:\/\/127\.0\.0\.1:\d+\/v1\/$/);
            expect(existsSync(keyFile)).to.equal(true);
            await call("POST", `${line}services`, { token: "cli-a", body: { serviceName: SERVICE, producerProjectId: "my-project" } });
            const ok = await call("POST", `${line}services/${SERVICE}:getIamPolicy`, { token: "cli-b" });
            expect(ok.status).to.equal(200);
            expect((await call("POST", `${line}services/${SERVICE}:getIamPolicy`, { token: "cli-d" })).status).to.equal(403);
            expect((await call("POST", `${line}services/none.example.com:getIamPolicy`, { token: "cli-a" })).status).to.equal(404);
            // Without --allow-conditions, a conditional binding is refused.
            const conditional = await call("POST", `${line}services/${SERVICE}:setIamPolicy`, { token: "cli-a", body: { policy: { version: 3,
                bindings: [{ role: "roles/servicemanagement.reporter", members: ["user:a@example.com"], condition: { title: "t", expression: "true" } }] } } });
            expect(conditional.status, conditional.text).to.equal(400);
            const origin = line.slice(0, -"/v1/".length);
            const t = await call("POST", `${origin}/token`, { body: { grant_type: "refresh_token", refresh_token: "x", client_id: "y", client_secret: "z" } });
            expect(t.status).to.equal(400);
            child.kill("SIGINT");
            expect(await exited).to.equal(0);
            expect(stdout).to.equal(`${line}\n`);
        } finally {
            if (child.exitCode === null) child.kill("SIGKILL");
        }
    });

    for (const args of [["--fault-rate", "3"], ["--missing-service", "500"], ["--propagation-ms", "-1"], ["--quota-per-minute", "0"],
        ["--quota-per-minute", "1.5"], ["--port"], ["--bogus"], ["--allow-conditions", "yes"]]) {
        it(`CLI: refuses ${args.join(" ")} with a one-line reason on stderr, a pointer to --help, and exit status 2`, async () => {
            const { code, stdout, stderr } = await runCli(args);
            expect(code).to.equal(2);
            expect(stdout).to.equal("");
            const lines = stderr.split("\n");
            expect(lines, stderr).to.have.length(3);
            // The reason names what was wrong: the flag, and the value when one was given.
            const culprit = args[0] === "--allow-conditions" ? args[1] : args[0];
            expect(lines[0]).to.match(/^cloud-emulator: /).and.contain(culprit);
            if (args.length === 2 && culprit === args[0]) expect(lines[0]).to.contain(`"${args[1]}"`);
            expect(lines[1]).to.contain("--help");
            expect(lines[2]).to.equal("");
        });
    }

    for (const flag of ["--help", "-h"]) {
        it(`CLI: ${flag} prints every flag with its meaning and default on stdout, starts nothing, and exits 0`, async () => {
            // With other flags too: asking for help never starts the emulator.
            const { code, stdout, stderr } = await runCli(["--port", "0", flag]);
            expect(code).to.equal(0);
            expect(stderr).to.equal("");
            expect(stdout).to.match(/^usage: cloud-emulator /).and.not.match(/https?:\/\//);
            // Each flag: a line `  --flag [VALUE]`, then its description indented below it.
            const blocks = new Map<string, string>();
            let current = "";
            for (const line of stdout.split("\n")) {
                const head = /^ {2}--([a-z-]+)(?: \S+)?$/.exec(line);
                if (head) blocks.set((current = head[1]), "");
                else if (current && line.startsWith("      ")) blocks.set(current, `${blocks.get(current)} ${line.trim()}`);
                else current = "";
            }
            // Every flag of the CLI's table, in its order.
            expect([...blocks.keys()]).to.deep.equal(FLAGS.map((f) => f.name));
            for (const [name, text] of blocks) {
                expect(text.length, name).to.be.above(20);
                if (name !== "help") expect(text, name).to.match(/\(.*default: [^)]+\)$/);
            }
            expect(blocks.get("quota-per-minute")).to.contain("120").and.contain("default: no quota");
            expect(blocks.get("allow-conditions")).to.contain("default: off");
            expect(blocks.get("port")).to.contain("default: 0");
        });
    }

    it("CLI: parses each flag into its option, in-process, as the table says", () => {
        expect(parseArgs(["--port", "8080", "--access-token", "a", "--access-token", "b", "--denied-token", "d",
            "--fault-rate", "0.5", "--missing-service", "404", "--quota-per-minute", "5", "--allow-conditions",
            "--mint-key", "k.json", "--mint-email", "m@p.iam.gserviceaccount.com"])).to.deep.include({
            port: 8080, accessTokens: ["a", "b"], deniedTokens: ["d"], faultRate: 0.5, missingService: 404,
            quotaPerMinute: 5, allowConditions: true, mintKey: "k.json", mintEmail: "m@p.iam.gserviceaccount.com",
        });
        expect(parseArgs([])).to.deep.include({ accessTokens: [], allowConditions: false });
        expect(() => parseArgs(["--bogus", "-h"])).to.throw(HelpRequested);
        expect(() => parseArgs(["--access-token", "a", "--port", "1", "--port", "2"])).to.throw(UsageError, "--port given more than once");
    });

    it("CLI: a port in use exits 1 naming the port, with how to pick another or let the emulator pick", async () => {
        const holder = createServer();
        await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
        try {
            const port = (holder.address() as AddressInfo).port;
            const { code, stdout, stderr } = await runCli(["--port", String(port)]);
            expect(code).to.equal(1);
            expect(stdout).to.equal("");
            expect(stderr.trimEnd().split("\n"), stderr).to.have.length(1);
            expect(stderr).to.contain(`port ${port} is already in use`).and.contain("--port N").and.contain("--port 0");
        } finally {
            await new Promise((done) => holder.close(done));
        }
    });

    it("CLI: --quota-per-minute and --allow-conditions reach the server", async () => {
        const child = spawn(process.execPath, [MAIN, "--access-token", "cli-q", "--quota-per-minute", "2", "--allow-conditions"],
            { stdio: ["ignore", "pipe", "ignore"] });
        const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
        try {
            const url = await firstLine(child.stdout, "the emulator's stdout");
            const created = await call("POST", `${url}services`, { token: "cli-q", body: { serviceName: SERVICE, producerProjectId: "my-project" } });
            expect(created.status).to.equal(200);
            const conditional = await call("POST", `${url}services/${SERVICE}:setIamPolicy`, { token: "cli-q", body: { policy: { version: 3,
                bindings: [{ role: "roles/servicemanagement.reporter", members: ["user:a@example.com"], condition: { title: "t", expression: "true" } }] } } });
            expect(conditional.status, conditional.text).to.equal(200);
            const third = await call("POST", `${url}services/${SERVICE}:getIamPolicy`, { token: "cli-q" });
            expect(third.status).to.equal(429);
            expect(body<{ error: { status: string } }>(third).error.status).to.equal("RESOURCE_EXHAUSTED");
            const log = await call("GET", `${url.slice(0, -"/v1/".length)}/__emulator/requests`);
            expect(body<{ quotaRefusals: number }>(log).quotaRefusals).to.equal(1);
            child.kill("SIGINT");
            expect(await exited).to.equal(0);
        } finally {
            if (child.exitCode === null) child.kill("SIGKILL");
        }
    });

    describe("CLI: stops with the process that started it", () => {
        let wrapper: ChildProcess | undefined;
        /** The emulator's pid while it may still run: known from the wrapper, forgotten once it has exited. */
        let emulatorPid: number | undefined;
        after(() => {
            // Only what this test started, and only if it was not seen to end.
            if (emulatorPid !== undefined) process.kill(emulatorPid, "SIGKILL");
            if (wrapper && wrapper.exitCode === null && wrapper.signalCode === null) wrapper.kill("SIGKILL");
        });

        it("npm run emulator execs node, so the signals npm forwards reach the emulator itself", () => {
            const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
            expect(pkg.scripts.emulator).to.match(/&& exec node build\/emulator\/main\.js$/);
        });

        it("exits within a few seconds once its parent is killed with SIGKILL (which it cannot forward)", async () => {
            // A shell stands in for npm: it starts the emulator in the background, tells its pid on fd 3, and waits.
            wrapper = spawn("/bin/sh", ["-c", '"$0" "$1" --port 0 3>&- & echo $! >&3; wait', process.execPath, MAIN],
                { stdio: ["ignore", "pipe", "pipe", "pipe"] });
            const [stdout, stderr, pidPipe] = [wrapper.stdio[1], wrapper.stdio[2], wrapper.stdio[3]];
            if (!stdout || !stderr || !(pidPipe instanceof Readable)) throw new Error("the wrapper's pipes are missing");
            emulatorPid = Number(await firstLine(pidPipe, "the wrapper's pid pipe"));
            const url = await firstLine(stdout, "the emulator's stdout");
            const origin = url.slice(0, -"/v1/".length);
            expect((await call("GET", `${origin}/__emulator/requests`)).status).to.equal(200);
            let log = "";
            stderr.on("data", (d: Buffer) => { log += d.toString(); });
            // The emulator holds the write end of stdout until it exits: its end is the emulator's end.
            stdout.resume();
            const ended = new Promise<void>((done) => stdout.once("end", done));
            const killedAt = Date.now();
            wrapper.kill("SIGKILL");
            let deadline: NodeJS.Timeout | undefined;
            await Promise.race([ended, new Promise((_, fail) => {
                deadline = setTimeout(() => fail(new Error("the emulator still runs 5 s after its parent was killed")), 5000);
            })]).finally(() => clearTimeout(deadline));
            emulatorPid = undefined;
            expect(Date.now() - killedAt).to.be.below(5000);
            expect(log).to.contain("stopping: the parent process");
            const afterwards = await call("GET", `${origin}/__emulator/requests`).then(
                (r) => `answered ${r.status}`,
                (e: NodeJS.ErrnoException) => e.code,
            );
            expect(afterwards).to.equal("ECONNREFUSED");
        });
    });
});
