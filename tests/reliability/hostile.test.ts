// Hostile input: a catalogue of bad values, tried on every input of every function and resource and on
// every config key. Each must give a CheckFailure / Invoke failure naming the property, or a clear error,
// and the emulator (which records every request it receives) must see no API request at all.

import { expect } from "chai";
import { configProperties } from "../../provider/protocol/config";
import { functions } from "../../provider/functions";
import { MAX_POLICY_DATA } from "../../provider/iam/policy";
import { makeSecret, PropertyMap, Value } from "../../provider/declare/properties";
import { resources } from "../../provider/resources";
import { rpcError, useStack } from "../support/plugin";

const TOKEN = "ya29.hostile-input-token";
const SERVICE = "hostile.endpoints.my-project.cloud.goog";

function nested(depth: number): Value {
    let v: Value = "bottom";
    for (let i = 0; i < depth; i++) v = { a: v };
    return v;
}

/**
 * A well-formed policy over both of policyData's limits (provider/iam): 1 MiB of text (17,500 bindings make 1.07 MB)
 * and 1,500 principals. Without those rules it is accepted, as any valid policy is. A bigger one (it was 25,000
 * bindings) catches nothing more and costs more: each case's value crosses gRPC, and its protobuf encoding, several
 * times, for every input and config key.
 */
const hugePolicy = JSON.stringify({ bindings: Array.from({ length: 17_500 }, (_, i) => ({ role: "roles/viewer", members: [`user:u${i}@example.com`] })) });

/** label → value; `undefined` means the property is left out. */
const catalogue: [string, Value | undefined][] = [
    ["missing", undefined], ["null", null], ["zero", 0], ["negative", -1], ["huge number", 1e308], ["true", true], ["false", false],
    ["empty list", []], ["list of empty string", [""]], ["empty object", {}], ["object", { value: 1 }],
    ["empty string", ""], ["space", " "], ["whitespace", "\t\n"], ["dot-dot", ".."], ["traversal", "../../etc/passwd"],
    ["a/../b", "a/../b"], ["slash", "/"], ["a/b", "a/b"], ["%2F", "%2F"], ["a%2Fb", "a%2Fb"], ["%00", "%00"], ["NUL", "a\u0000b"],
    ["question mark", "?"], ["query", "a?alt=media"], ["hash", "#"], ["fragment", "a#b"], ["inner space", "a b"],
    ["leading space", " leading"], ["trailing space", "trailing "], ["10 KB", "x".repeat(10 * 1024)], ["1 MB", "y".repeat(1024 * 1024 + 1)],
    ["Cyrillic confusable", "\u0455ervice.example.com"], ["fullwidth", "\uff4dyapi.example.com"], ["RTL override", "\u202emoc.elpmaxe"],
    ["zero-width space", "my\u200bapi.example.com"], ["BOM", "\ufeffmyapi"], ["emoji", "\u{1f525}.example.com"],
    ["JSON, not a policy", '{"a":1}'], ["bindings not a list", '{"bindings":"no"}'], ["unterminated JSON", "{"],
    ["deeply nested JSON", `${"[".repeat(100_000)}${"]".repeat(100_000)}`], ["huge policy", hugePolicy], ["JSON null", "null"],
    ["JNDI", "${jndi:ldap://127.0.0.1/x}"], ["javascript URL", "javascript:alert(1)"], ["http to a remote host", "http://evil.example.com/v1/"],
    ["file URL", "file:///etc/passwd"], ["SQL", "'; DROP TABLE policies; --"], ["deeply nested struct", nested(60)],
    ["secret-wrapped traversal", makeSecret("a/../b")], ["secret-wrapped object", makeSecret({ a: 1 })],
];

/** Values that are legitimately valid for a key (the rule accepts them), so they are not failures there. */
const validFor: Record<string, string[]> = {
    serviceName: ["JSON null"], // a one-label service name
    bindings: ["empty list"], // an empty policy
    auditConfigs: ["empty list"],
    // An access token is opaque: only its syntax (RFC 6750 b64token) can be checked without asking Google.
    accessToken: ["dot-dot", "traversal", "a/../b", "slash", "a/b", "JSON null", "secret-wrapped traversal"],
    impersonateServiceAccountDelegates: ["empty list", "empty string", "space", "whitespace"], // no delegates
    userProjectOverride: ["true", "false", "JSON null"],
    batching: ["empty object", "JSON null"], // every property defaulted; unset
    credentials: ["secret-wrapped traversal"], // a path: tried at use, in the next test
};

