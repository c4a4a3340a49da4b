// The engine installs the plugin by itself, as a user's first `pulumi up` does: a fresh PULUMI_HOME with no
// plugin, a YAML program with the package declaration `npm run gen-sdk` makes (sdk/yaml, naming the schema's
// pluginDownloadURL), and the project's releases served from loopback laid out as GitHub serves release assets.
// PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES sends the engine there for the real pluginDownloadURL, so the URL the SDKs
// carry is the one that decides.

import { expect } from "chai";
import * as fs from "fs";
import * as http from "http";
import { AddressInfo } from "net";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { PLUGIN_DOWNLOAD_URL, REPOSITORY } from "../../provider/package/version";
import { HOST_PLATFORM } from "../support/plugin";
import { assetName, executableName } from "../../scripts/platforms";
import { compileNodeProgram, inlineStack, PulumiSandbox, ROOT, SERVICE, skipUnless, stackOutputs, toolsMissing, VERSION, pluginTarball, yaml } from "./support";

const TOKEN = "ya29.install-token";
const CONSUMER = "install-consumer-1";

/** The README's "Installing the plugin": its package declaration (YAML) and its commands (sh), as written. */
const readmeInstall = (() => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Installing the plugin"), readme.indexOf("\n## ", readme.indexOf("## Installing the plugin") + 3));
    const block = (lang: string) => new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "m").exec(section)?.[1] ?? "";
    return { declaration: block("yaml"), commands: block("sh").trim().split("\n") };
})();

