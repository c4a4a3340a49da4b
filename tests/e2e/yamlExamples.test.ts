// The YAML examples in schema.json's descriptions, each run as a Pulumi YAML program (`pulumi up`, then
// `pulumi destroy`) with the real engine and pulumi-language-yaml, against the emulator holding the service and
// consumer the examples name: the lookups export the policy, the resources grant what they say.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { EXAMPLE_VALUES } from "../../provider/functions/policyRecord";
import { PulumiSandbox, ROOT, skipUnless, stackOutputs, toolsMissing } from "./support";

const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));
const { serviceName, consumerProject, role, member } = EXAMPLE_VALUES;
const PARENTS = [`services/${serviceName}`, `services/${serviceName}/consumers/${consumerProject}`];

/** [token, YAML example] for every function and resource. */
const EXAMPLES: [string, string][] = [schema.functions, schema.resources].flatMap((items: Record<string, { description: string }>) =>
    Object.entries(items).map(([token, spec]): [string, string] => {
        const m = spec.description.match(/```yaml\n([\s\S]*?)\n```/);
        if (!m) throw new Error(`${token} has no YAML example`);
        return [token, m[1]];
    }));

describe("e2e: the YAML examples in the docs, run with the real engine", function () {
    this.timeout(600_000);
    this.slow(60_000);

    const token = `e2e-yaml-examples-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    const granted = (parent: string) => (emu.getPolicy(parent).bindings ?? []).some((b) => b.role === role && b.members.includes(member));

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(serviceName, "example-project");
        sb = await PulumiSandbox.create("yaml-examples");
    });

    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    EXAMPLES.forEach(([itemToken, example], i) => {
        it(`${itemToken}: up does what the example says; destroy undoes it`, async () => {
            for (const p of PARENTS) emu.setPolicy(p, { bindings: [] });
            const dir = sb.project(`example${i}`, { "Pulumi.yaml": `name: example${i}\nruntime: yaml\n${example}\n` });
            await sb.initStack(dir, emu.url, token);
            await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
            const parent = PARENTS[itemToken.includes("/consumers") ? 1 : 0];
            if (itemToken.includes(":get")) {
                const out = await stackOutputs(sb, dir);
                expect(out, itemToken).to.have.property("policyData").that.is.a("string");
            } else {
                expect(granted(parent), `${itemToken} granted ${role} to ${member}`).to.equal(true);
            }
            await sb.pulumi(["destroy", "--yes", "--skip-preview"], dir);
            expect(granted(parent), `${itemToken} after destroy`).to.equal(false);
        });
    });
});
