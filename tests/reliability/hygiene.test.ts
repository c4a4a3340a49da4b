// Credential hygiene: every path (success, 401, 403, 404, retries, bad config, key files, impersonation,
// resources) runs with distinctive token and private-key values, at full verbosity with an engine that
// records its Log calls; then everything the plugin wrote — stdout, stderr, engine log messages, returned
// errors, outputs — is scanned: the secrets appear 0 times outside secret-marked values.

import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { Emulator, startEmulator } from "../../emulator";
import { isSecret, makeSecret, PropertyMap, Value } from "../../provider/declare/properties";
import { startEngine } from "../support/engine";
import { CONSUMERS_FN, Plugin, SERVICE_FN } from "../support/plugin";

const TOKEN = "ya29.HYGIENE-c7f1e0d4b9a84e2f";
const DENIED = "ya29.HYGIENE-DENIED-5e6f7a8b";
const WRONG = "ya29.HYGIENE-WRONG-1a2b3c4d";
const SERVICE = "hygiene.endpoints.my-project.cloud.goog";

/** Every string in a value, except inside secret-marked values. */
function visibleStrings(v: Value | undefined, out: string[] = []): string[] {
    if (typeof v === "string") out.push(v);
    else if (isSecret(v ?? null)) return out;
    else if (Array.isArray(v)) v.forEach((x) => visibleStrings(x, out));
    else if (v && typeof v === "object") Object.values(v).forEach((x) => visibleStrings(x, out));
    return out;
}

describe("credential hygiene", function () {
    this.timeout(120_000);
    let emu: Emulator;
    let engine: Awaited<ReturnType<typeof startEngine>>;
    const seen: string[] = []; // everything returned to the caller: errors, failures, outputs
    const plugins: Plugin[] = [];

    before(async () => {
        emu = await startEmulator({ accessTokens: [TOKEN], deniedTokens: [DENIED] });
        emu.createService(SERVICE, "my-project");
        engine = await startEngine();
    });
    after(async () => {
        engine.close();
        await emu.close();
    });

    async function start(env: NodeJS.ProcessEnv = {}): Promise<Plugin> {
        const p = await Plugin.start({ env, args: ["--logtostderr", "-v=9", engine.address] });
        plugins.push(p);
        return p;
    }

    async function attempt(what: Promise<unknown>): Promise<void> {
        try {
            const res = await what;
            seen.push(...visibleStrings(res as Value));
        } catch (e) {
            seen.push(String((e as grpc.ServiceError).details ?? e));
        }
    }

    it("runs every credential path with distinctive secrets", async () => {
        const key = emu.mintServiceAccountKey({ clientEmail: "hygiene@my-project.iam.gserviceaccount.com" });
        const endpoint = { "cloud:config:serviceManagementCustomEndpoint": emu.url, "cloud:config:requestTimeout": "3s" };
        const p = await start();
        // Success, 404, retries under faults, then 401 and 403.
        await p.configure(undefined, { ...endpoint, "cloud:config:accessToken": TOKEN });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        await attempt(p.invoke(SERVICE_FN, { serviceName: "absent.endpoints.my-project.cloud.goog" }));
        emu.setFaults({ rate: 0.5 });
        await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(p.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: `hygiene-${1000 + i}` }))));
        emu.setFaults({ rate: 1 });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        emu.setFaults({ rate: 0 });
        // Resources, with the token also given as a (secret) input value where a user might paste it.
        const type = "cloud:endpoints/serviceIamMember:ServiceIamMember";
        const inputs = { serviceName: SERVICE, role: "roles/viewer", member: "user:h@example.com" };
        await attempt(p.check(type, { ...inputs, member: makeSecret(`user:${TOKEN}@example.com`) }));
        const created = await p.create(type, { ...inputs, member: makeSecret("user:secret-member@example.com") });
        expect(isSecret(created.properties.member), "a secret input stays secret in the outputs").to.equal(true);
        seen.push(...visibleStrings(created.properties));
        const read = await p.read(type, created.id, created.properties, { ...inputs, member: makeSecret("user:secret-member@example.com") });
        expect(isSecret(read.properties.member), "a secret input stays secret on refresh").to.equal(true);
        seen.push(...visibleStrings(read.properties), ...visibleStrings(read.inputs));
        await attempt(p.delete(type, created.id, created.properties));
        // Config: CheckConfig and Configure with secrets, good and bad.
        await attempt(p.checkConfig({ accessToken: TOKEN, credentials: JSON.stringify(key), requestTimeout: "bad" }));
        await attempt(p.checkConfig({ accessToken: `${TOKEN} with a space` }));
        await attempt(p.configure(undefined, { ...endpoint, "cloud:config:accessToken": `${TOKEN} with a space` }));
        await attempt(p.configure(undefined, { ...endpoint, "cloud:config:credentials": `${JSON.stringify(key).slice(0, -1)}` }));
        await p.configure(undefined, { ...endpoint, "cloud:config:accessToken": WRONG });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        await p.configure(undefined, { ...endpoint, "cloud:config:accessToken": DENIED });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        // A service-account key (JWT flow), a key the token endpoint refuses, impersonation, and env forms.
        await p.configure(undefined, { ...endpoint, "cloud:config:credentials": JSON.stringify(key) });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        const stranger = { ...key, private_key: (await startEmulator().then(async (o) => { const k = o.mintServiceAccountKey(); await o.close(); return k; })).private_key };
        await p.configure(undefined, { ...endpoint, "cloud:config:credentials": JSON.stringify(stranger) });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        await p.configure(undefined, { ...endpoint, "cloud:config:accessToken": TOKEN,
            "cloud:config:impersonateServiceAccount": "target@my-project.iam.gserviceaccount.com", "cloud:config:iamCredentialsCustomEndpoint": emu.origin });
        await attempt(p.invoke(SERVICE_FN, { serviceName: SERVICE }));
        const q = await start({ GOOGLE_OAUTH_ACCESS_TOKEN: WRONG, GOOGLE_CREDENTIALS: JSON.stringify(key) });
        await q.configure(undefined, endpoint);
        await attempt(q.invoke(SERVICE_FN, { serviceName: SERVICE }));
        await Promise.all(plugins.map((x) => x.stop()));

        const keyBody = key.private_key.split("\n").slice(2, 4).join("");
        const strangerBody = stranger.private_key.split("\n").slice(2, 4).join("");
        const secrets = [TOKEN, DENIED, WRONG, keyBody, strangerBody, "BEGIN PRIVATE KEY", "secret-member"];
        const written = [...plugins.flatMap((x) => [x.stdout, x.stderr]), ...engine.messages, ...seen].join("\n");
        const found = secrets.map((s) => [s, written.split(s).length - 1] as const).filter(([, n]) => n > 0);
        expect(engine.messages.length, "the engine received log messages").to.be.greaterThan(0);
        expect(seen.length).to.be.greaterThan(20);
        expect(found, "secrets found in what the plugin wrote").to.deep.equal([]);
        console.log(`      scanned ${written.length} characters (${plugins.length} plugins' stdout/stderr, ${engine.messages.length} engine log ` +
            `messages, ${seen.length} returned strings) for ${secrets.length} secrets: 0 occurrences`);
    });

    it("keeps outputs of secret lookup arguments secret", async () => {
        const p = await Plugin.start();
        await p.configure({ serviceManagementCustomEndpoint: emu.url, accessToken: makeSecret(TOKEN) } as PropertyMap);
        const res = await p.invoke(SERVICE_FN, { serviceName: makeSecret(SERVICE) });
        expect(Object.values(res.return!).every((v) => isSecret(v))).to.equal(true);
        await p.stop();
    });
});
