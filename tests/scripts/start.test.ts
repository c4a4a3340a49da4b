// The README's first command: `npm start` runs the main job on the embedded emulator and prints both
// lookups' records for a person to read; `--real` runs the same lookups against another endpoint with the
// credentials the provider finds, and says which.

import { expect } from "chai";
import { execFile } from "child_process";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";

const SCRIPT = path.join(__dirname, "..", "..", "scripts", "start.js");
const SERVICE = "bookstore.endpoints.example-project.cloud.goog";

interface Run { code: number; stdout: string; stderr: string }

/** Runs `npm start -- ARGS` (the compiled script) with only the given environment (plus PATH and a bare HOME). */
function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
    return new Promise((resolve) =>
        execFile(process.execPath, [SCRIPT, ...args], { timeout: 50_000, env: { PATH: process.env.PATH, HOME: path.join(__dirname, "no-home"), ...env } },
            (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })));
}

/** In each table whose header ends with `last`, every row (to the next blank line) starts its last cell under it. */
function expectAligned(out: string, last: string): void {
    const lines = out.split("\n");
    const starts = lines.map((l, i) => (l.endsWith(`  ${last}`) ? i : -1)).filter((i) => i >= 0);
    expect(starts.length, `tables ending with ${last}`).to.be.greaterThan(0);
    for (const s of starts) {
        const at = lines[s].length - last.length;
        for (let i = s + 1; i < lines.length && lines[i].trim() !== ""; i++) {
            expect(lines[i].search(/\S+$/), `column of ${JSON.stringify(lines[i])}`).to.equal(at);
        }
    }
}

describe("npm start (the main job)", function () {
    this.timeout(60_000);

    it("prints both lookups from the emulator: role → members and audit tables, and the raw records", async () => {
        const { code, stdout: out } = await start([]);
        expect(code, out).to.equal(0);
        expect(out).to.contain("the plugin uses the access token from cloud:accessToken");
        expect(out).to.match(/== getServiceIamPolicy\(serviceName: "bookstore\.endpoints\.example-project\.cloud\.goog"\)/);
        expect(out).to.contain('"id": "services/bookstore.endpoints.example-project.cloud.goog"');
        expect(out).to.contain('"id": "services/bookstore.endpoints.example-project.cloud.goog/consumers/consumer-project-1"');
        expect(out).to.contain('"consumerProject": "consumer-project-1"');
        expect(out).to.match(/roles\/servicemanagement\.serviceConsumer\s+user:carol@example\.com/);
        expect(out, "no conditional binding: Google does not list Service Management as taking them").not.to.contain("[if ");
        expect(out).to.match(/roles\/servicemanagement\.serviceConsumer\s+group:readers@example\.com\n\s+user:alice@example\.com\n\s+user:bob@example\.com/);
        expect(out).to.match(/AUDITED SERVICE\s+LOG TYPE\s+EXEMPTED MEMBERS\n\s+allServices\s+ADMIN_READ\s+-\n\s+DATA_READ\s+user:bob@example\.com/);
        // MEMBERS starts in one column on every row.
        expectAligned(out, "MEMBERS");
        expectAligned(out, "EXEMPTED MEMBERS");
        expect(out).not.to.match(/ya29\.demo-/); // the demo token is never printed
    });

    it("--help prints every flag with its meaning and default, to stdout, and starts nothing", async () => {
        const { code, stdout, stderr } = await start(["--help"]);
        expect(code).to.equal(0);
        expect(stdout).to.match(/^usage: npm start/);
        for (const flag of ["--real", "--service NAME", "--consumer PROJECT", "--endpoint URL", "--help"]) expect(stdout).to.contain(`  ${flag}`);
        expect(stdout).to.contain("Default: https://servicemanagement.googleapis.com/v1/").and.contain("Default: off");
        expect(stdout + stderr).not.to.contain("Emulator at");
    });

    it("refuses an unknown flag with the usage", async () => {
        const { code, stderr } = await start(["--rael"]);
        expect(code).to.equal(2);
        expect(stderr).to.contain("unknown argument --rael").and.contain("usage: npm start");
    });

    describe("--real", () => {
        const TOKEN = "ya29.start-real-token-5d1f";
        let emu: Emulator;
        const real = ["--real", "--service", SERVICE, "--consumer", "consumer-project-1"];

        before(async () => {
            emu = await startEmulator({ accessTokens: [TOKEN] });
            emu.createService(SERVICE, "example-project");
            emu.setPolicy(`services/${SERVICE}`, { bindings: [{ role: "roles/viewer", members: ["user:real@example.com"] }] });
        });
        after(() => emu?.close());

        it("names the credential source it uses (here GOOGLE_OAUTH_ACCESS_TOKEN) and prints both lookups", async () => {
            const { code, stdout } = await start([...real, "--endpoint", emu.url], { GOOGLE_OAUTH_ACCESS_TOKEN: TOKEN });
            expect(code, stdout).to.equal(0);
            expect(stdout).to.contain(`Using ${emu.url} with the access token from environment variable GOOGLE_OAUTH_ACCESS_TOKEN.`);
            expect(stdout).to.match(/roles\/viewer\s+user:real@example\.com/);
            expect(stdout).to.contain("== getServiceConsumersIamPolicy(");
            expect(stdout).not.to.contain(TOKEN);
        });

        it("without credentials: runs and reports both lookups, each saying how to provide credentials", async () => {
            const { code, stdout } = await start([...real, "--endpoint", emu.url], { METADATA_SERVER_DETECTION: "none" });
            expect(code).to.equal(1);
            expect(stdout).to.contain("with Application Default Credentials (metadata server).");
            const errors = stdout.split("\n").filter((l) => l.startsWith("  error: "));
            expect(errors, stdout).to.have.length(2);
            for (const e of errors) {
                expect(e).to.contain("gcloud auth application-default login").and.contain("GOOGLE_APPLICATION_CREDENTIALS")
                    .and.contain("`GOOGLE_OAUTH_ACCESS_TOKEN=TOKEN npm start -- --real …`");
                // Named as an npm start user gives settings, not as stack config they never wrote.
                expect(e).not.to.match(/cloud:|pulumi config/);
            }
            expect(stdout).to.contain("== getServiceIamPolicy(").and.contain("== getServiceConsumersIamPolicy(");
        });

        it("names --endpoint, not the provider's config key, when the endpoint is wrong", async () => {
            const refused = await start([...real, "--endpoint", "http://127.0.0.1:9/v1/"], { GOOGLE_OAUTH_ACCESS_TOKEN: TOKEN });
            expect(refused.code).to.equal(1);
            expect(refused.stdout).to.contain("the connection was refused. Check the endpoint, from --endpoint").and.not.contain("cloud:");
            const plain = await start([...real, "--endpoint", "http://example.com/v1/"], { GOOGLE_OAUTH_ACCESS_TOKEN: TOKEN });
            expect(plain.code).to.equal(2);
            expect(plain.stderr).to.match(/^--endpoint: plain http:\/\/ is allowed only for a loopback host/).and.not.contain("serviceManagementCustomEndpoint");
        });

        it("needs --service and --consumer", async () => {
            const { code, stderr } = await start(["--real"]);
            expect(code).to.equal(2);
            expect(stderr).to.contain("--real needs --service NAME and --consumer PROJECT");
        });
    });
});
