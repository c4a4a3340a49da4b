// The packaged plugin over HTTPS, as it talks to Google: the emulator serves TLS with a certificate from a
// private CA that only NODE_EXTRA_CA_CERTS trusts. Both packagings: the self-contained executable, where Node
// loads that file itself, and the folder, whose launcher keeps Node from loading it at start-up
// (provider/iam/tls.ts). Either way the plugin must trust it for the API and for google-auth-library's token
// request.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { DEFERRED_CA_ENV } from "../../provider/iam/tls";
import { FOLDER_PLATFORM, HOST_PLATFORM, Plugin, rpcError, SERVICE_FN, usePackagedPlugin } from "../support/plugin";
import { makeTestPki } from "../support/tls";

const SERVICE = "tls.endpoints.tls-project.cloud.goog";

for (const [packaging, platform] of [["self-contained executable", HOST_PLATFORM], ["folder run by the user's node", FOLDER_PLATFORM]] as const) describe(`TLS: the packaged plugin (${packaging}) and NODE_EXTRA_CA_CERTS`, function () {
    this.timeout(60_000);
    const installed = usePackagedPlugin("tls", platform);
    const selfContained = platform.node !== undefined;
    let caFile: string;
    let emu: Emulator;
    const plugins: Plugin[] = [];

    before(async () => {
        const pki = makeTestPki();
        caFile = path.join(installed.dir, "company-ca.pem");
        fs.writeFileSync(caFile, pki.caCert);
        emu = await startEmulator({ tls: { cert: pki.cert, key: pki.key } });
        emu.createService(SERVICE, "tls-project");
        emu.setPolicy(`services/${SERVICE}`, { bindings: [{ role: "roles/servicemanagement.serviceConsumer", members: ["user:a@example.com"] }] });
    });

    afterEach(async () => {
        await Promise.all(plugins.splice(0).map((p) => p.stop()));
    });

    after(async () => {
        await emu?.close();
    });

    /** The packaged plugin, configured with a service-account key whose token_uri is the emulator's (HTTPS). */
    async function start(env: NodeJS.ProcessEnv): Promise<Plugin> {
        const p = await Plugin.start({ command: [installed.launcher], env: { XDG_CACHE_HOME: path.join(installed.dir, "cache"), ...env } });
        plugins.push(p);
        await p.configure(undefined, {
            "cloud:config:serviceManagementCustomEndpoint": emu.url,
            "cloud:config:credentials": JSON.stringify(emu.mintServiceAccountKey()),
            "cloud:config:requestTimeout": "10s",
        });
        return p;
    }

    it("serves HTTPS: the API and the token endpoint", () => {
        expect(emu.url).to.match(/^https:\/\/127\.0\.0\.1:\d+\/v1\/$/);
        expect(emu.tokenUrl).to.match(/^https:\/\//);
    });

    it(`trusts the extra CA for the token request and the API${selfContained ? "" : ", with Node itself never loading the file"}`, async () => {
        const p = await start({ NODE_EXTRA_CA_CERTS: caFile });
        const env = p.environ();
        if (selfContained) {
            // No launcher: Node loads the file itself.
            expect(env.get("NODE_EXTRA_CA_CERTS")).to.equal(caFile);
            expect(env.has(DEFERRED_CA_ENV)).to.equal(false);
        } else {
            // The launcher handed the variable over: Node started without it.
            expect(env.has("NODE_EXTRA_CA_CERTS")).to.equal(false);
            expect(env.get(DEFERRED_CA_ENV)).to.equal(caFile);
        }
        emu.resetRequests();
        const res = await p.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
        expect(String(res.return!.policyData)).to.contain("user:a@example.com");
        expect(emu.requests.map((r) => `${r.path.split("/").pop()} ${r.status}`)).to.deep.equal([
            "token 200", `${SERVICE}:getIamPolicy 200`,
        ]);
    });

    it("without the extra CA, the certificate is refused and the error says so", async () => {
        const p = await start({});
        const err = await rpcError(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        expect(err.details).to.contain("could not obtain an access token").and.contain("unable to verify the first certificate")
            .and.contain("set NODE_EXTRA_CA_CERTS to that CA's PEM file");
        expect(err.details).not.to.contain("PRIVATE KEY");
    });

    it("with an access token (no token request), the API call names the certificate problem and the fix", async () => {
        const p = await Plugin.start({ command: [installed.launcher], env: { XDG_CACHE_HOME: path.join(installed.dir, "cache") } });
        plugins.push(p);
        await p.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:accessToken": "ya29.tls" });
        const err = await rpcError(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        expect(err.details).to.contain(`getIamPolicy of services/${SERVICE} failed`).and.contain("set NODE_EXTRA_CA_CERTS");
        expect(err.details).not.to.contain("ya29.tls");
    });

    it("an unreadable NODE_EXTRA_CA_CERTS is ignored with Node's warning, as Node does", async () => {
        const missing = path.join(installed.dir, "missing.pem");
        const p = await start({ NODE_EXTRA_CA_CERTS: missing });
        const err = await rpcError(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        expect(err.details).to.match(/certificate/i);
        expect(p.stderr).to.contain(`Ignoring extra certs from \`${missing}\`, load failed`);
    });
});
