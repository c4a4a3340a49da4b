// The packaged plugin's entry (lib/boot.js, run by the launcher; see scripts/package.sh). It loads the bundled
// provider (lib/main.js) with a V8 code cache, so a start does not compile what it runs: about 30 ms of the
// plugin's start-up on a 2-core machine (`npm run bench`).
//
// A code cache is only accepted by the Node version (and V8 flags) that made it. The package ships one made by
// the Node that built it (lib/main.js.<node version>-<arch>.cache, from `PULUMI_CLOUD_WRITE_CODE_CACHE=1 node
// lib/boot.js`); under any other Node the first start writes one to the user's cache directory, and later starts
// use it. A missing, unreadable or rejected cache only costs time.

import { createHash } from "crypto";
import * as fs from "fs";
import { wrap } from "module";
import * as os from "os";
import * as path from "path";
import * as vm from "vm";

/** What lib/main.js (provider/main.ts) exports. */
interface Bundle {
    start(startup: string[], afterPort?: () => void): void;
}

const BUNDLE = path.join(__dirname, "main.js");
/** Build-time switch: write SHIPPED and exit once the port is printed. */
const WRITE_ENV = "PULUMI_CLOUD_WRITE_CODE_CACHE";
/** Node options that may change V8's flags, which a cache must match. */
const FLAGS = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ").trim();
const KEY = `${process.version}-${process.arch}`;
/** Made by the build, which runs without flags. */
const SHIPPED = `${BUNDLE}.${KEY}.cache`;

/** A hash of lib/main.js, put here by the build (scripts/package.sh). */
declare const BUNDLE_ID: string;

/**
 * The user's cache for this bundle under this Node and these flags. V8 checks a cache against the source's
 * length only, so the name carries the bundle's hash: a rebuilt plugin never gets another build's code.
 */
function userCache(): string {
    const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
    const flags = FLAGS ? `.${createHash("sha256").update(FLAGS).digest("hex").slice(0, 12)}` : "";
    return path.join(base, "pulumi-resource-cloud", `main.js.${BUNDLE_ID}.${KEY}${flags}.cache`);
}

function readOptional(file: string): Buffer | undefined {
    try {
        return fs.readFileSync(file);
    } catch {
        return undefined;
    }
}

function writeAtomic(file: string, data: Buffer): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
}

function boot(): void {
    // The build checks that the bundle is ASCII (scripts/package.sh): latin1 decodes it exactly, in a third of
    // the time UTF-8 takes.
    const source = fs.readFileSync(BUNDLE, "latin1");
    const compile = (cachedData?: Buffer) => new vm.Script(wrap(source), { filename: BUNDLE, cachedData });
    const writing = process.env[WRITE_ENV] === "1";
    const mine = writing ? undefined : userCache();
    const candidates = writing ? [] : FLAGS ? [mine!] : [SHIPPED, mine!];
    const startup: string[] = [];
    let accepted: vm.Script | undefined;
    let rejected: vm.Script | undefined;
    for (const file of candidates) {
        const data = readOptional(file);
        if (!data) continue;
        const compiled = compile(data);
        if (compiled.cachedDataRejected) {
            startup.push(`code cache rejected (made by another build of Node): ${file}`);
            rejected = compiled;
            continue;
        }
        startup.push(`code cache used: ${file}`);
        accepted = compiled;
        break;
    }
    if (!accepted && !writing) startup.push(`no usable code cache: writing ${mine}`);
    // A rejected cache still compiled the code: use that compilation.
    const script = accepted ?? rejected ?? compile();

    // The CommonJS wrapper's function, called as Node would call it for a module file.
    const run = script.runInThisContext() as (exports: object, req: NodeRequire, module: { exports: object }, file: string, dir: string) => void;
    const module = { exports: {} };
    run(module.exports, require, module, BUNDLE, __dirname);
    const bundle = module.exports as Bundle;

    // Made right after the port line: the functions start-up ran are compiled by then, and the heap flags that
    // start() sets afterwards (which a cache must match) are not set yet.
    const target = writing ? SHIPPED : accepted ? undefined : mine;
    bundle.start(startup, target === undefined ? undefined : () => {
        try {
            writeAtomic(target, script.createCachedData());
        } catch (e) {
            if (writing) throw e;
            // A read-only home only costs time.
        }
        if (writing) process.exit(0);
    });
}

boot();