/** `<owner>/<repo>` of the release location the SDKs carry. */
const REPO = PLUGIN_DOWNLOAD_URL.replace(/^github:\/\/api\.github\.com\//, "");
/** Where a GitHub release of this version keeps its assets, below the host. */
const RELEASE_PATH = `/${REPO}/releases/download/v${VERSION}/`;
/** The request the engine makes for this machine's plugin. */
const HOST_ASSET_GET = `GET ${RELEASE_PATH}${assetName(HOST_PLATFORM, VERSION)}`;

/** A release server: GET RELEASE_PATH<asset> from the given files. */
async function releaseServer(assets: Record<string, string>): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
        requests.push(`${req.method} ${req.url}`);
        const name = decodeURIComponent((req.url ?? "").split("/").pop() ?? "");
        const file = assets[name];
        if (req.method !== "GET" || !file || !(req.url ?? "").startsWith(RELEASE_PATH)) {
            res.writeHead(404).end("Not Found");
            return;
        }
        res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": fs.statSync(file).size });
        fs.createReadStream(file).pipe(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The override a mirror of the releases sets: the pluginDownloadURL (exactly) → the mirror's folder for a version. */
function override(mirror: string): string {
    const escaped = PLUGIN_DOWNLOAD_URL.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    return `^${escaped}$=${mirror}/${REPO}/releases/download/v\${VERSION}`;
}

describe("the engine installs the plugin by itself from its release location", function () {
    this.timeout(600_000);
    let emu: Emulator;
    let sb: PulumiSandbox;
    let releases: Awaited<ReturnType<typeof releaseServer>>;

    before(async function () {
        skipUnless(this, toolsMissing());
        const tarball = pluginTarball(HOST_PLATFORM);
        releases = await releaseServer({ [path.basename(tarball)]: tarball });
        emu = await startEmulator({ accessTokens: [TOKEN] });
        emu.createService(SERVICE, "example-project");
        sb = await PulumiSandbox.create("install", { installPlugin: false });
        sb.env.PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES = override(releases.url);
    });

    after(async () => {
        sb?.dispose();
        await emu?.close();
        await releases?.close();
    });

    it("the SDKs' pluginDownloadURL is this project's GitHub releases", () => {
        expect(PLUGIN_DOWNLOAD_URL).to.match(/^github:\/\/api\.github\.com\/[^/]+\/pulumi-resource-cloud$/)
            .and.equal(REPOSITORY.replace(/^https:\/\/github\.com\//, "github://api.github.com/"));
    });

    it("the README's install section gives the package declaration `npm run gen-sdk` makes", () => {
        const declaration = fs.readdirSync(path.join(ROOT, "sdk", "yaml"));
        expect(declaration).to.deep.equal([`cloud-${VERSION}.yaml`]);
        expect(readmeInstall.declaration).to.equal(fs.readFileSync(path.join(ROOT, "sdk", "yaml", declaration[0]), "utf8"));
    });

    it("a YAML program with the README's package declaration: `pulumi up` downloads, installs and runs the plugin", async () => {
        const dir = sb.project("install-yaml", {
            "Pulumi.yaml": yaml.program("install-yaml", {
                variables: yaml.consumersLookup("etag", SERVICE, CONSUMER),
                outputs: "  etag: ${etag}\n",
            }),
        });
        fs.mkdirSync(path.join(dir, "sdks"));
        fs.writeFileSync(path.join(dir, "sdks", "cloud.yaml"), readmeInstall.declaration);
        expect(fs.existsSync(sb.pluginDir)).to.equal(false);
        await sb.initStack(dir, emu.url, TOKEN);
        await sb.pulumi(["up", "--yes"], dir);
        // Installed where the engine keeps plugins, from the tarball the release server gave it.
        expect(fs.statSync(path.join(sb.pluginDir, executableName(HOST_PLATFORM))).mode & 0o111).to.not.equal(0);
        expect(releases.requests).to.deep.equal([
            HOST_ASSET_GET,
        ]);
        expect((await stackOutputs(sb, dir)).etag).to.be.a("string").and.not.equal("");
    });

    it("a TypeScript program on the SDK (no language host): the SDK's pluginDownloadURL makes the engine fetch the plugin", async () => {
        const entry = await compileNodeProgram("install-nodejs", [
            'import * as cloud from "pulumi-cloud-endpoints";',
            "export const program = (service: string, consumer: string) => async () => {",
            "    const grant = new cloud.endpoints.ServiceIamMember(\"reader\", { serviceName: service, role: \"roles/servicemanagement.serviceConsumer\", member: \"user:installed@example.com\" });",
            "    const policy = cloud.endpoints.getServiceConsumersIamPolicyOutput({ serviceName: service, consumerProject: consumer });",
            "    return { grant: grant.member, consumer: policy.consumerProject };",
            "};",
        ].join("\n"));
        const { program } = require(entry) as { program: (s: string, c: string) => () => Promise<Record<string, unknown>> };
        const fresh = await PulumiSandbox.create("install-nodejs", { installPlugin: false });
        try {
            fresh.env.PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES = override(releases.url);
            const before = releases.requests.length;
            const stack = await inlineStack(fresh, "install-nodejs", program(SERVICE, CONSUMER), emu.url, TOKEN);
            const up = await stack.up();
            expect(up.outputs.consumer.value).to.equal(CONSUMER);
            expect(emu.getPolicy(`services/${SERVICE}`).bindings?.flatMap((b) => b.members)).to.include("user:installed@example.com");
            expect(releases.requests.slice(before)).to.deep.equal([
                HOST_ASSET_GET,
            ]);
            expect(fs.existsSync(path.join(fresh.pluginDir, executableName(HOST_PLATFORM)))).to.equal(true);
            await stack.destroy();
        } finally {
            fresh.dispose();
        }
    });

    it("the README's commands to install it by hand run as written: from the release, and from a checkout", async () => {
        expect(readmeInstall.commands).to.deep.equal([
            `pulumi plugin install resource cloud ${VERSION} --server ${PLUGIN_DOWNLOAD_URL}`,
            "npm run dist -- --platform linux-amd64",
            `pulumi plugin install resource cloud ${VERSION} --file dist/pulumi-resource-cloud-v${VERSION}-linux-amd64.tar.gz`,
        ]);
        for (const [i, command] of readmeInstall.commands.entries()) {
            const [cmd, ...args] = command.split(" ");
            const home = path.join(sb.dir, `home-readme-${i}`);
            const r = await sb.exec(cmd === "pulumi" ? path.join(sb.bin, "pulumi") : cmd, args, ROOT, { PULUMI_HOME: home }, 600_000);
            expect(r.code, `${command}\n${r.stdout}\n${r.stderr}`).to.equal(0);
            if (cmd === "pulumi") {
                const exe = path.join(home, "plugins", `resource-cloud-v${VERSION}`, executableName(HOST_PLATFORM));
                expect(fs.statSync(exe).size, command).to.be.greaterThan(10_000_000); // the executable, Node inside
            }
        }
        // The release command went to the release location (the loopback mirror here), the other to the file.
        expect(releases.requests).to.include(HOST_ASSET_GET);
    });

    it("a release that lacks the tarball fails the install and says which URL it tried", async () => {
        const home = path.join(sb.dir, "home-missing");
        const r = await sb.exec(path.join(sb.bin, "pulumi"), ["plugin", "install", "resource", "cloud", "0.0.1", "--server", PLUGIN_DOWNLOAD_URL],
            sb.dir, { PULUMI_HOME: home });
        expect(r.code).to.not.equal(0);
        expect(r.stdout + r.stderr).to.contain("404").and.contain("pulumi-resource-cloud-v0.0.1-linux-amd64.tar.gz");
    });
});
