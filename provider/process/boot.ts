// The packaged plugin's entry (scripts/dist.ts builds it). It loads the bundled provider (main.js) with a V8
// code cache, so a start does not compile what it runs: about 30 ms of the plugin's start-up on a 2-core machine
// (`npm run bench`). It runs in one of two packagings:
//
// - a self-contained executable (Node's single executable applications): this file is the executable's main
//   script; main.js, the code cache, google-auth-library's bundle and schema.json are assets inside it. The
//   build fixes Node's flags (execArgv) and ignores NODE_OPTIONS, so the cache it made always fits. macOS's
//   executables have no code cache inside (the build cannot run them): like the folder, they write one to the
//   user's cache directory on the first start;
// - a folder run by the user's `node` (lib/boot.js, lib/main.js, lib/node_modules/google-auth-library): a cache is
//   only accepted by the Node version (and V8 flags) that made it, so the first start writes one to the user's
//   cache directory, and later starts use it.
//
// A missing, unreadable or rejected cache only costs time.

import * as fs from "fs";
import { wrap } from "module";
import * as os from "os";
import * as path from "path";
import type * as Sea from "node:sea";
import * as vm from "vm";
import { ASSETS, NODE_ENGINES, nodeSupported, WRITE_CODE_CACHE_ENV } from "../package/packaging";

/** What main.js (provider/process/main.ts) exports. */
interface Bundle {
    start(startup: string[], afterPort?: () => void): void;
}

/** The bundle's name in stack traces. */
const SCRIPT_NAME = "pulumi-resource-cloud/main.js";

/** A hash of main.js, put here by the build (scripts/dist.ts). */
declare const BUNDLE_ID: string;

/** Where the bundle is, and how to read it and the cache made for it. */
interface Packaging {
    /** The bundle's file (its __filename; in an executable, a name beside it). */
    file: string;
    source(): string;
    /** The cache the build made, when it fits this Node and these flags. */
    shipped(): Buffer | undefined;
    /** The require main.js is given. */
    require: NodeRequire;
}

function readOptional(file: string): Buffer | undefined {
    try {
        return fs.readFileSync(file);
    } catch {
        return undefined;
    }
}

/** Runs a CommonJS source as Node would run a module file; returns its exports. */
function runModule(script: vm.Script, file: string, req: NodeRequire): unknown {
    const run = script.runInThisContext() as (exports: object, req: NodeRequire, module: { exports: object }, file: string, dir: string) => void;
    const module = { exports: {} };
    run(module.exports, req, module, file, path.dirname(file));
    return module.exports;
}

function selfContained(sea: typeof Sea): Packaging {
    const asset = (key: string): Buffer => {
        const raw = sea.getRawAsset(key); // the executable's own bytes, not a copy
        return typeof raw === "string" ? Buffer.from(raw, "latin1") : Buffer.from(raw);
    };
    const file = path.join(path.dirname(process.execPath), ASSETS.main);
    let auth: unknown;
    // main.js needs only Node's modules, and google-auth-library on the first credentialed request.
    const req = ((id: string) => {
        if (id !== "google-auth-library") return require(id);
        const authFile = path.join(path.dirname(process.execPath), ASSETS.auth);
        auth ??= runModule(new vm.Script(wrap(asset(ASSETS.auth).toString("utf8")), { filename: authFile }), authFile, req);
        return auth;
    }) as NodeRequire;
    return {
        file,
        // The build checks that main.js is ASCII: latin1 decodes it exactly, in a third of the time UTF-8 takes.
        source: () => asset(ASSETS.main).toString("latin1"),
        shipped: () => {
            try {
                return asset(ASSETS.cache);
            } catch {
                return undefined; // built without one (macOS: the build cannot run its executable)
            }
        },
        require: req,
    };
}

function folder(): Packaging {
    const file = path.join(__dirname, "main.js");
    return { file, source: () => fs.readFileSync(file, "latin1"), shipped: () => undefined, require };
}

/**
 * The user's cache for this bundle under this Node and these flags. V8 checks a cache against the source's
 * length only, so the name carries the bundle's hash: a rebuilt plugin never gets another build's code.
 */
function userCache(): string {
    const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ").trim();
    const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
    // node:crypto only when needed: loading it is ~7 ms of a start, and flags are rare.
    const tag = flags ? `.${(require("crypto") as typeof import("crypto")).createHash("sha256").update(flags).digest("hex").slice(0, 12)}` : "";
    return path.join(base, "pulumi-resource-cloud", `main.js.${BUNDLE_ID}.${process.version}-${process.arch}${tag}.cache`);
}

function writeAtomic(file: string, data: Buffer): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
}

function boot(): void {
    // The folder packaging runs on whatever `node` the user has: say plainly when that cannot work (node:sea,
    // below, is not even there before 18.16).
    if (!nodeSupported(process.versions.node)) {
        process.stderr.write(`pulumi-resource-cloud: needs Node.js ${NODE_ENGINES}, but the node on PATH is ` +
            `${process.version} (${process.execPath}): install a supported Node.js (https://nodejs.org) and run the ` +
            "Pulumi command again\n");
        process.exit(1);
    }
    // Required here, after the check: an import would be loaded before it.
    const sea = require("node:sea") as typeof Sea;
    const packaging = sea.isSea() ? selfContained(sea) : folder();
    // Only the wrapped source is kept (the script needs it for what it compiles later): the 1.7 MB string read
    // from the packaging is left to the garbage collector once compiling has flattened the wrapped one.
    const code = wrap(packaging.source());
    // V8 keeps the script's name in the code cache: a fixed one (not where the plugin was unpacked) keeps the
    // cache, and so the build, the same wherever it was made.
    const compile = (cachedData?: Buffer) => new vm.Script(code, { filename: SCRIPT_NAME, cachedData });
    const writeTo = process.env[WRITE_CODE_CACHE_ENV];
    const startup: string[] = [];
    let accepted: vm.Script | undefined;
    let rejected: vm.Script | undefined;
    let mine: string | undefined;
    const candidates: [string, () => Buffer | undefined][] = [];
    if (!writeTo) {
        candidates.push(["the executable's", () => packaging.shipped()]);
        mine = userCache();
        const user = mine;
        candidates.push([user, () => readOptional(user)]);
    }
    for (const [name, read] of candidates) {
        const data = read();
        if (!data) continue;
        const compiled = compile(data);
        if (compiled.cachedDataRejected) {
            startup.push(`code cache rejected (made by another build of Node): ${name}`);
            rejected = compiled;
            continue;
        }
        startup.push(`code cache used: ${name}`);
        accepted = compiled;
        break;
    }
    if (!accepted && mine) startup.push(`no usable code cache: writing ${mine}`);
    // A rejected cache still compiled the code: use that compilation.
    const script = accepted ?? rejected ?? compile();
    const bundle = runModule(script, packaging.file, packaging.require) as Bundle;

    // Made right after the port line: the functions start-up ran are compiled by then, and the heap flags that
    // start() sets afterwards (which a cache must match) are not set yet.
    const target = writeTo || (accepted ? undefined : mine);
    bundle.start(startup, target === undefined ? undefined : () => {
        try {
            writeAtomic(target, script.createCachedData());
        } catch (e) {
            if (writeTo) throw e;
            // A read-only home only costs time.
        }
        if (writeTo) process.exit(0);
    });
}

boot();
