// The Pulumi Registry's pages are rendered from the declarations (provider/schema/registryDocs.ts): the committed files
// must be exactly what they render, hold one example per language, and name every config key with its
// environment fallback.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { configProperties } from "../../provider/protocol/config";
import { LANGUAGES } from "../../provider/declare/examples";
import { REGISTRY_DOCS, registryDoc } from "../../provider/schema/registryDocs";

const root = path.join(__dirname, "..", "..", "..");
const committed = (page: string) => fs.readFileSync(path.join(root, "docs", page), "utf8");

describe("docs/ (the Pulumi Registry's pages)", () => {
    for (const page of REGISTRY_DOCS) {
        it(`docs/${page} is exactly what the declarations render (run \`npm run schema\` after changing them)`, () => {
            expect(committed(page)).to.equal(registryDoc(page));
        });
    }

    it("_index.md has one example per language: TypeScript, Python, Go, C#, Java, YAML", () => {
        const text = committed("_index.md");
        for (const l of LANGUAGES) expect(text.split("```" + l + "\n").length - 1, l).to.equal(1);
        expect(LANGUAGES).to.deep.equal(["typescript", "python", "go", "csharp", "java", "yaml"]);
    });

    it("installation-configuration.md names every config key with its environment fallback", () => {
        const text = committed("installation-configuration.md");
        for (const [key, p] of Object.entries(configProperties)) {
            const row = text.split("\n").find((l) => l.startsWith(`| \`${key}\` |`));
            expect(row, key).to.be.a("string");
            for (const e of p.env ?? []) expect(row, `${key}: ${e}`).to.contain(`\`${e}\``);
        }
    });
});
