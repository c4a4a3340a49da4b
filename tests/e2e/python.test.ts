// The Python program of tests/e2e/programs/python: one lookup through sdk/python (pip-installed into a venv beside
// `pulumi` from PyPI at the pinned version), run by the real engine. See lookup-program.ts.

import * as path from "path";
import { describeLookupProgram } from "./lookup-program";
import { ROOT, SERVICE, onPath, pythonWithSdk } from "./support";

let python = "";

describeLookupProgram("Python", {
    runtime: "python",
    missing: () => (onPath("python3") ? undefined : "python3 is not on PATH"),
    prepare: async () => {
        python = await pythonWithSdk();
    },
    run: (sb, dir, stack, destroy) => sb.exec(python,
        [path.join(ROOT, "tests", "e2e", "programs", "python", "main.py"), dir, stack, SERVICE, ...(destroy ? ["--destroy"] : [])], dir),
});
