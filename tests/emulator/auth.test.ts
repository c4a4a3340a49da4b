// Authentication: bearer tokens on the API, the OAuth2 token endpoint's grants, and impersonation.

import { expect } from "chai";
import { generateKeyPairSync } from "crypto";
import { startEmulator, type Emulator, type ServiceAccountKey } from "../../emulator";
import { apiError, body, call, signJwt, sleep } from "./http";

const FULL = "static-full";
const SERVICE = "auth.endpoints.my-project.cloud.goog";
const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";

interface TokenReply { access_token: string; expires_in: number; token_type: string }

describe("emulator: authentication", function () {
    this.timeout(15_000);
    let emu: Emulator;
    let key: ServiceAccountKey;

    const getIam = (token?: string): ReturnType<typeof call> =>
        call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { token, body: {} });
    const form = (params: Record<string, string>): ReturnType<typeof call> =>
        call("POST", emu.tokenUrl, {
            rawBody: new URLSearchParams(params).toString(),
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
        });
    const claims = (over: Record<string, unknown> = {}): Record<string, unknown> => {
        const iat = Math.floor(Date.now() / 1000);
        return { iss: key.client_email, scope: CLOUD_PLATFORM, aud: "https://oauth2.googleapis.com/token", iat, exp: iat + 3600, ...over };
    };
    const jwtGrant = (assertion: string): ReturnType<typeof call> =>
        form({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion });

    before(async () => {
        emu = await startEmulator({ accessTokens: [FULL], deniedTokens: ["static-denied"] });
        emu.createService(SERVICE, "my-project");
        key = emu.mintServiceAccountKey();
    });
    after(async () => {
        await emu.close();
    });

    it("answers 401 UNAUTHENTICATED without a token, with an unknown one, and never echoes the token", async () => {
        const none = await getIam();
        expect(none.status).to.equal(401);
        expect(apiError(none).status).to.equal("UNAUTHENTICATED");
        expect(apiError(none).message).to.contain("Expected OAuth 2 access token");
        const wrong = await getIam("ya29.not-a-real-token-SECRET");
        expect(wrong.status).to.equal(401);
        expect(apiError(wrong).message).to.match(/^Request had invalid authentication credentials\. Expected OAuth 2 access token/);
        expect(wrong.text).to.not.contain("SECRET");
        const basic = await call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { headers: { Authorization: "Basic abc" } });
        expect(basic.status).to.equal(401);
        expect((await getIam(FULL)).status).to.equal(200);
    });

    it("accepts issued tokens until they expire", async () => {
        const expired = emu.issueToken({ lifetimeSeconds: 0 });
        expect(expired).to.match(/^ya29\.emulator\.[A-Za-z0-9_-]{43}$/);
        expect((await getIam(expired)).status).to.equal(401);
        const short = emu.issueToken({ lifetimeSeconds: 1 });
        expect((await getIam(short)).status).to.equal(200);
        await sleep(1100);
        expect((await getIam(short)).status).to.equal(401);
    });

    it("denies every IAM call to denied tokens (static or issued), naming the permission", async () => {
        for (const token of ["static-denied", emu.issueToken({ denied: true })]) {
            const r = await getIam(token);
            expect(r.status).to.equal(403);
            expect(apiError(r).message).to.equal(
                `Permission 'servicemanagement.services.getIamPolicy' denied on resource 'services/${SERVICE}' (or it may not exist).`);
        }
        emu.addAccessToken("late-denied", { denied: true });
        expect((await getIam("late-denied")).status).to.equal(403);
        emu.addAccessToken("late-full");
        expect((await getIam("late-full")).status).to.equal(200);
    });

    it("refuses a token whose scopes do not allow the call", async () => {
        const readOnly = emu.issueToken({ scopes: ["https://www.googleapis.com/auth/cloud-platform.read-only"] });
        expect((await getIam(readOnly)).status).to.equal(200);
        const set = await call("POST", `${emu.url}services/${SERVICE}:setIamPolicy`, { token: readOnly, body: { policy: {} } });
        expect(set.status).to.equal(403);
        expect(apiError(set).message).to.equal("Request had insufficient authentication scopes.");
    });

    it("mints a service-account key file shaped like Google's", () => {
        expect(key.type).to.equal("service_account");
        expect(key.client_email).to.equal("emulator@emulator-project.iam.gserviceaccount.com");
        expect(key.project_id).to.equal("emulator-project");
        expect(key.private_key).to.match(/^-----BEGIN PRIVATE KEY-----\n/);
        expect(key.private_key_id).to.match(/^[0-9a-f]{40}$/);
        expect(key.token_uri).to.equal(emu.tokenUrl);
        expect(key.universe_domain).to.equal("googleapis.com");
        expect(Object.keys(key)).to.include.members(["client_id", "auth_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"]);
    });

    it("exchanges a jwt-bearer assertion signed with a minted key for a working access token", async () => {
        for (const header of [{ kid: key.private_key_id }, {}]) {
            const r = await jwtGrant(signJwt(key.private_key, claims(), header));
            expect(r.status, r.text).to.equal(200);
            const t = body<TokenReply>(r);
            expect(t.token_type).to.equal("Bearer");
            expect(t.expires_in).to.equal(3600);
            expect(t.access_token).to.match(/^ya29\.emulator\./);
            expect((await getIam(t.access_token)).status).to.equal(200);
        }
        // JSON bodies are accepted too, and the emulator's own token URL is a valid audience.
        const json = await call("POST", emu.tokenUrl, {
            body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: signJwt(key.private_key, claims({ aud: emu.tokenUrl })) },
        });
        expect(json.status, json.text).to.equal(200);
    });

    it("rejects a JWT signed by another key, an expired one, a wrong audience, and no scope", async () => {
        const { privateKey } = generateKeyPairSync("rsa", {
            modulusLength: 2048,
            privateKeyEncoding: { type: "pkcs8", format: "pem" },
            publicKeyEncoding: { type: "spki", format: "pem" },
        });
        const forged = await jwtGrant(signJwt(privateKey, claims(), { kid: key.private_key_id }));
        expect(forged.status).to.equal(400);
        expect(forged.json).to.deep.equal({ error: "invalid_grant", error_description: "Invalid JWT Signature." });
        const unknownIss = await jwtGrant(signJwt(privateKey, claims({ iss: "x@y.iam.gserviceaccount.com" })));
        expect(unknownIss.json).to.deep.equal({ error: "invalid_grant", error_description: "Invalid JWT Signature." });
        const now = Math.floor(Date.now() / 1000);
        const expired = await jwtGrant(signJwt(key.private_key, claims({ iat: now - 7200, exp: now - 3600 })));
        expect(expired.status).to.equal(400);
        expect(body<{ error: string }>(expired).error).to.equal("invalid_grant");
        const aud = await jwtGrant(signJwt(key.private_key, claims({ aud: "https://evil.example.com/token" })));
        expect(aud.status).to.equal(400);
        const noScope = await jwtGrant(signJwt(key.private_key, claims({ scope: undefined })));
        expect(body<{ error: string }>(noScope).error).to.equal("invalid_scope");
        const garbage = await jwtGrant("not.a.jwt");
        expect(garbage.status).to.equal(400);
        const unsupported = await form({ grant_type: "password", username: "u" });
        expect(body<{ error: string }>(unsupported).error).to.equal("unsupported_grant_type");
    });

    it("accepts a self-signed JWT from a minted key as a bearer token", async () => {
        const now = Math.floor(Date.now() / 1000);
        const jwt = signJwt(key.private_key, { iss: key.client_email, sub: key.client_email,
            aud: "https://servicemanagement.googleapis.com/", iat: now, exp: now + 3600 }, { kid: key.private_key_id });
        expect((await getIam(jwt)).status).to.equal(200);
        const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
        const forged = signJwt(privateKey, { iss: key.client_email, aud: "https://servicemanagement.googleapis.com/", iat: now, exp: now + 3600 });
        expect((await getIam(forged)).status).to.equal(401);
    });

    it("runs the refresh_token grant of a minted authorized_user file", async () => {
        const user = emu.mintAuthorizedUser();
        expect(user.type).to.equal("authorized_user");
        const r = await form({ grant_type: "refresh_token", client_id: user.client_id, client_secret: user.client_secret, refresh_token: user.refresh_token });
        expect(r.status, r.text).to.equal(200);
        expect((await getIam(body<TokenReply>(r).access_token)).status).to.equal(200);
        const unknown = await form({ grant_type: "refresh_token", client_id: user.client_id, client_secret: user.client_secret, refresh_token: "1//nope" });
        expect(unknown.status).to.equal(400);
        expect(body<{ error: string }>(unknown).error).to.equal("invalid_grant");
        const wrongSecret = await form({ grant_type: "refresh_token", client_id: user.client_id, client_secret: "x", refresh_token: user.refresh_token });
        expect(body<{ error: string }>(wrongSecret).error).to.equal("invalid_client");
    });

    it("impersonates through generateAccessToken and records the email", async () => {
        const email = "target@my-project.iam.gserviceaccount.com";
        const url = `${emu.url}projects/-/serviceAccounts/${encodeURIComponent(email)}:generateAccessToken`;
        const request = { scope: [CLOUD_PLATFORM], lifetime: "3600s", delegates: [] };
        const before = Date.now();
        const r = await call("POST", url, { token: FULL, body: request });
        expect(r.status, r.text).to.equal(200);
        const t = body<{ accessToken: string; expireTime: string }>(r);
        expect(t.expireTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(Date.parse(t.expireTime)).to.be.within(before + 3590_000, Date.now() + 3601_000);
        expect(emu.impersonations).to.deep.equal([email]);
        expect((await getIam(t.accessToken)).status).to.equal(200);

        expect((await call("POST", url, { body: request })).status).to.equal(401);
        expect((await call("POST", url, { token: "static-denied", body: request })).status).to.equal(403);
        expect((await call("POST", url, { token: FULL, body: { scope: [] } })).status).to.equal(400);
        expect(emu.impersonations).to.have.length(1);
    });
});
