// Temporary folders for a test run: all under one root, removed (with one exit listener) when the test process
// exits.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";

let root: string | undefined;

/** A fresh temporary folder named after `name`, removed when the test process exits. */
export function tempDir(name: string): string {
    if (!root) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-tests-"));
        root = dir;
        process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    }
    return fs.mkdtempSync(path.join(root, `${name}-`));
}
