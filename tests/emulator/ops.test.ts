// Operating the emulator: request log, fault injection, persisted state, the admin surface and the CLI.

import { expect } from "chai";
import { spawn } from "child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { createInterface } from "readline";
import { startEmulator, type Emulator, type Policy, type ServiceAccountKey } from "../../emulator";
import { body, call, signJwt } from "./http";

const TOKEN = "ops-token";
const SERVICE = "ops.endpoints.my-project.cloud.goog";
/** build/tests/emulator → repository root. */
const ROOT = resolve(__dirname, "../../..");

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
        const first = await startEmulator({ accessTokens: [TOKEN], state });
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

        const second = await startEmulator({ accessTokens: [TOKEN], state });
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

    for (const [flag, value] of [["--fault-rate", "3"], ["--missing-service", "500"], ["--propagation-ms", "-1"]]) {
        it(`CLI: refuses ${flag} ${value} with exit status 2`, async () => {
            const child = spawn(join(ROOT, "bin", "cloud-emulator"), [flag, value], { stdio: ["ignore", "pipe", "pipe"] });
            let stderr = "";
            let stdout = "";
            child.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
            child.stdout.on("data", (d: Buffer) => { stdout += d.toString(); });
            const code = await new Promise<number | null>((done) => child.on("exit", (c) => done(c)));
            expect(code).to.equal(2);
            expect(stdout).to.equal("");
            expect(stderr).to.contain(flag);
        });
    }
});
