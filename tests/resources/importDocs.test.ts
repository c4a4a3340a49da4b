// The import sections of the resource docs say what is true: every ID they show imports the resource it names
// (over the provider protocol, against the emulator), and the consumers' bare `{consumer_project}` form that
// Pulumi GCP also lists is refused with a message giving the forms that work.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { EXAMPLE_VALUES } from "../../provider/functions/policyRecord";
import { resources } from "../../provider/resources";
import { useStack } from "../support/plugin";

const TOKEN = "ya29.import-docs-test-token";
const schema = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "schema.json"), "utf8"));
const { serviceName, consumerProject, role, member } = EXAMPLE_VALUES;

describe("import IDs in the docs", () => {
    const stack = useStack(TOKEN, [serviceName]);

    before(() => {
        // Each documented grant exists: unconditional, and under the condition the docs' IDs name by title.
        const conditionTitle = resources.flatMap((r) => r.importDoc.ids).map((id) => id.split(" ")).find((p) => p.length === 4)?.[3];
        expect(conditionTitle, "an ID with a condition title").to.be.a("string");
        const bindings = [
            { role, members: [member] },
            { role, members: [member], condition: { title: conditionTitle!, expression: "request.time < timestamp(\"2031-01-01T00:00:00Z\")" } },
        ];
        stack.emu.setPolicy(`services/${serviceName}`, { bindings });
        stack.emu.setPolicy(`services/${serviceName}/consumers/${consumerProject}`, { bindings });
    });

    for (const r of resources) {
        it(`${r.token}: every documented ID imports it, and the docs show it with the full token`, async () => {
            const description: string = schema.resources[r.token].description;
            for (const id of r.importDoc.ids) {
                expect(description).to.contain(`$ pulumi import ${r.token} `).and.contain(JSON.stringify(id));
                const imported = await stack.plugin.read(r.token, id);
                expect(imported.inputs.serviceName, id).to.equal(serviceName);
                expect(imported.id, id).to.be.a("string").and.not.equal("");
                if (r.token.includes("/consumers")) expect(imported.inputs.consumerProject, id).to.equal(consumerProject);
            }
        });
    }

    it("refuses the consumers' bare {consumer_project} form, naming the forms that work", async () => {
        for (const r of resources.filter((x) => x.token.includes("/consumers"))) {
            const err = await stack.plugin.read(r.token, consumerProject).then(() => undefined, (e: { details?: string }) => e.details ?? String(e));
            expect(err, r.token).to.be.a("string").and.contain("services/{serviceName}/consumers/{consumerProject}").and.contain("{serviceName}/{consumerProject}");
        }
    });
});
