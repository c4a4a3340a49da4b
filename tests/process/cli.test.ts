// The plugin executable's arguments: what the engine passes (`[--logtostderr] [-v=N] [--tracing X] ENGINE_ADDRESS`)
// starts it; anything else is answered with the usage on stderr and exit 2, printing no port (it used to print a
// port, then die on `net.connect` with "Port should be >= 0 and < 65536").

import { expect } from "chai";
import { spawn } from "child_process";
import * as net from "net";
import { parseArgs, USAGE } from "../../provider/process/main";
import { Plugin, PLUGIN, pulumiHome, usePackagedPlugin } from "../support/plugin";

/** Runs the executable to its end: exit code, stdout, stderr. */
function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(command, args, { env: { PATH: process.env.PATH, PULUMI_HOME: pulumiHome() }, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        child.once("error", reject);
        child.once("close", (code) => {
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
        });
    });
}

const WRONG: [string[], string][] = [
    [["anything"], '"anything" is not an engine address'],
    [["--bogus"], "unknown option --bogus"],
    [["-x"], "unknown option -x"],
    [["-v=loud"], "-v takes a number"],
    [["127.0.0.1:99999"], "is not an engine address"],
    [["127.0.0.1:1", "127.0.0.1:2"], "one engine address is taken, not 2"],
];

describe("the plugin executable's arguments", function () {
    this.timeout(60_000);

    it("parseArgs takes what the engine passes", () => {
        expect(parseArgs([])).to.deep.equal({ logtostderr: false, verbosity: 0 });
        expect(parseArgs(["--logtostderr", "-v=9", "--tracing", "127.0.0.1:4000", "127.0.0.1:34567"]))
            .to.deep.equal({ logtostderr: true, verbosity: 9, engineAddress: "127.0.0.1:34567" });
        expect(parseArgs(["[::1]:34567"])).to.deep.equal({ logtostderr: false, verbosity: 0, engineAddress: "[::1]:34567" });
        expect(parseArgs(["--help"])).to.equal("help");
    });

    for (const [args, why] of WRONG) {
        it(`\`pulumi-resource-cloud ${args.join(" ")}\`: the usage on stderr, exit 2, no port`, async () => {
            const r = await run(PLUGIN, args);
            expect(r.code, r.stderr).to.equal(2);
            expect(r.stdout).to.equal("");
            expect(r.stderr).to.contain(why).and.contain(USAGE.split("\n")[0]).and.not.contain("Port should be");
        });
    }

    it("--help prints the usage on stdout and exits 0", async () => {
        const r = await run(PLUGIN, ["--help"]);
        expect(r.code).to.equal(0);
        expect(r.stdout).to.contain(USAGE.split("\n")[0]);
    });

    it("started as the engine starts it (flags, then a listening engine address), it prints its port and serves", async () => {
        const engine = net.createServer((s) => s.destroy());
        await new Promise<void>((resolve) => engine.listen(0, "127.0.0.1", resolve));
        const port = (engine.address() as net.AddressInfo).port;
        const plugin = await Plugin.start({ args: ["--logtostderr", "-v=1", "--tracing", "127.0.0.1:1", `127.0.0.1:${port}`] });
        try {
            expect(plugin.port).to.be.within(1, 65535);
            await plugin.empty("getPluginInfo");
        } finally {
            await plugin.stop();
            engine.close();
        }
    });

    describe("the packaged executable", () => {
        const installed = usePackagedPlugin("cli");
        it("answers an unknown argument with the usage and exit 2 too", async () => {
            const r = await run(installed.launcher, ["anything"]);
            expect(r.code, r.stderr).to.equal(2);
            expect(r.stdout).to.equal("");
            expect(r.stderr).to.contain('"anything" is not an engine address').and.contain(USAGE.split("\n")[0]);
        });
    });
});
