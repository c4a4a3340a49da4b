// Writes the Pulumi Registry's pages, docs/_index.md and docs/installation-configuration.md, from the declarations
// (npm run schema, beside schema.json; npm run docs alone).
import * as fs from "fs";
import * as path from "path";
import { REGISTRY_DOCS, registryDoc } from "../provider/schema/registryDocs";

const dir = path.join(__dirname, "..", "..", "docs");
fs.mkdirSync(dir, { recursive: true });
for (const page of REGISTRY_DOCS) {
    const file = path.join(dir, page);
    fs.writeFileSync(file, registryDoc(page));
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || page}\n`);
}
