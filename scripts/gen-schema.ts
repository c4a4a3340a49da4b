// Writes schema.json from the definitions (npm run schema).
import * as fs from "fs";
import * as path from "path";
import { schemaText } from "../provider/schema/schema";

const file = path.join(__dirname, "..", "..", "schema.json");
fs.writeFileSync(file, schemaText());
process.stdout.write(`wrote ${path.relative(process.cwd(), file) || "schema.json"}\n`);
