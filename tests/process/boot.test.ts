// The packaged plugin's start (provider/process/boot.ts), in both packagings scripts/dist.ts makes: the self-contained
// executable, which needs nothing on the machine and starts from the code cache inside it; and the folder run by
// the user's `node`, which writes its own cache on the first start. Each start is checked to really serve.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as semver from "semver";
import { NODE_ENGINES, nodeSupported } from "../../provider/package/packaging";
import { FOLDER_PLATFORM, notesOfALookup, Plugin, usePackagedPlugin } from "../support/plugin";

const TOKEN = "ya29.boot-token";
const ROOT = path.join(__dirname, "..", "..", "..");

const startOnce = (command: string[], env: NodeJS.ProcessEnv = {}) => notesOfALookup(command, env, TOKEN);

describe("packaged plugin start-up: the self-contained executable", function () {
    this.timeout(60_000);
    const installed = usePackagedPlugin("boot-sea");
    let cacheHome: string;
    beforeEach(() => {
        cacheHome = fs.mkdtempSync(path.join(installed.dir, "cache-"));
    });
    const userCaches = () => (fs.existsSync(path.join(cacheHome, "pulumi-resource-cloud")) ? fs.readdirSync(path.join(cacheHome, "pulumi-resource-cloud")) : []);

    it("is one executable (with Node's license and the bundled code's notices beside it)", () => {
        expect(fs.readdirSync(path.dirname(installed.launcher)).sort()).to.deep.equal(["NODE-LICENSE.txt", "THIRD-PARTY-NOTICES.txt", "pulumi-resource-cloud"]);
    });

    it("starts with an empty environment (env -i: no node, no PATH) from the code cache inside it, writing none", async () => {
        const notes = await startOnce(["env", "-i", `XDG_CACHE_HOME=${cacheHome}`, installed.launcher]);
        expect(notes).to.contain("code cache used: the executable's");
        expect(userCaches()).to.deep.equal([]);
    });

    it("ignores NODE_OPTIONS meant for a user's program (a --require that would fail, V8 flags that would reject its cache)", async () => {
        const notes = await startOnce([installed.launcher], {
            XDG_CACHE_HOME: cacheHome, NODE_OPTIONS: `--require ${path.join(cacheHome, "missing.js")} --max-old-space-size=300`,
        });
        expect(notes).to.contain("code cache used: the executable's");
    });
});

describe("packaged plugin start-up: the folder the user's node runs", function () {
    this.timeout(60_000);
    const installed = usePackagedPlugin("boot-folder", FOLDER_PLATFORM);
    let cacheHome: string;
    beforeEach(() => {
        cacheHome = fs.mkdtempSync(path.join(installed.dir, "cache-"));
    });
    const userCaches = () => {
        const folder = path.join(cacheHome, "pulumi-resource-cloud");
        return fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.endsWith(".cache")) : [];
    };
    const start = (env: NodeJS.ProcessEnv = {}) => startOnce([installed.launcher], { XDG_CACHE_HOME: cacheHome, ...env });

    it("writes its own code cache on the first start and uses it on the next", async () => {
        expect(await start()).to.match(/no usable code cache: writing .*main\.js\.[0-9a-f]{16}\.v[\d.]+-\w+\.cache/);
        const [written] = userCaches();
        expect(written).to.be.a("string");
        expect(await start()).to.contain(`code cache used: ${path.join(cacheHome, "pulumi-resource-cloud", written)}`);
    });

    it("under other V8 flags, keeps a cache of their own beside the first", async () => {
        await start();
        const env = { NODE_OPTIONS: "--max-old-space-size=300" };
        expect(await start(env)).to.match(/no usable code cache: writing .*main\.js\.[0-9a-f]{16}\.v[\d.]+-\w+\.[0-9a-f]{12}\.cache/);
        expect(userCaches()).to.have.length(2);
        expect(await start(env)).to.contain("code cache used: ");
    });

    it("a damaged cache is rejected, the plugin still serves, and a good cache replaces it", async () => {
        await start();
        const [written] = userCaches();
        const file = path.join(cacheHome, "pulumi-resource-cloud", written);
        fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 7));
        expect(await start()).to.contain(`code cache rejected (made by another build of Node): ${file}`)
            .and.contain(`no usable code cache: writing ${file}`);
        expect(await start()).to.contain(`code cache used: ${file}`);
    });

    it("an unwritable cache directory only costs time", async () => {
        fs.writeFileSync(path.join(cacheHome, "pulumi-resource-cloud"), "not a directory");
        expect(await start()).to.contain("no usable code cache: writing");
        expect(await start()).to.contain("no usable code cache: writing");
    });

    it("the launcher tunes glibc's malloc for a one-thread process, unless the user did", async () => {
        const environ = async (env: NodeJS.ProcessEnv) => {
            const plugin = await Plugin.start({ command: [installed.launcher], env: { XDG_CACHE_HOME: cacheHome, ...env } });
            try {
                return [...plugin.environ()].filter(([k]) => k.startsWith("MALLOC_")).map(([k, v]) => `${k}=${v}`).sort();
            } finally {
                await plugin.stop();
            }
        };
        expect(await environ({})).to.deep.equal(["MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072"]);
        expect(await environ({ MALLOC_ARENA_MAX: "8" })).to.deep.equal(["MALLOC_ARENA_MAX=8", "MALLOC_MMAP_THRESHOLD_=131072"]);
    });

    it("without node on PATH, says what to install and exits 127", async () => {
        const emptyBin = fs.mkdtempSync(path.join(installed.dir, "bin-"));
        const err = await Plugin.start({ command: [installed.launcher], env: { PATH: emptyBin } }).then(() => "", (e: Error) => e.message);
        expect(err).to.contain("exited with 127").and.contain(`needs Node.js ${NODE_ENGINES} on PATH`).and.contain("install Node.js");
    });

    it("knows the Node releases package.json's engines allows (its check runs before anything that needs them)", () => {
        const engines: string = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).engines.node;
        expect(NODE_ENGINES).to.equal(engines);
        for (const v of ["18.20.4", "20.0.0", "20.18.3", "20.19.0", "20.20.2", "21.7.3", "22.0.0", "22.23.3", "24.21.0", "26.1.0"]) {
            expect(nodeSupported(v), v).to.equal(semver.satisfies(v, engines));
        }
    });
});
