// A Python virtualenv with pinned packages from PyPI, for tests that drive something through a Python library.
// Built on first use into the user cache (keyed by the requirements and the Python version, so a change
// rebuilds), and rebuilt whenever it is missing or incomplete: the cache saves time, nothing depends on it.

import { execFile } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { promisify } from "util";

const run = promisify(execFile);

/** Why no virtualenv can be made here, or undefined. */
export async function pythonMissing(): Promise<string | undefined> {
    try {
        await run("python3", ["-c", "import venv, ensurepip"]);
        return undefined;
    } catch {
        return "python3 with the venv module is not installed (Debian: apt-get install python3-venv)";
    }
}

/** The python executable of a virtualenv holding exactly `requirementsFile`'s pinned packages. */
export async function pythonWith(requirementsFile: string): Promise<string> {
    const { stdout: version } = await run("python3", ["--version"]);
    const key = createHash("sha256").update(fs.readFileSync(requirementsFile)).update(version).digest("hex").slice(0, 16);
    const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache");
    const dir = path.join(cache, "pulumi-resource-cloud", "venvs", key);
    const python = path.join(dir, "bin", "python");
    const stamp = path.join(dir, ".complete");
    if (fs.existsSync(stamp)) return python;
    // Built beside its final place and renamed in, so a run cut short never leaves a half-built venv behind.
    const staging = `${dir}.${process.pid}.tmp`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await run("python3", ["-m", "venv", staging]);
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" };
    await run(path.join(staging, "bin", "python"), ["-m", "pip", "install", "--quiet", "-r", requirementsFile], { env, timeout: 600_000 });
    fs.writeFileSync(path.join(staging, ".complete"), "");
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(staging, dir);
    return python;
}
