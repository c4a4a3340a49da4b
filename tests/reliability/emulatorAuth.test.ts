// The emulator's own authentication: requests without a token, with an expired one, with random strings
// or with JWTs signed by keys it does not know all get 401 — it never accepts a token it did not issue or
// was not given. Prints the figure.

import { expect } from "chai";
import * as crypto from "crypto";
import { startEmulator } from "../../emulator";

const b64url = (x: object) => Buffer.from(JSON.stringify(x)).toString("base64url");

describe("emulator authentication", function () {
    this.timeout(60_000);

    it("refuses every token it did not issue or was not given", async () => {
        const emu = await startEmulator({ accessTokens: ["ya29.given-token"] });
        const other = await startEmulator();
        try {
            emu.createService("auth.endpoints.my-project.cloud.goog", "my-project");
            const url = `${emu.url}services/auth.endpoints.my-project.cloud.goog:getIamPolicy`;
            const call = (auth?: string) => fetch(url, { method: "POST", headers: auth ? { authorization: auth } : {}, body: "{}" }).then((r) => r.status);

            const key = emu.mintServiceAccountKey();
            const stranger = other.mintServiceAccountKey({ clientEmail: key.client_email });
            const forge = (privateKey: string, claims: object) => {
                const unsigned = `${b64url({ alg: "RS256", typ: "JWT", kid: key.private_key_id })}.${b64url(claims)}`;
                return `${unsigned}.${crypto.sign("RSA-SHA256", Buffer.from(unsigned), privateKey).toString("base64url")}`;
            };
            const now = Math.floor(Date.now() / 1000);
            const claims = { iss: key.client_email, sub: key.client_email, aud: `${emu.origin}/`, iat: now, exp: now + 3600 };
            const bad: [string, string | undefined][] = [
                ["no Authorization header", undefined], ["empty bearer", "Bearer "], ["Basic auth", "Basic dXNlcjpwYXNz"],
                ["expired issued token", `Bearer ${emu.issueToken({ lifetimeSeconds: 0 })}`],
                ["token issued by another emulator", `Bearer ${other.issueToken()}`],
                ["JWT signed by an unknown key", `Bearer ${forge(stranger.private_key, claims)}`],
                ["expired self-signed JWT", `Bearer ${forge(key.private_key, { ...claims, iat: now - 7200, exp: now - 3600 })}`],
                ["unsigned JWT", `Bearer ${b64url({ alg: "none" })}.${b64url(claims)}.`],
                ...Array.from({ length: 200 }, (_, i): [string, string] => [`random token ${i}`, `Bearer ya29.${crypto.randomBytes(24).toString("base64url")}`]),
            ];
            const statuses = await Promise.all(bad.map(([, auth]) => call(auth)));
            const accepted = bad.filter((_, i) => statuses[i] !== 401).map(([what], i) => `${what}: ${statuses[i]}`);
            expect(accepted).to.deep.equal([]);
            // The ones it should accept, to show the refusals are not blanket.
            expect(await call("Bearer ya29.given-token")).to.equal(200);
            expect(await call(`Bearer ${emu.issueToken()}`)).to.equal(200);
            expect(await call(`Bearer ${forge(key.private_key, claims)}`)).to.equal(200);
            console.log(`      ${bad.length} forged, expired or missing credentials: ${statuses.filter((s) => s === 401).length} × 401, 0 accepted`);
        } finally {
            await emu.close();
            await other.close();
        }
    });
});
