// Where a stack's crash journal lives: decided here, from what the CLI's environment and files say (read by the
// caller), without I/O. The journal goes where the stack's state goes when that is a place every runner of the
// stack reaches and the plugin can write (a `gs://` bucket, a `file://` folder), so a crash on one runner is seen
// by the next; for any other backend where the user names one (PULUMI_CLOUD_JOURNAL_URL); else in PULUMI_HOME.

import * as path from "path";

/** The environment variable that names the journal's location for a backend that has none of its own. */
export const JOURNAL_URL_ENV = "PULUMI_CLOUD_JOURNAL_URL";

/** Under a DIY backend's root: a prefix Pulumi never lists nor deletes (it keeps to `.pulumi/{meta.yaml,stacks,history,backups,locks}`). */
export const BACKEND_PREFIX = ".pulumi/plugins-state/pulumi-resource-cloud";

export type Location =
    | { kind: "home" }
    /** A folder (absolute), the root under which `plugins-state/…` goes. */
    | { kind: "folder"; root: string; url: string }
    /** A bucket and the prefix (no leading or trailing slash; may be empty) under which `.pulumi/…` goes. */
    | { kind: "bucket"; bucket: string; prefix: string; url: string };

/**
 * `backend.url` of a project's Pulumi.yaml (its block form, `backend:` then an indented `url:`), undefined when it has
 * none. Enough of YAML for the one key: a project file whose backend is written otherwise is not seen.
 */
export function projectBackendUrl(yaml: string): string | undefined {
    const lines = yaml.split(/\r?\n/);
    const start = lines.findIndex((l) => /^backend:\s*(#.*)?$/.test(l));
    if (start < 0) return undefined;
    for (const line of lines.slice(start + 1)) {
        if (/^\S/.test(line)) return undefined; // the next top-level key: no url in the block
        const m = /^\s+url:\s*(.*?)\s*$/.exec(line);
        if (m) return unquote(m[1].replace(/\s+#.*$/, "")) || undefined;
    }
    return undefined;
}

function unquote(s: string): string {
    const m = /^(["'])(.*)\1$/.exec(s);
    return m ? m[2] : s;
}

/** What the backend discovery reads: the environment, and files (their text, undefined when unreadable). */
export interface Sources {
    env: NodeJS.ProcessEnv;
    home: string;
    cwd: string;
    read(file: string): string | undefined;
}

/**
 * The backend the CLI uses, found as the CLI finds it: PULUMI_BACKEND_URL, then `backend.url` in the project's
 * Pulumi.yaml (the plugin runs in the project's folder), then `current` in credentials.json
 * (PULUMI_CREDENTIALS_PATH, else PULUMI_HOME). "" when none is found.
 */
export function backendOf(s: Sources): string {
    if (s.env.PULUMI_BACKEND_URL) return s.env.PULUMI_BACKEND_URL;
    for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
        const text = s.read(path.join(s.cwd, name));
        if (text === undefined) continue;
        const url = projectBackendUrl(text);
        if (url) return url;
        break;
    }
    const pulumiHome = s.env.PULUMI_HOME || path.join(s.home, ".pulumi");
    const creds = s.read(path.join(s.env.PULUMI_CREDENTIALS_PATH || pulumiHome, "credentials.json"));
    try {
        const current = (JSON.parse(creds ?? "{}") as { current?: unknown }).current;
        return typeof current === "string" ? current : "";
    } catch {
        return "";
    }
}

/**
 * A `gs://` or `file://` URL as a location; undefined for any other. `file://~` and relative paths are read as the
 * CLI reads them (the home folder; the working folder). A query (`?no_tmp_dir=…`) says nothing of where.
 */
export function locationOf(url: string, home: string, cwd: string): Exclude<Location, { kind: "home" }> | undefined {
    const bare = url.replace(/\?.*$/, "");
    const gs = /^gs:\/\/([^/]+)\/*(.*?)\/*$/.exec(bare);
    if (gs) {
        const prefix = gs[2].replace(/\/{2,}/g, "/");
        return { kind: "bucket", bucket: gs[1], prefix, url: `gs://${gs[1]}${prefix ? `/${prefix}` : ""}` };
    }
    const file = /^file:\/\/(.*)$/.exec(bare);
    if (file) {
        let p = file[1] || ".";
        if (p === "~" || p.startsWith("~/")) p = path.join(home, p.slice(1));
        const root = path.resolve(cwd, p);
        return { kind: "folder", root, url: `file://${root}` };
    }
    return undefined;
}

/**
 * Where a stack's journal lives: the location PULUMI_CLOUD_JOURNAL_URL names, else the backend's own when it is a
 * bucket or a folder, else PULUMI_HOME. `error`: the variable is set to something that is not a location (said to
 * the user; the journal then stays in PULUMI_HOME).
 */
export function journalLocation(backend: string, env: NodeJS.ProcessEnv, home: string, cwd: string): Location & { error?: string } {
    const named = env[JOURNAL_URL_ENV];
    if (named) {
        const at = locationOf(named, home, cwd);
        if (at) return at;
        return { kind: "home", error: `${JOURNAL_URL_ENV} is ${JSON.stringify(named)}: it must be a gs://bucket[/prefix] or a file:// folder` };
    }
    return locationOf(backend, home, cwd) ?? { kind: "home" };
}

/**
 * The name that tells a backend apart in a stack's key: a bucket or folder URL in one spelling (a trailing slash or
 * `~` does not make two journals of one), any other backend as it is written.
 */
export function backendName(backend: string, home: string, cwd: string): string {
    return locationOf(backend, home, cwd)?.url ?? backend;
}
