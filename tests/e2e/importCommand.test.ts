// The `pulumi import` commands the resource docs and docs/reference.md show, run as printed with the real engine
// against the emulator holding what they name; and the short token a Pulumi GCP user may type is refused with the
// full one named.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { EXAMPLE_VALUES } from "../../provider/functions/policyRecord";
import { PulumiSandbox, ROOT, skipUnless, toolsMissing } from "./support";

const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));
const { serviceName, consumerProject, role, member } = EXAMPLE_VALUES;

/** Each `pulumi import TOKEN NAME "ID"` line of a text (the resource docs write them `$ pulumi import …`), as arguments. */
const importLines = (text: string): string[][] =>
    [...text.matchAll(/^\s*(?:\$ )?pulumi import (\S+) (\S+) ("[^"]*")$/gm)].map((m) => ["import", m[1], m[2], JSON.parse(m[3]) as string]);
/** docs/reference.md's. */
const REFERENCE_COMMANDS = importLines(fs.readFileSync(path.join(ROOT, "docs", "reference.md"), "utf8"));
/** Every one in the resource docs, and docs/reference.md's. */
const COMMANDS: string[][] = [
    ...Object.values(schema.resources as Record<string, { description: string }>).flatMap((r) => importLines(r.description)),
    ...REFERENCE_COMMANDS,
];

describe("e2e: the docs' `pulumi import` commands with the real engine", function () {
    this.timeout(600_000);
    this.slow(60_000);

    const token = `e2e-import-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(serviceName, "example-project");
        const bindings = [
            { role, members: [member] },
            { role, members: [member], condition: { title: "expires-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" } },
        ];
        emu.setPolicy(`services/${serviceName}`, { bindings });
        emu.setPolicy(`services/${serviceName}/consumers/${consumerProject}`, { bindings });
        sb = await PulumiSandbox.create("import");
    });

    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("every documented command imports its resource (each in a fresh stack), writing nothing", async () => {
        expect(COMMANDS.length).to.be.at.least(6 * 2);
        expect(REFERENCE_COMMANDS, "docs/reference.md gives a complete `pulumi import` line").to.have.length.at.least(1);
        emu.resetRequests();
        for (const [i, args] of COMMANDS.entries()) {
            const dir = sb.project(`import${i}`, { "Pulumi.yaml": `name: import${i}\nruntime: yaml\n` });
            await sb.initStack(dir, emu.url, token);
            const r = await sb.tryPulumi([...args, "--yes"], dir);
            expect(r.code, `pulumi ${args.join(" ")}\n${r.stdout}\n${r.stderr}`).to.equal(0);
            expect(r.stdout, args.join(" ")).to.match(/1 imported/);
        }
        expect(emu.requests.filter((q) => q.path.endsWith(":setIamPolicy"))).to.deep.equal([]);
    });

    it("the short token cloud:endpoints:ServiceIamMember is refused, naming the full token", async () => {
        const dir = sb.project("short", { "Pulumi.yaml": "name: short\nruntime: yaml\n" });
        await sb.initStack(dir, emu.url, token);
        const r = await sb.tryPulumi(["import", "cloud:endpoints:ServiceIamMember", "member", `services/${serviceName} ${role} ${member}`, "--yes"], dir);
        expect(r.code).not.to.equal(0);
        expect(r.stdout + r.stderr).to.contain('unknown resource type "cloud:endpoints:ServiceIamMember" (use the full token "cloud:endpoints/serviceIamMember:ServiceIamMember")');
    });
});