interface Target {
    what: string;
    key: string;
    required: boolean;
    /** Failures from the check for this value; or the error of the call. */
    run(value: Value | undefined): Promise<{ failures: { property: string; reason: string }[] } | { error: string }>;
}

describe("hostile input", function () {
    this.timeout(120_000);
    const stack = useStack(TOKEN, [SERVICE]);
    before(() => stack.emu.resetRequests());

    const withValue = (base: PropertyMap, key: string, value: Value | undefined): PropertyMap => {
        const out = { ...base };
        delete out[key];
        if (value !== undefined) out[key] = value;
        return out;
    };

    const validArgs: Record<string, Value> = {
        serviceName: SERVICE, consumerProject: "consumer-proj-1", role: "roles/viewer", member: "user:a@example.com",
        members: ["user:a@example.com"], policyData: "{}", bindings: [], auditConfigs: [],
    };

    function targets(): Target[] {
        const out: Target[] = [];
        for (const f of functions) {
            const base: PropertyMap = {};
            for (const [k, p] of Object.entries(f.inputs)) if (p.required) base[k] = validArgs[k];
            for (const [key, p] of Object.entries(f.inputs)) {
                out.push({
                    what: f.token, key, required: p.required,
                    run: async (v) => stack.plugin.invoke(f.token, withValue(base, key, v)).catch(async (e) => ({ error: String((e as { details?: string }).details) })),
                });
            }
        }
        for (const r of resources) {
            const base: PropertyMap = {};
            for (const [k, p] of Object.entries(r.inputs)) if (p.required) base[k] = validArgs[k];
            for (const [key, p] of Object.entries(r.inputs)) {
                out.push({ what: r.token, key, required: p.required, run: (v) => stack.plugin.check(r.token, withValue(base, key, v)) });
            }
        }
        for (const key of Object.keys(configProperties)) {
            out.push({ what: "provider config", key, required: false, run: (v) => stack.plugin.checkConfig(withValue({}, key, v)) });
        }
        return out;
    }

    it("refuses every bad value for every input and config key, and sends no request", async () => {
        let cases = 0;
        let refused = 0;
        const accepted: string[] = [];
        for (const t of targets()) {
            for (const [label, value] of catalogue) {
                if ((value === undefined || value === null) && !t.required) continue; // leaving out an optional key is fine
                if (validFor[t.key]?.includes(label)) continue;
                const credentialsPath = t.key === "credentials" && typeof value === "string" && !value.trim().startsWith("{") && value.trim() !== "";
                if (credentialsPath) continue; // a path: tried at use, in the next test
                cases++;
                const outcome = await t.run(value);
                if ("error" in outcome) {
                    expect(outcome.error, `${t.what} ${t.key} = ${label}`).to.be.a("string").and.not.equal("");
                    refused++;
                    continue;
                }
                const named = outcome.failures.filter((f) => f.property === t.key || f.property.startsWith(`${t.key}.`) || f.property.startsWith(`${t.key}[`));
                if (named.length === 0) accepted.push(`${t.what} ${t.key} = ${label}: ${JSON.stringify(outcome.failures)}`);
                else {
                    refused++;
                    for (const f of named) expect(f.reason, `${t.what} ${t.key} = ${label}`).to.contain("`");
                }
            }
        }
        expect(accepted, "bad values that were accepted").to.deep.equal([]);
        expect(stack.emu.requests, "requests sent to the API").to.deep.equal([]);
        expect(cases).to.be.greaterThan(40 * 20);
        expect(hugePolicy.length, "the huge policy is over policyData's limit").to.be.greaterThan(MAX_POLICY_DATA);
        console.log(`      ${cases} hostile cases over ${targets().length} inputs and config keys: ${refused} refused, ${stack.emu.requests.length} requests sent`);
    });

    it("reports credentials that name no readable file clearly, before any request", async () => {
        for (const bad of ["/", "../../etc/shadow-does-not-exist", "a\u0000b", "x".repeat(5000), "{\"type\":\"service_account\"}"]) {
            await stack.plugin.configure(undefined, { "cloud:config:serviceManagementCustomEndpoint": stack.emu.url, "cloud:config:credentials": bad });
            const err = await rpcError(stack.plugin.invoke(functions[0].token, { serviceName: SERVICE }));
            expect(err.details).to.match(/the credentials from cloud:credentials/);
            expect(err.details).not.to.contain("x".repeat(100));
        }
        expect(stack.emu.requests.filter((r) => r.path.startsWith("/v1/"))).to.deep.equal([]);
        await stack.configure();
    });
});
