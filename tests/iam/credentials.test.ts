// Every credential form, through the plugin, against the emulator's token endpoint and IAM Credentials
// API: the real google-auth-library flows, not stubs. Also: the messages of auth failures name the
// credential source and never the secret.

import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import { Emulator, startEmulator } from "../../emulator";
import { Plugin, rpcError, SERVICE_FN } from "../support/plugin";

const TOKEN = "ya29.static-credential-token-1c9e";
const DENIED = "ya29.denied-token-77b1";
const SERVICE = "creds.endpoints.my-project.cloud.goog";

describe("credentials", function () {
    let emu: Emulator;
    let other: Emulator;
    let dir: string;
    const plugins: Plugin[] = [];

    before(async () => {
        emu = await startEmulator({ accessTokens: [TOKEN], deniedTokens: [DENIED] });
        other = await startEmulator();
        emu.createService(SERVICE, "my-project");
        emu.setPolicy(`services/${SERVICE}`, { bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }] });
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-creds-"));
    });
    after(async () => {
        await Promise.all(plugins.map((p) => p.stop()));
        for (const p of plugins) {
            for (const secret of [TOKEN, DENIED, "PRIVATE KEY", "refresh_token"]) {
                expect(p.stdout + p.stderr, "plugin output").not.to.contain(secret);
            }
        }
        await emu.close();
        await other.close();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    async function start(env: NodeJS.ProcessEnv = {}): Promise<Plugin> {
        const p = await Plugin.start({ env });
        plugins.push(p);
        return p;
    }

    async function lookup(p: Plugin): Promise<string> {
        const res = await p.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
        return String(res.return!.policyData);
    }

    const lookupError = (p: Plugin) => rpcError(p.invoke(SERVICE_FN, { serviceName: SERVICE }));

    const endpoint = () => ({ "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:requestTimeout": "10s" });

    it("service-account key contents in cloud:credentials: JWT signed by the library, exchanged at the key's token_uri", async () => {
        const key = emu.mintServiceAccountKey({ clientEmail: "deployer@my-project.iam.gserviceaccount.com" });
        const p = await start();
        await p.configure(undefined, { ...endpoint(), "cloud:config:credentials": JSON.stringify(key) });
        emu.resetRequests();
        expect(await lookup(p)).to.contain("user:a@example.com");
        expect(await lookup(p)).to.contain("user:a@example.com");
        // One token exchange, then the cached token.
        expect(emu.requests.filter((r) => r.path === "/token").map((r) => r.status)).to.deep.equal([200]);
    });

    it("service-account key file path from GOOGLE_CREDENTIALS", async () => {
        const file = path.join(dir, "key.json");
        fs.writeFileSync(file, JSON.stringify(emu.mintServiceAccountKey()), { mode: 0o600 });
        const p = await start({ GOOGLE_CREDENTIALS: file });
        await p.configure(undefined, endpoint());
        expect(await lookup(p)).to.contain("roles/viewer");
    });

    it("Application Default Credentials: an authorized_user file from GOOGLE_APPLICATION_CREDENTIALS", async () => {
        const file = path.join(dir, "adc.json");
        fs.writeFileSync(file, JSON.stringify({ ...emu.mintAuthorizedUser(), token_uri: emu.tokenUrl }), { mode: 0o600 });
        const p = await start({ GOOGLE_APPLICATION_CREDENTIALS: file });
        await p.configure(undefined, endpoint());
        expect(await lookup(p)).to.contain("roles/viewer");
    });

    it("an access token from GOOGLE_OAUTH_ACCESS_TOKEN", async () => {
        const p = await start({ GOOGLE_OAUTH_ACCESS_TOKEN: TOKEN });
        await p.configure(undefined, endpoint());
        expect(await lookup(p)).to.contain("roles/viewer");
    });

    it("typed Configure args with a secret access token", async () => {
        const p = await start();
        await p.configure({
            serviceManagementCustomEndpoint: emu.url,
            accessToken: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: TOKEN },
        });
        expect(await lookup(p)).to.contain("roles/viewer");
    });

    it("impersonation through the IAM Credentials API", async () => {
        const p = await start();
        await p.configure(undefined, {
            ...endpoint(),
            "cloud:config:accessToken": TOKEN,
            "cloud:config:impersonateServiceAccount": "target@my-project.iam.gserviceaccount.com",
            "cloud:config:iamCredentialsCustomEndpoint": `${emu.origin}/v1/`,
        });
        expect(await lookup(p)).to.contain("roles/viewer");
        expect(emu.impersonations).to.include("target@my-project.iam.gserviceaccount.com");
    });

    it("a key the token endpoint does not know: the error names the source, not the key", async () => {
        const stranger = other.mintServiceAccountKey();
        const p = await start();
        await p.configure(undefined, { ...endpoint(), "cloud:config:credentials": JSON.stringify({ ...stranger, token_uri: emu.tokenUrl }) });
        const err = await lookupError(p);
        expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
        expect(err.details).to.contain("the credentials from cloud:credentials").and.contain("invalid_grant");
        expect(err.details).not.to.contain("PRIVATE KEY");
    });

    it("no credentials anywhere: the error says how to provide them, and nothing is sent", async () => {
        // No config, no GOOGLE_* variables, a HOME without gcloud's ADC file, and no metadata server.
        const p = await start({ METADATA_SERVER_DETECTION: "none" });
        await p.configure(undefined, endpoint());
        emu.resetRequests();
        const err = await lookupError(p);
        expect(err.details).to.contain("Application Default Credentials (metadata server)")
            .and.contain("`gcloud auth application-default login`").and.contain("GOOGLE_APPLICATION_CREDENTIALS")
            .and.contain("`cloud:accessToken`");
        expect(emu.requests).to.deep.equal([]);
    });

    it("an unaccepted token: 401 names the credential source, never the token", async () => {
        const p = await start();
        await p.configure(undefined, { ...endpoint(), "cloud:config:accessToken": "ya29.not-a-known-token-5d2e" });
        const err = await lookupError(p);
        expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
        expect(err.details).to.contain("the access token from cloud:accessToken").and.contain("HTTP 401");
        expect(err.details).not.to.contain("not-a-known-token");
    });

    it("an expired token: 401, not retried", async () => {
        const expired = emu.issueToken({ lifetimeSeconds: 0 });
        const p = await start();
        await p.configure(undefined, { ...endpoint(), "cloud:config:accessToken": expired });
        emu.resetRequests();
        const err = await lookupError(p);
        expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
        expect(err.details).not.to.contain(expired);
        expect(emu.requests).to.have.length(1);
    });

    it("a token without permission: 403 names servicemanagement.services.getIamPolicy", async () => {
        const p = await start();
        await p.configure(undefined, { ...endpoint(), "cloud:config:accessToken": DENIED });
        const err = await lookupError(p);
        expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
        expect(err.details).to.contain("servicemanagement.services.getIamPolicy").and.contain(`services/${SERVICE}`);
    });

    it("refuses to send a bearer token over plain http:// to a host that is not loopback", async () => {
        const p = await start();
        const checked = await p.checkConfig({ serviceManagementCustomEndpoint: "http://example.com/v1/", accessToken: TOKEN });
        expect(checked.failures.map((f) => f.property)).to.deep.equal(["serviceManagementCustomEndpoint"]);
        expect(checked.failures[0].reason).to.contain("loopback");
        let error: grpc.ServiceError | undefined;
        try {
            await p.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": "http://example.com/v1/", "cloud:config:accessToken": TOKEN });
        } catch (e) {
            error = e as grpc.ServiceError;
        }
        expect(error?.details).to.contain("serviceManagementCustomEndpoint").and.contain("loopback");
    });
});
