// The crash journal's host on a real machine: the journal (provider/journal/) decides, its shell (shell.ts) carries
// its actions out, and this gives the shell what it needs — the stack's folder with one file per plugin process
// (files.ts), beside it the stack's objects in a bucket where the journal travels with the state (bucketStore.ts),
// this process, the clock, hashes and sleeps.
//
// Where (location.ts decides): the backend's own folder or bucket for a `file://` or `gs://` backend, under
// `.pulumi/plugins-state/pulumi-resource-cloud/stacks/<key>`; the location PULUMI_CLOUD_JOURNAL_URL names, for any
// backend; else `$PULUMI_HOME/plugins-state/pulumi-resource-cloud/stacks/<key>`. The key is
// `<project>--<stack>-<hash>`, the hash over project, stack and backend, so stacks of the same names in two backends
// keep apart.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { RunCommand } from "../journal/events";
import type { Line } from "../journal/knowledge";
import { Rules } from "../journal/rules";
import { credentialsFor } from "../iam/auth";
import { PACKAGE_NAME } from "../package/version";
import { BucketStore } from "./bucketStore";
import { crypto, privateFolder, ProcessFile, thisProcess } from "./files";
import { Bucket } from "./gcs";
import type { JournalHost, Opened } from "./host";
import { BACKEND_PREFIX, backendName, backendOf, journalLocation, Location } from "./location";
import { Diagnostics, JournalShell, PolicyReader } from "./shell";

export type { BaseContext, Diagnostics, EngineAlive, OperationKind, RunCommand } from "./shell";

/** How long the journal's storage may take to answer one request, retries included. */
const STORAGE_BUDGET_MS = 10_000;

/** `$PULUMI_HOME/plugins-state/pulumi-resource-cloud`: this plugin's own state beside the user's Pulumi data. */
function stateRoot(env: NodeJS.ProcessEnv): string {
    const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return path.join(home, "plugins-state", `pulumi-resource-${PACKAGE_NAME}`);
}

function readText(file: string): string | undefined {
    try {
        return fs.readFileSync(file, "utf8");
    } catch {
        return undefined;
    }
}

const sha256 = (text: string) => crypto().createHash("sha256").update(text).digest("hex");

/** The stack's folder name, or undefined if `urn` is not a URN. */
function stackKey(urn: string, backend: string): string | undefined {
    const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
    if (!m) return undefined;
    const [, stack, project] = m;
    const hash = sha256(JSON.stringify([project, stack, backend])).slice(0, 12);
    return `${project}--${stack}`.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80) + `-${hash}`;
}

/** The Authorization header for a bucket, kept fresh in the background (the library refreshes its tokens). */
function bucketAuthorization(env: NodeJS.ProcessEnv): { header: () => string | undefined; problem: () => string | undefined } {
    const emulated = Boolean(env.STORAGE_EMULATOR_HOST);
    if (emulated && !env.GOOGLE_OAUTH_ACCESS_TOKEN) return { header: () => undefined, problem: () => undefined };
    const keyFrom = ["GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE_JSON", "GCLOUD_KEYFILE_JSON"].find((k) => env[k]);
    const credentials = credentialsFor({
        accessToken: env.GOOGLE_OAUTH_ACCESS_TOKEN || undefined,
        credentials: keyFrom ? env[keyFrom] : undefined,
        scopes: ["https://www.googleapis.com/auth/devstorage.read_write"],
        sources: { accessToken: "GOOGLE_OAUTH_ACCESS_TOKEN", credentials: keyFrom },
        noCredentialsHint: ". Set GOOGLE_CREDENTIALS or GOOGLE_OAUTH_ACCESS_TOKEN, as for `pulumi login gs://…`.",
    });
    let header: string | undefined;
    let problem: string | undefined = "the Google credentials were not ready yet";
    let asking = false;
    const ask = () => {
        if (asking) return;
        const got = credentials.authorization();
        if (typeof got === "string") {
            header = got;
            problem = undefined;
            return;
        }
        asking = true;
        got.then((h) => {
            header = h;
            problem = undefined;
        }, (e: unknown) => {
            problem = e instanceof Error ? e.message : String(e);
        }).finally(() => (asking = false));
    };
    ask();
    return {
        header: () => {
            ask();
            return header;
        },
        problem: () => (header ? undefined : problem),
    };
}

