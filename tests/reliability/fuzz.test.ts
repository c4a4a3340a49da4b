// Fuzz: 5,000 random and malformed Invoke, Check, CheckConfig, Configure, Diff and resource-operation requests (random
// structs, wrong types, missing fields, secret and unknown markers in odd places), generated with
// fast-check. The plugin must never crash and every answer must be well formed: a response, or a gRPC
// error with a status other than INTERNAL and a message.

import { expect } from "chai";
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { configProperties } from "../../provider/protocol/config";
import { functions } from "../../provider/functions";
import { makeSecret, UNKNOWN_VALUE, Value } from "../../provider/declare/properties";
import { resources } from "../../provider/resources";
import { useStack } from "../support/plugin";

const TOKEN = "ya29.fuzz-token-0a1b2c";
const SERVICE = "fuzz.endpoints.my-project.cloud.goog";
/**
 * The defect guarded: a handler that trusts a field's type or presence (a string where an object is expected, a
 * secret or unknown marker, a missing key) throws, and the engine gets INTERNAL or no answer. The sample is
 * fixed (the seed). It was 10,000: five such defects planted together, in Check, Diff, Configure, Update (preview)
 * and Invoke, were each answered INTERNAL at 5,000 too (the rarest, a number where Diff wants a list, once; twice
 * at 10,000; not at 2,000), and the run costs half as much.
 */
const COUNT = 5_000;

const knownKeys = [...new Set([...functions, ...resources].flatMap((d) => Object.keys(d.inputs)).concat(Object.keys(configProperties)))];
const key = fc.oneof(fc.constantFrom(...knownKeys), fc.string({ maxLength: 12 }));
const leaf: fc.Arbitrary<Value> = fc.oneof(
    fc.string({ maxLength: 40 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null),
    fc.constant(UNKNOWN_VALUE), fc.constantFrom(SERVICE, "consumer-proj-1", "roles/viewer", "user:a@example.com", "{}", "services/x", "a/../b"),
);
const value: fc.Arbitrary<Value> = fc.letrec<{ v: Value }>((tie) => ({
    v: fc.oneof({ depthSize: "small", withCrossShrink: true },
        leaf,
        fc.array(tie("v"), { maxLength: 4 }),
        fc.dictionary(key, tie("v"), { maxKeys: 4 }),
        tie("v").map((x) => makeSecret(x))),
})).v;
const props = fc.dictionary(key, value, { maxKeys: 6 });
const token = fc.oneof(fc.constantFrom(...functions.map((f) => f.token), ...resources.map((r) => r.token), "pulumi:providers:cloud", ""), fc.string({ maxLength: 30 }));

type Request = { method: string; req: object };
const request: fc.Arbitrary<Request> = fc.oneof(
    fc.record({ tok: token, args: props }).map(({ tok, args }) => ({ method: "invoke", req: new pb.InvokeRequest().setTok(tok).setArgs(Struct.fromJavaScript(args)) })),
    fc.record({ type: token, news: props, olds: props }).map(({ type, news, olds }) => ({ method: "check", req: new pb.CheckRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setNews(Struct.fromJavaScript(news)).setOlds(Struct.fromJavaScript(olds)) })),
    fc.record({ type: token, news: props, olds: props }).map(({ type, news, olds }) => ({ method: "diff", req: new pb.DiffRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setId("x").setNews(Struct.fromJavaScript(news)).setOlds(Struct.fromJavaScript(olds)) })),
    fc.record({ type: token, props, preview: fc.boolean() }).map(({ type, props: p, preview }) => ({ method: "create", req: new pb.CreateRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setProperties(Struct.fromJavaScript(p)).setPreview(preview) })),
    fc.record({ type: token, props, id: fc.string({ maxLength: 60 }) }).map(({ type, props: p, id }) => ({ method: "read", req: new pb.ReadRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setId(id).setProperties(Struct.fromJavaScript(p)) })),
    fc.record({ type: token, olds: props, news: props, preview: fc.boolean() }).map(({ type, olds, news, preview }) => ({ method: "update", req: new pb.UpdateRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setId("x").setOlds(Struct.fromJavaScript(olds)).setNews(Struct.fromJavaScript(news)).setPreview(preview) })),
    fc.record({ type: token, props }).map(({ type, props: p }) => ({ method: "delete", req: new pb.DeleteRequest()
        .setUrn(`urn:pulumi:dev::p::${type}::r`).setType(type).setId("x").setProperties(Struct.fromJavaScript(p)) })),
    props.map((news) => ({ method: "checkConfig", req: new pb.CheckRequest().setUrn("urn:pulumi:dev::p::pulumi:providers:cloud::default").setNews(Struct.fromJavaScript(news)) })),
    fc.record({ args: props, vars: fc.dictionary(fc.oneof(fc.constantFrom(...Object.keys(configProperties).map((k) => `cloud:config:${k}`)), fc.string({ maxLength: 20 })), fc.string({ maxLength: 40 }), { maxKeys: 4 }) })
        .map(({ args, vars }) => ({ method: "configure", vars, args })).map(({ vars, args }) => {
            // The endpoint and token stay valid (typed args win over variables), so later invokes stay fast.
            const req = new pb.ConfigureRequest().setArgs(Struct.fromJavaScript({ ...args, serviceManagementCustomEndpoint: "", accessToken: TOKEN, requestTimeout: "2s" }));
            for (const [k, v] of Object.entries(vars)) req.getVariablesMap().set(k, v);
            return { method: "configure", req };
        }),
);

describe("fuzzing the protocol", function () {
    this.timeout(300_000);
    const stack = useStack(TOKEN, [SERVICE]);

    it(`answers ${COUNT} random requests well formed, never crashing`, async () => {
        const requests = fc.sample(request, { numRuns: COUNT, seed: 20261121 });
        const codes = new Map<string, number>();
        const bad: string[] = [];
        let next = 0;
        const started = Date.now();
        await Promise.all(Array.from({ length: 16 }, async () => {
            while (next < requests.length) {
                const r = requests[next++];
                if (r.method === "configure") {
                    // Point the endpoint at the emulator (the random args above cleared it).
                    (r.req as pb.ConfigureRequest).getArgs()!.getFieldsMap().set("serviceManagementCustomEndpoint",
                        Struct.fromJavaScript({ v: stack.emu.url }).getFieldsMap().get("v")!);
                }
                try {
                    const res = await stack.plugin.call<object>(r.method, r.req);
                    if (!res) bad.push(`${r.method}: empty response`);
                    codes.set("OK", (codes.get("OK") ?? 0) + 1);
                } catch (e) {
                    const err = e as grpc.ServiceError;
                    const name = grpc.status[err.code] ?? String(err.code);
                    codes.set(name, (codes.get(name) ?? 0) + 1);
                    if (err.code === grpc.status.INTERNAL || err.code === grpc.status.UNAVAILABLE || !err.details) {
                        bad.push(`${r.method} → ${name}: ${err.details}`);
                    }
                }
            }
        }));
        expect(bad.slice(0, 10), `${bad.length} malformed answers`).to.deep.equal([]);
        expect(stack.plugin.child.exitCode, "the plugin is still running").to.equal(null);
        expect(stack.plugin.stderr).not.to.contain("unexpected");
        // Still serving normally afterwards.
        await stack.configure();
        const res = await stack.plugin.invoke(functions[0].token, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
        console.log(`      ${COUNT} fuzzed requests in ${Date.now() - started} ms: ${[...codes].map(([k, n]) => `${k} ${n}`).join(", ")}; 0 crashes`);
    });
});
