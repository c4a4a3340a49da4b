// Every program in the README, as written: its YAML programs (each a Pulumi.yaml) and its TypeScript program
// (compiled against sdk/nodejs, run as an Automation API inline program), run with the real engine and the plugin
// installed from its tarball, against the emulator, configured the way "Trying the examples" says (stack config:
// the endpoint, and the token as a secret). Up, outputs checked, destroy. A README edit that breaks an example
// breaks this test.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { CONSUMER, PulumiSandbox, ROOT, SERVICE, compileNodeProgram, inlineStack, skipUnless, stackOutputs, toolsMissing } from "./support";

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
/** The README's fenced blocks of one language, as written. */
const blocks = (lang: string) => [...README.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]);
const yamlPrograms = blocks("yaml").filter((b) => /^runtime: yaml$/m.test(b));
const tsPrograms = blocks("ts");
const nameOf = (program: string) => /^name: (\S+)$/m.exec(program)?.[1] ?? "(no name)";

const SERVICE_PARENT = `services/${SERVICE}`;
const CONSUMER_PARENT = `services/${SERVICE}/consumers/${CONSUMER}`;
const SEEDED_SERVICE = { role: "roles/servicemanagement.serviceConsumer", members: ["user:seeded@example.com"] };
const SEEDED_CONSUMER = { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:seeded@consumer-project-1.iam.gserviceaccount.com"] };

describe("e2e: the README's example programs, as written, with the real engine", function () {
    this.timeout(300_000);
    this.slow(30_000);

    const token = `e2e-readme-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    const bindingsOf = (parent: string) => emu.getPolicy(parent).bindings ?? [];

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(SERVICE, "example-project");
        sb = await PulumiSandbox.create("readme");
    });
    beforeEach(() => {
        emu?.setPolicy(SERVICE_PARENT, { bindings: [SEEDED_SERVICE] });
        emu?.setPolicy(CONSUMER_PARENT, { bindings: [SEEDED_CONSUMER] });
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("the README shows the programs below and configures a stack the way this test does", () => {
        expect(yamlPrograms.map(nameOf)).to.deep.equal(["endpoints-iam", "endpoints-policy"]);
        expect(tsPrograms).to.have.length(1);
        // initStack's two commands, as the README gives them.
        expect(README).to.match(/^pulumi config set cloud:serviceManagementCustomEndpoint "\$EMULATOR"$/m);
        expect(README).to.match(/^pulumi config set --secret cloud:accessToken \S+$/m);
    });

    /** Runs one YAML program: up (its outputs checked by `check`), then destroy. */
    async function yamlProgram(name: string, check: (out: Record<string, unknown>) => void): Promise<void> {
        const program = yamlPrograms.find((p) => nameOf(p) === name);
        expect(program, `the README's YAML program ${name}`).to.be.a("string");
        const dir = sb.project(name, { "Pulumi.yaml": program! });
        await sb.initStack(dir, emu.url, token);
        await sb.pulumi(["up", "--yes"], dir);
        check(await stackOutputs(sb, dir));
        await sb.pulumi(["destroy", "--yes"], dir);
    }

    it("YAML endpoints-iam: both lookups, their etag, policyData and consumer bindings", async () => {
        await yamlProgram("endpoints-iam", (out) => {
            expect(out.etag).to.equal(emu.getPolicy(SERVICE_PARENT).etag);
            expect(JSON.parse(out.policyData as string)).to.deep.equal({ bindings: [SEEDED_SERVICE] });
            expect(out.consumerBindings).to.deep.equal([SEEDED_CONSUMER]);
        });
    });

    it("YAML endpoints-policy: builds a policy, applies it, reads it back byte-equal; destroy undoes both grants", async () => {
        await yamlProgram("endpoints-policy", (out) => {
            expect(out.sameAsBuilt).to.be.a("string").and.equal(out.built);
            const applied = JSON.parse(out.sameAsBuilt as string);
            expect(applied.bindings.map((b: { role: string }) => b.role))
                .to.deep.equal(["roles/servicemanagement.admin", "roles/servicemanagement.serviceConsumer"]);
            // No conditional binding: Google does not list Service Management as taking them.
            expect(applied.bindings.some((b: { condition?: unknown }) => b.condition)).to.equal(false);
            // The policy owns the service's whole policy: the seeded grant is gone.
            expect(bindingsOf(SERVICE_PARENT)).to.have.length(2);
            expect(bindingsOf(SERVICE_PARENT).flatMap((b) => b.members)).not.to.include(SEEDED_SERVICE.members[0]);
            // The member joins the consumer policy beside the seeded grant.
            expect(bindingsOf(CONSUMER_PARENT).filter((b) => b.role === SEEDED_CONSUMER.role).flatMap((b) => b.members)).to.have.members(
                ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com", ...SEEDED_CONSUMER.members]);
        });
        expect(bindingsOf(SERVICE_PARENT)).to.deep.equal([]);
        expect(bindingsOf(CONSUMER_PARENT)).to.deep.equal([SEEDED_CONSUMER]);
    });

    it("TypeScript: the output form and the direct form of the lookups", async () => {
        const entry = await compileNodeProgram("readme-nodejs", tsPrograms[0]);
        // The program is a module run for its top-level statements; its exports are the stack's outputs.
        const stack = await inlineStack(sb, "readme-ts", async () => {
            delete require.cache[entry];
            return { ...(require(entry) as Record<string, unknown>) };
        }, emu.url, token);
        const r = await stack.up();
        const out = Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, v.value]));
        expect(out.consumers).to.deep.equal(SEEDED_SERVICE.members);
        expect(out.etag).to.equal(emu.getPolicy(CONSUMER_PARENT).etag);
        await stack.destroy();
    });
});