/**
 * This machine, as the journal's host. `warn`: said to the user when the journal cannot be where the stack's state
 * is, and is kept in PULUMI_HOME instead.
 */
export function nodeHost(env: NodeJS.ProcessEnv, warn: (message: string) => void = () => undefined, cwd = process.cwd()): JournalHost<Line> {
    const home = os.homedir();
    const backend = backendOf({ env, home, cwd, read: readText });
    const location = journalLocation(backend, env, home, cwd);
    const auth = location.kind === "bucket" ? bucketAuthorization(env) : undefined;
    let warned = false;
    const fallBack = (where: string, why: string, local: string) => {
        if (warned) return;
        warned = true;
        warn(`the plugin cannot keep its crash journal in ${where}: ${why}. It keeps it in ${local} instead, on this machine ` +
            "only: a run on another machine (a fresh CI runner) does not see what a crash here leaves. Nothing is removed " +
            "because of this.");
    };
    if (location.error) fallBack("the location named", location.error, stateRoot(env));
    /** Opens this process's file in `root`'s stack folder (made private), or says why it cannot. */
    const openFile = (root: string, key: string, header: Line): { file: ProcessFile<Line> } | { where: string; why: string } => {
        const folder = path.join(root, "stacks", key);
        for (const dir of [root, path.join(root, "stacks"), folder]) {
            const why = privateFolder(dir);
            if (why) return { where: dir, why };
        }
        try {
            return { file: new ProcessFile<Line>(folder, header) };
        } catch (e) {
            return { where: folder, why: `a file cannot be written there (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
        }
    };
    const inBucket = (at: Extract<Location, { kind: "bucket" }>, key: string, file: ProcessFile<Line>, header: Line): Opened<Line> => {
        const folder = [at.prefix, BACKEND_PREFIX, "stacks", key].filter(Boolean).join("/");
        const where = `gs://${at.bucket}/${folder}`;
        const problem = auth?.problem();
        if (problem) {
            fallBack(where, problem, file.folder);
            return { store: file };
        }
        try {
            const bucket = new Bucket(at.bucket, env, () => auth?.header(), STORAGE_BUDGET_MS);
            return { store: new BucketStore<Line>(file, bucket, folder, header, (why) => fallBack(where, why, file.folder)) };
        } catch (e) {
            fallBack(where, e instanceof Error ? e.message : String(e), file.folder);
            return { store: file };
        }
    };
    return {
        now: () => Date.now(),
        self: thisProcess,
        // The engine's PID and address when known, else this process alone (hashed here, not at start: see crypto()).
        runId: (address) => (address ? sha256(`${process.ppid}|${address}`).slice(0, 16) : thisProcess().id),
        open(urn, header): Opened<Line> | undefined {
            const key = stackKey(urn, backendName(backend, home, cwd));
            if (!key) return undefined;
            if (location.kind === "folder") {
                const root = path.join(location.root, BACKEND_PREFIX);
                const opened = openFile(root, key, header);
                if ("file" in opened) return { store: opened.file };
                fallBack(opened.where, opened.why, stateRoot(env));
            }
            const opened = openFile(stateRoot(env), key, header);
            if (!("file" in opened)) return opened;
            return location.kind === "bucket" ? inBucket(location, key, opened.file, header) : { store: opened.file };
        },
        digest: sha256,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms).unref()),
    };
}

/** The deployment around every resource operation: the journal's shell on this machine. */
export class Deployment extends JournalShell {
    constructor(log: Diagnostics, iam: (provider: string) => PolicyReader | undefined, env: NodeJS.ProcessEnv = process.env,
        runCommand: () => RunCommand = () => ({})) {
        super(nodeHost(env, (m) => log.warn(m)), log, iam, runCommand, new Rules());
    }
}
