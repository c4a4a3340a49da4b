// The Go program of tests/e2e/programs/go: one lookup through sdk/go (LookupServiceIamPolicy and its Output form,
// built against github.com/pulumi/pulumi/sdk/v3 at the pinned version), run by the real engine. See
// lookup-program.ts.

import * as path from "path";
import { describeLookupProgram } from "./lookup-program";
import { ROOT, SERVICE, ok, onPath, run } from "./support";

let program = "";

describeLookupProgram("Go", {
    runtime: "go",
    missing: () => (onPath("go") ? undefined : "go is not on PATH"),
    prepare: async (sb) => {
        program = path.join(sb.dir, "goprogram");
        const src = path.join(ROOT, "tests", "e2e", "programs", "go");
        await ok(run("go", ["build", "-mod=readonly", "-o", program, "."], { cwd: src, env: process.env, timeoutMs: 900_000 }),
            "go build (the Go program against sdk/go)");
    },
    run: (sb, dir, stack, destroy) => sb.exec(program,
        ["-work", dir, "-stack", stack, "-service", SERVICE, ...(destroy ? ["-destroy"] : [])], dir),
});
