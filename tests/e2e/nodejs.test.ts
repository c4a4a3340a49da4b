// The TypeScript program of tests/e2e/programs/nodejs, using the generated SDK (sdk/nodejs, compiled with tsc),
// run by the real engine (the pinned pulumi CLI) as an Automation API inline program: the pulumi-language-nodejs
// host is a Go module that cannot be fetched here, and an inline program needs none (the Automation API serves
// the language runtime in process and points the CLI at it). The plugin comes from its installed tarball.
//
// Covers: the direct form and the output form (with dependsOn) of the lookups, a preview in which the lookup's
// input is unknown, configuration by stack config (endpoint, secret token) and by an explicit provider resource
// (another emulator, another secret token), and neither token ever in the clear.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { LocalWorkspace, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import { Emulator, startEmulator } from "../../emulator";
import { NPM_PACKAGE_NAME } from "../../provider/schema";
import {
    CONSUMER, PulumiSandbox, ROOT, SERVICE, assertNeverInClear, compiledNodeSdk, copyTree, ok, run, skipUnless, toolsMissing,
} from "./support";

const SERVICE_PARENT = `services/${SERVICE}`;
const CONSUMER_PARENT = `services/${SERVICE}/consumers/${CONSUMER}`;
const ROLE = "roles/servicemanagement.serviceConsumer";
const MEMBER = "user:typescript@example.com";
const SEEDED = { role: ROLE, members: ["user:existing@example.com"] };
const CONSUMER_SEED = { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"] };
const EXPLICIT_SEED = { role: "roles/viewer", members: ["user:seen-through-the-explicit-provider@example.com"] };

interface ProgramModule {
    program(o: {
        service: string; consumer: string; member: string; explicitEndpoint: string; explicitToken: string;
    }): () => Promise<Record<string, unknown>>;
}

describe("e2e: TypeScript program (sdk/nodejs) with the real engine", function () {
    this.timeout(300_000);
    this.slow(30_000);

    const token = `e2e-ts-${crypto.randomBytes(12).toString("hex")}`;
    const explicitToken = `e2e-ts-explicit-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let other: Emulator;
    let sb: PulumiSandbox;
    let stack: Stack;
    const printed: string[] = [];

    const requests = (e: Emulator, suffix: string) => e.requests.filter((r) => r.path.endsWith(suffix));
    const membersOf = (e: Emulator, role: string) => (e.getPolicy(SERVICE_PARENT).bindings ?? [])
        .filter((b) => b.role === role).flatMap((b) => b.members).sort();

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi"]));
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(SERVICE, "example-project");
        emu.setPolicy(SERVICE_PARENT, { bindings: [SEEDED] });
        emu.setPolicy(CONSUMER_PARENT, { bindings: [CONSUMER_SEED] });
        other = await startEmulator({ accessTokens: [explicitToken] });
        other.createService(SERVICE, "example-project");
        other.setPolicy(SERVICE_PARENT, { bindings: [EXPLICIT_SEED] });

        // The SDK compiled with its own tsconfig, linked under its npm name; the program compiled against it.
        const sdk = await compiledNodeSdk();
        const stage = path.join(ROOT, "build", "e2e", "program-nodejs");
        fs.rmSync(stage, { recursive: true, force: true });
        fs.mkdirSync(path.join(stage, "node_modules"), { recursive: true });
        for (const f of ["index.ts", "tsconfig.json"]) {
            copyTree(path.join(ROOT, "tests", "e2e", "programs", "nodejs", f), path.join(stage, f));
        }
        fs.symlinkSync(sdk, path.join(stage, "node_modules", NPM_PACKAGE_NAME), "dir");
        await ok(run(path.join(ROOT, "node_modules", ".bin", "tsc"), ["-p", stage], { cwd: stage, env: process.env }),
            "tsc -p (the TypeScript program against sdk/nodejs)");
        const { program } = require(path.join(stage, "bin", "index.js")) as ProgramModule;

        sb = await PulumiSandbox.create("nodejs");
        const dir = sb.project("nodejs", {});
        const pulumiCommand = await PulumiCommand.get({ root: path.dirname(sb.bin) });
        const envVars: Record<string, string> = {};
        for (const [k, v] of Object.entries(sb.env)) if (v !== undefined) envVars[k] = v;
        stack = await LocalWorkspace.createOrSelectStack({
            stackName: "dev",
            projectName: "endpoints-ts",
            program: program({ service: SERVICE, consumer: CONSUMER, member: MEMBER, explicitEndpoint: other.url, explicitToken }),
        }, {
            workDir: dir,
            pulumiHome: sb.env.PULUMI_HOME,
            pulumiCommand,
            envVars,
            secretsProvider: "passphrase",
            projectSettings: { name: "endpoints-ts", runtime: "nodejs", backend: { url: sb.env.PULUMI_BACKEND_URL } },
        });
        await stack.setConfig("cloud:serviceManagementCustomEndpoint", { value: emu.url });
        await stack.setConfig("cloud:accessToken", { value: token, secret: true });
    });

    after(async () => {
        await emu?.close();
        await other?.close();
        sb?.dispose();
    });

    it("previews with the lookup's input unknown: the dependent lookup does not run, nothing is written", async () => {
        emu.resetRequests();
        other.resetRequests();
        const r = await stack.preview({ diff: true });
        printed.push(r.stdout, r.stderr);
        expect(r.changeSummary).to.include({ create: 3 }); // the stack, the grant, the explicit provider
        // The direct lookup ran (consumer policy), and so did the explicit provider's (other emulator)...
        expect(requests(emu, `consumers/${CONSUMER}:getIamPolicy`)).to.have.length.greaterThan(0);
        expect(requests(other, `${SERVICE}:getIamPolicy`)).to.have.length.greaterThan(0);
        // ...but not the one whose input was unknown; and nothing was written.
        expect(requests(emu, `${SERVICE}:getIamPolicy`)).to.deep.equal([]);
        expect(requests(emu, ":setIamPolicy")).to.deep.equal([]);
        expect(r.stdout).to.match(/afterEtag\s*: \[unknown\]/);
        expect(r.stdout).to.match(/consumers\s*: \[unknown\]/);
        expect(r.stdout).to.match(/directId\s*: "services\//);
    });

    it("up: grants the member; the output form reads the policy after it; the explicit provider reads the other endpoint", async () => {
        emu.resetRequests();
        const r = await stack.up();
        printed.push(r.stdout, r.stderr);
        expect(r.summary.result).to.equal("succeeded");
        expect(r.summary.resourceChanges).to.include({ create: 3 });
        expect(membersOf(emu, ROLE)).to.deep.equal([MEMBER, ...SEEDED.members].sort());

        const out = Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, v.value]));
        expect(out.directId).to.equal(CONSUMER_PARENT);
        expect(out.directBindings).to.deep.equal([CONSUMER_SEED]);
        expect(out.consumers).to.deep.equal([MEMBER, ...SEEDED.members].sort());
        expect(out.afterEtag).to.equal(emu.getPolicy(SERVICE_PARENT).etag);
        expect(JSON.parse(out.explicitPolicyData as string)).to.deep.equal({ bindings: [EXPLICIT_SEED] });
        expect(out.grantId).to.be.a("string").and.include(MEMBER);
    });

    it("a second up changes nothing", async () => {
        emu.resetRequests();
        const r = await stack.up();
        printed.push(r.stdout, r.stderr);
        expect(r.summary.resourceChanges).to.deep.equal({ same: 3 });
        expect(requests(emu, ":setIamPolicy")).to.deep.equal([]);
    });

    it("destroy removes only the program's member", async () => {
        const r = await stack.destroy();
        printed.push(r.stdout, r.stderr);
        expect(r.summary.resourceChanges).to.include({ delete: 3 });
        expect(membersOf(emu, ROLE)).to.deep.equal(SEEDED.members);
    });

    it("never shows either token: not in output, state or backend files", async () => {
        const exported = await stack.exportStack();
        const text = JSON.stringify(exported);
        assertNeverInClear(sb, token, [...printed, text]);
        assertNeverInClear(sb, explicitToken, [...printed, text]);
    });
});
