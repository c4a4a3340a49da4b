// Runs the TypeScript program of the current folder (index.ts beside its Pulumi.yaml, `runtime: nodejs`) on the
// folder's selected stack, as `pulumi up` (or `preview`, `destroy`) would with Pulumi's Node.js language host —
// which the tools `npm run tools` builds do not include (tools/README.md). The program is compiled against
// sdk/nodejs of this checkout and run as an Automation API inline program: the real engine and plugin, the stack
// and config that `pulumi stack init` and `pulumi config set` made in the folder, no language host.
//
//   node <checkout>/build/scripts/up-typescript.js [up|preview|destroy]     (default: up)

import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { LocalWorkspace, Stack } from "@pulumi/pulumi/automation";
import { compileNodeProgram, ROOT } from "../tests/e2e/support";

const COMMANDS = ["up", "preview", "destroy"] as const;

async function main(): Promise<void> {
    const command = process.argv[2] ?? "up";
    if (!(COMMANDS as readonly string[]).includes(command) || process.argv.length > 3) {
        throw new Error(`usage: node ${path.relative(process.cwd(), __filename)} [${COMMANDS.join("|")}] (in the program's folder)`);
    }
    const dir = process.cwd();
    for (const file of ["Pulumi.yaml", "index.ts"]) {
        if (!fs.existsSync(path.join(dir, file))) throw new Error(`${file} is not in ${dir}: run this in the TypeScript program's folder`);
    }
    // A folder of its own under build/ for each program folder, apart from the e2e tests' (build/e2e).
    const name = `program-${crypto.createHash("sha256").update(dir).digest("hex").slice(0, 12)}`;
    const entry = await compileNodeProgram(name, fs.readFileSync(path.join(dir, "index.ts"), "utf8"), path.join(ROOT, "build", "up-typescript"));
    // The program's exports are the stack's outputs, as with the language host.
    const program = async () => ({ ...(require(entry) as Record<string, unknown>) });
    const ws = await LocalWorkspace.create({ workDir: dir, program });
    const selected = await ws.stack();
    if (!selected) throw new Error(`no stack is selected in ${dir}: run \`pulumi stack init dev\` there first`);
    const stack = await Stack.select(selected.name, ws);
    const onOutput = (out: string) => process.stdout.write(out);
    if (command === "up") await stack.up({ onOutput });
    else if (command === "preview") await stack.preview({ onOutput });
    else await stack.destroy({ onOutput });
}

main().catch((e: unknown) => {
    process.stderr.write(`up-typescript: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
});
