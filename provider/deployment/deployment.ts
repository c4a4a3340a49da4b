// The crash journal's shell on a real machine: the journal (provider/journal/) decides, and this gives it what it
// asks for — the stack's folder under PULUMI_HOME with one file per plugin process (files.ts), this process, the
// clock, hashes and sleeps.
//
// Where: `$PULUMI_HOME/plugins-state/pulumi-resource-cloud/stacks/<project>--<stack>-<hash>`, the hash over project,
// stack and backend, so stacks of the same names in two backends keep apart.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { JournalHost, Opened } from "../journal/host";
import { Diagnostics, Journal, PolicyReader, RunCommand } from "../journal/journal";
import type { Line } from "../journal/knowledge";
import { Rules } from "../journal/rules";
import { PACKAGE_NAME } from "../package/version";
import { crypto, privateFolder, ProcessFile, thisProcess } from "./files";

export type { BaseContext, Diagnostics, EngineAlive, OperationKind, RunCommand } from "../journal/journal";

/** `$PULUMI_HOME/plugins-state/pulumi-resource-cloud`: this plugin's own state beside the user's Pulumi data. */
function stateRoot(env: NodeJS.ProcessEnv): string {
    const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return path.join(home, "plugins-state", `pulumi-resource-${PACKAGE_NAME}`);
}

/**
 * The backend the CLI uses, as far as a plugin can tell: PULUMI_BACKEND_URL, else the one `pulumi login` made
 * current (credentials.json). A project's `backend.url` in Pulumi.yaml is not seen.
 */
function backendOf(env: NodeJS.ProcessEnv): string {
    if (env.PULUMI_BACKEND_URL) return env.PULUMI_BACKEND_URL;
    try {
        const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
        const current = (JSON.parse(fs.readFileSync(path.join(home, "credentials.json"), "utf8")) as { current?: unknown }).current;
        return typeof current === "string" ? current : "";
    } catch {
        return "";
    }
}

const sha256 = (text: string) => crypto().createHash("sha256").update(text).digest("hex");

/** The stack's folder name, or undefined if `urn` is not a URN. */
function stackKey(urn: string, env: NodeJS.ProcessEnv): string | undefined {
    const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
    if (!m) return undefined;
    const [, stack, project] = m;
    const hash = sha256(JSON.stringify([project, stack, backendOf(env)])).slice(0, 12);
    return `${project}--${stack}`.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80) + `-${hash}`;
}

/** This machine, as the journal's host. */
export function nodeHost(env: NodeJS.ProcessEnv): JournalHost<Line> {
    return {
        now: () => Date.now(),
        self: thisProcess,
        // The engine's PID and address when known, else this process alone (hashed here, not at start: see crypto()).
        runId: (address) => (address ? sha256(`${process.ppid}|${address}`).slice(0, 16) : thisProcess().id),
        open(urn, header): Opened<Line> | undefined {
            const key = stackKey(urn, env);
            if (!key) return undefined;
            const root = stateRoot(env);
            const folder = path.join(root, "stacks", key);
            for (const dir of [root, path.join(root, "stacks"), folder]) {
                const why = privateFolder(dir);
                if (why) return { where: dir, why };
            }
            try {
                return { store: new ProcessFile<Line>(folder, header) };
            } catch (e) {
                return { where: folder, why: `a file cannot be written there (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
            }
        },
        digest: sha256,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms).unref()),
    };
}

/** The deployment around every resource operation: the journal on this machine. */
export class Deployment extends Journal {
    constructor(log: Diagnostics, iam: (provider: string) => PolicyReader | undefined, env: NodeJS.ProcessEnv = process.env,
        runCommand: () => RunCommand = () => ({})) {
        super(nodeHost(env), log, iam, runCommand, new Rules());
    }
}
