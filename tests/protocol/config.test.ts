// Configuration parsing and checking (pure logic), and the protocol constants.

import { expect } from "chai";
import * as rpc from "@pulumi/pulumi/runtime/rpc";
import { checkConfig, configFromRequest, parseDuration, resolveConfig } from "../../provider/protocol/config";
import { fetcherOptions } from "../../provider/protocol/iamConfig";
import { PropertyMap, SECRET_SIG_KEY, SECRET_SIG_VALUE, UNKNOWN_VALUE, Value } from "../../provider/declare/properties";

describe("provider configuration", () => {
    it("uses the protocol's own secret and unknown markers", () => {
        expect(SECRET_SIG_KEY).to.equal(rpc.specialSigKey);
        expect(SECRET_SIG_VALUE).to.equal(rpc.specialSecretSig);
        expect(UNKNOWN_VALUE).to.equal(rpc.unknownValue);
    });

    it("parses Go-style durations", () => {
        expect(parseDuration("90s")).to.equal(90_000);
        expect(parseDuration("1m30s")).to.equal(90_000);
        expect(parseDuration("1500ms")).to.equal(1500);
        expect(parseDuration("2h")).to.equal(7_200_000);
        // Microseconds in each spelling Go accepts: us, the micro sign (U+00B5) and the Greek mu (U+03BC).
        expect(["1500us", "1500\u00b5s", "1500\u03bcs"].map(parseDuration)).to.deep.equal([1.5, 1.5, 1.5]);
        expect(parseDuration("ten seconds")).to.equal(undefined);
        expect(parseDuration("10")).to.equal(undefined);
    });

    it("reads cloud:config:<key> variables, typed, with args winning", () => {
        const input = configFromRequest({ project: "from-args" }, new Map([
            ["cloud:config:project", "from-vars"],
            ["cloud:config:userProjectOverride", "true"],
            ["cloud:config:scopes", "[\"a\",\"b\"]"],
            ["other:config:x", "ignored"],
        ]));
        expect(input).to.deep.equal({ project: "from-args", userProjectOverride: true, scopes: ["a", "b"] });
    });

    it("falls back to the environment, in the documented order, and to defaults", () => {
        const { config } = resolveConfig({}, {
            GOOGLE_CLOUD_PROJECT: "second", GCLOUD_PROJECT: "third", USER_PROJECT_OVERRIDE: "true",
            GOOGLE_BILLING_PROJECT: "billed", GOOGLE_SERVICE_MANAGEMENT_CUSTOM_ENDPOINT: "http://127.0.0.1:9/v1/",
        });
        expect(config!.values.project).to.equal("second");
        expect(config!.sources.project).to.equal("environment variable GOOGLE_CLOUD_PROJECT");
        expect(config!.values.userProjectOverride).to.equal(true);
        expect(config!.values.billingProject).to.equal("billed");
        expect(config!.values.serviceManagementCustomEndpoint).to.equal("http://127.0.0.1:9/v1/");
        expect(config!.values.requestTimeout).to.equal("120s");
        expect(config!.values.scopes).to.deep.equal(["https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"]);
        expect(resolveConfig({ project: "explicit" }, { GOOGLE_PROJECT: "env" }).config!.values.project).to.equal("explicit");
    });

    it("derives the fetcher's settings from the resolved configuration", () => {
        const resolved = (input: Record<string, string | boolean>) => {
            const { config, failures } = resolveConfig(input, {});
            expect(failures).to.deep.equal([]);
            return fetcherOptions(config!);
        };
        const defaults = resolved({ accessToken: "ya29.x" });
        expect(defaults).to.deep.include({ endpoint: "https://servicemanagement.googleapis.com/v1/", requestTimeoutMs: 120_000, userProject: undefined });
        expect(defaults.credentials.source).to.contain("access token");
        const set = resolved({ accessToken: "ya29.x", requestTimeout: "1m30s", serviceManagementCustomEndpoint: "http://127.0.0.1:9/v1/", billingProject: "billed-1" });
        expect(set).to.deep.include({ endpoint: "http://127.0.0.1:9/v1/", requestTimeoutMs: 90_000, userProject: undefined });
        expect(resolved({ accessToken: "ya29.x", billingProject: "billed-1", userProjectOverride: true }).userProject).to.equal("billed-1");
        expect(defaults.batching).to.deep.equal({ enabled: true, sendAfterMs: 40 });
    });

    it("takes `batching` as stack config (JSON) or as the provider resource's input, its unset properties defaulted", () => {
        const batching = (args: Record<string, string | PropertyMap> | undefined, variables: [string, string][] = []) => {
            const { config, failures } = resolveConfig({ accessToken: "ya29.x", ...configFromRequest(args, new Map(variables)) }, {});
            expect(failures).to.deep.equal([]);
            return { values: config!.values.batching, options: fetcherOptions(config!).batching };
        };
        // `pulumi config set cloud:batching '{"enableBatching":false}'`: a JSON string variable.
        expect(batching(undefined, [["cloud:config:batching", "{\"enableBatching\":false}"]])).to.deep.equal({
            values: { enableBatching: false, sendAfter: "40ms" }, options: { enabled: false, sendAfterMs: 40 },
        });
        // A provider resource: the SDKs send an object-typed input as JSON text; typed as an object works too.
        expect(batching({ batching: "{\"sendAfter\":\"300ms\"}" }).options).to.deep.equal({ enabled: true, sendAfterMs: 300 });
        expect(batching({ batching: { enableBatching: false, sendAfter: "1s" } }).options).to.deep.equal({ enabled: false, sendAfterMs: 1000 });
        expect(batching(undefined).values).to.deep.equal({ enableBatching: true, sendAfter: "40ms" });
    });

    it("checks `batching`'s properties by their path, and refuses keys it does not have", () => {
        const failures = (batching: Value) => checkConfig({ batching }).failures;
        const [late] = failures({ sendAfter: "soon" });
        expect(late.property).to.equal("batching.sendAfter");
        expect(late.reason).to.contain("`batching.sendAfter`").and.contain("is not a duration such as");
        // The same from stack config's JSON text.
        expect(failures(JSON.stringify({ sendAfter: "soon" })).map((f) => f.property)).to.deep.equal(["batching.sendAfter"]);
        const [flag] = failures({ enableBatching: "no" });
        expect(flag).to.deep.equal({ property: "batching.enableBatching", reason: "`batching.enableBatching` must be a boolean, but a string was given" });
        const [unknown] = failures({ enableBatching: true, batchSize: 10 });
        expect(unknown.property).to.equal("batching.batchSize");
        expect(unknown.reason).to.contain("not a known property").and.contain("`enableBatching`, `sendAfter`");
        expect(failures("soon").map((f) => f.reason)).to.deep.equal(["`batching` must be an object, but a string was given"]);
        expect(failures({})).to.deep.equal([]);
    });

    it("names the key, the rule and the environment variable that broke it", () => {
        const { failures } = resolveConfig({}, { GOOGLE_SERVICE_MANAGEMENT_CUSTOM_ENDPOINT: "ftp://x/" });
        expect(failures).to.have.length(1);
        expect(failures[0].property).to.equal("serviceManagementCustomEndpoint");
        expect(failures[0].reason).to.contain("GOOGLE_SERVICE_MANAGEMENT_CUSTOM_ENDPOINT");
    });

    it("checks types and rules, tolerating the keys the engine adds", () => {
        const { failures } = checkConfig({
            version: "8.38.0",
            requestTimeout: "soon",
            userProjectOverride: "maybe",
            impersonateServiceAccount: "not an email",
            credentials: "{not json",
            bogus: 1,
        });
        expect(failures.map((f) => f.property).sort()).to.deep.equal(
            ["bogus", "credentials", "impersonateServiceAccount", "requestTimeout", "userProjectOverride"]);
        expect(failures.find((f) => f.property === "credentials")!.reason).not.to.contain("{not json");
    });
});
