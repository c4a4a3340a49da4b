// The packaged plugin's start (provider/boot.ts): the code cache it ships, the one it writes for another Node
// or other V8 flags, and a damaged cache, which must only cost time. Each start is checked to really serve.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { PropertyMap } from "../../provider/properties";
import { startEmulator } from "../../emulator";
import { CONSUMERS_FN, Plugin, usePackagedPlugin } from "../support/plugin";

const TOKEN = "ya29.boot-token";
const SERVICE = "boot.endpoints.boot-project.cloud.goog";

describe("packaged plugin start-up: V8 code cache", function () {
    this.timeout(60_000);
    const installed = usePackagedPlugin("boot");
    let cacheHome: string;

    beforeEach(() => {
        cacheHome = fs.mkdtempSync(path.join(installed.dir, "cache-"));
    });

    const userCaches = () => {
        const folder = path.join(cacheHome, "pulumi-resource-cloud");
        return fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.endsWith(".cache")) : [];
    };

    /** Starts the packaged plugin (debug notes on stderr), checks it answers a lookup, and returns its notes. */
    async function startOnce(env: NodeJS.ProcessEnv = {}): Promise<string> {
        const emu = await startEmulator({ accessTokens: [TOKEN] });
        const plugin = await Plugin.start({ command: [installed.launcher], args: ["--logtostderr", "-v=9"], env: { XDG_CACHE_HOME: cacheHome, ...env } });
        try {
            emu.createService(SERVICE, "boot-project");
            await plugin.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:accessToken": TOKEN });
            const res = await plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: "boot-consumer-1" });
            expect(res.failures).to.deep.equal([]);
            expect((res.return as PropertyMap).consumerProject).to.equal("boot-consumer-1");
            return plugin.stderr;
        } finally {
            await plugin.stop();
            await emu.close();
        }
    }

    it("ships a cache made by the Node that built it, and starts from it without writing one", async () => {
        const shipped = path.join(path.dirname(installed.launcher), "lib", `main.js.${process.version}-${process.arch}.cache`);
        expect(fs.statSync(shipped).size).to.be.greaterThan(100_000);
        expect(await startOnce()).to.contain(`code cache used: ${shipped}`);
        expect(userCaches()).to.deep.equal([]);
    });

    it("under other V8 flags, writes its own cache on the first start and uses it on the next", async () => {
        const env = { NODE_OPTIONS: "--max-old-space-size=300" };
        expect(await startOnce(env)).to.match(/no usable code cache: writing .*main\.js\.[0-9a-f]{16}\.v[\d.]+-\w+\.[0-9a-f]{12}\.cache/);
        const [written] = userCaches();
        expect(written).to.be.a("string");
        expect(await startOnce(env)).to.contain(`code cache used: ${path.join(cacheHome, "pulumi-resource-cloud", written)}`);
        // Without those flags, the shipped cache again.
        expect(await startOnce()).to.contain("code cache used: ").and.contain(path.join("lib", "main.js."));
    });

    it("a damaged cache is rejected, the plugin still serves, and a good cache replaces it", async () => {
        const env = { NODE_OPTIONS: "--max-old-space-size=301" };
        await startOnce(env);
        const [written] = userCaches();
        const file = path.join(cacheHome, "pulumi-resource-cloud", written);
        fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 7));
        expect(await startOnce(env)).to.contain(`code cache rejected (made by another build of Node): ${file}`)
            .and.contain(`no usable code cache: writing ${file}`);
        expect(await startOnce(env)).to.contain(`code cache used: ${file}`);
    });

    it("an unwritable cache directory only costs time", async () => {
        fs.writeFileSync(path.join(cacheHome, "pulumi-resource-cloud"), "not a directory");
        expect(await startOnce({ NODE_OPTIONS: "--max-old-space-size=302" })).to.contain("no usable code cache: writing");
        expect(await startOnce({ NODE_OPTIONS: "--max-old-space-size=302" })).to.contain("no usable code cache: writing");
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
});
