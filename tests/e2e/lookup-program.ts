// One suite, two languages: a program doing one lookup (direct and output form) through a generated SDK, run
// by the real engine, configured by stack config set with `pulumi config set` (endpoint, secret token), against
// the emulator. python.test.ts and go.test.ts fill in how to build and run their program.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import { Emulator, startEmulator } from "../../emulator";
import { PulumiSandbox, RunResult, SERVICE, assertNeverInClear, skipUnless, toolsMissing } from "./support";

const SERVICE_PARENT = `services/${SERVICE}`;
const ROLE = "roles/servicemanagement.serviceConsumer";
const SEEDED = [
    { role: ROLE, members: ["group:readers@example.com", "user:alice@example.com"] },
    { role: "roles/viewer", members: ["user:bob@example.com"] },
];

export interface LookupProgram {
    /** Why it cannot run here (a missing toolchain), or undefined. */
    missing(): string | undefined;
    /** Builds whatever is needed (once); `sb` is the sandbox the program will run in. */
    prepare(sb: PulumiSandbox): Promise<void>;
    /** Runs the program's `up` (or destroy) in `dir` for stack `stack`; the last stdout line of `up` is the outputs JSON. */
    run(sb: PulumiSandbox, dir: string, stack: string, destroy: boolean): Promise<RunResult>;
    /** Pulumi.yaml's runtime. */
    runtime: string;
}

export function describeLookupProgram(language: string, p: LookupProgram): void {
    describe(`e2e: ${language} program (sdk/${language === "Go" ? "go" : "python"}) with the real engine`, function () {
        this.timeout(600_000);
        this.slow(60_000);

        const token = `e2e-${language.toLowerCase()}-${crypto.randomBytes(12).toString("hex")}`;
        let emu: Emulator;
        let sb: PulumiSandbox;
        let dir: string;

        before(async function () {
            skipUnless(this, toolsMissing(["pulumi"]) ?? p.missing());
            emu = await startEmulator({ accessTokens: [token] });
            emu.createService(SERVICE, "example-project");
            emu.setPolicy(SERVICE_PARENT, { bindings: SEEDED });
            sb = await PulumiSandbox.create(language.toLowerCase());
            await p.prepare(sb);
            dir = sb.project(language.toLowerCase(), {
                "Pulumi.yaml": `name: endpoints-${language.toLowerCase()}\nruntime: ${p.runtime}\n`,
            });
            await sb.initStack(dir, emu.url, token);
        });

        after(async () => {
            await emu?.close();
            sb?.dispose();
        });

        it("runs the lookup in both forms and exports its results; writes nothing", async () => {
            emu.resetRequests();
            const r = await p.run(sb, dir, "dev", false);
            if (r.code !== 0) throw new Error(`the ${language} program failed (${r.code})\n${r.stdout}\n${r.stderr}`);
            const outputs = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, { value: unknown; secret: boolean }>;
            const policy = emu.getPolicy(SERVICE_PARENT);
            expect(outputs.directId.value).to.equal(SERVICE_PARENT);
            expect(outputs.directEtag.value).to.equal(policy.etag);
            expect(JSON.parse(outputs.directPolicyData.value as string)).to.deep.equal({ bindings: SEEDED });
            expect(outputs.consumers.value).to.deep.equal(SEEDED[0].members);
            expect(emu.requests.filter((q) => q.path.endsWith(":getIamPolicy")).length).to.be.greaterThan(0);
            expect(emu.requests.filter((q) => q.path.endsWith(":setIamPolicy"))).to.deep.equal([]);
            expect(emu.getPolicy(SERVICE_PARENT).bindings).to.deep.equal(SEEDED);
        });

        it("keeps the token encrypted: config file, state, output", async () => {
            const config = fs.readFileSync(`${dir}/Pulumi.dev.yaml`, "utf8");
            expect(config).to.match(/cloud:accessToken:\s*\n\s*secure: /);
            const exported = await sb.pulumi(["stack", "export"], dir);
            const providers = JSON.parse(exported.stdout).deployment.resources
                .filter((res: { type: string }) => res.type === "pulumi:providers:cloud");
            expect(providers).to.have.length(1);
            expect(providers[0].inputs.accessToken).to.have.property("ciphertext");
            const d = await p.run(sb, dir, "dev", true);
            if (d.code !== 0) throw new Error(`destroy failed (${d.code})\n${d.stdout}\n${d.stderr}`);
            assertNeverInClear(sb, token, [exported.stdout, config]);
        });
    });
}
