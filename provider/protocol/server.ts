// The pulumirpc.ResourceProvider gRPC service, on @grpc/grpc-js with the stubs shipped in @pulumi/pulumi.
// Unlike the stock Node provider server, it implements the configuration RPCs (CheckConfig, DiffConfig,
// Configure), so credentials and the endpoint can come from provider config. Dispatch, input checking
// and the unknown-token messages are all derived from the definitions in functions/ and resources/.

import * as fs from "fs";
import * as sea from "node:sea";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import { IResourceProviderServer, ResourceProviderService } from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import * as pluginPb from "@pulumi/pulumi/proto/plugin_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { checkProperties, concealSecrets, Failure, InputError } from "../declare/check";
import {
    checkConfig, configFromRequest, ConfigOrigin, configOrigin, configProperties, isEngineKey, ResolvedConfig, resolveConfig,
} from "./config";
import { functions } from "../functions";
import { InvokeContext } from "../functions/function";
import { IamError, redact } from "../iam/errors";
import { bounded, IamFetcher } from "../iam/fetcher";
import { fetcherOptions } from "./iamConfig";
import { Logger } from "./log";
import { ASSETS } from "../package/packaging";
import { makeSecret, PropertyMap, toPropertyMap, UNKNOWN_VALUE, unwrap, unwrapMap, Value } from "../declare/properties";
import { resources } from "../resources";
import { Resource } from "../resources/lifecycle";
import { Claim, ResourceContext } from "../resources/resource";
import { Deployment, EngineAlive, OperationKind, RunCommand } from "../deployment/deployment";
import { parseToken, PROVIDER_TYPE } from "../package/tokens";
import { PACKAGE_NAME, PACKAGE_VERSION } from "../package/version";

/** An error carrying the gRPC status to answer with. */
class RpcError extends Error {
    constructor(readonly code: grpc.status, message: string) {
        super(message);
    }
}

const functionsByToken = new Map(functions.map((f) => [f.token, f]));
const resourcesByToken = new Map(resources.map((r) => [r.token, r]));

function listOf(tokens: Iterable<string>): string {
    const all = [...tokens];
    return all.length ? all.join(", ") : "none yet";
}

/**
 * The full token a short or misspelt one means: same package and member name (any case), e.g.
 * `cloud:endpoints:ServiceIamMember` or `cloud:endpoints/ServiceIamMember` for
 * `cloud:endpoints/serviceIamMember:ServiceIamMember`; undefined when none (or more than one) fits.
 */
export function fullTokenFor(token: string, known: Iterable<string>): string | undefined {
    const wanted = parseToken(token);
    const fits = [...known].filter((k) => {
        const t = parseToken(k);
        return t.pkg === wanted.pkg && t.name.toLowerCase() === wanted.name.toLowerCase() && k !== token;
    });
    return fits.length === 1 ? fits[0] : undefined;
}

function didYouMean(token: string, known: Iterable<string>): string {
    const full = fullTokenFor(token, known);
    return full === undefined ? "" : ` (use the full token ${JSON.stringify(full)})`;
}

function unknownFunction(token: string): RpcError {
    return new RpcError(grpc.status.INVALID_ARGUMENT,
        `unknown function ${JSON.stringify(token)}${didYouMean(token, functionsByToken.keys())}: the ${PACKAGE_NAME} ` +
        `provider offers ${listOf(functionsByToken.keys())}`);
}

function unknownResource(type: string): RpcError {
    return new RpcError(grpc.status.INVALID_ARGUMENT,
        `unknown resource type ${JSON.stringify(type)}${didYouMean(type, resourcesByToken.keys())}: the ${PACKAGE_NAME} ` +
        `provider ${PACKAGE_VERSION} manages ${listOf(resourcesByToken.keys())}`);
}

/** The resource type of a request: its `type` field, else the URN's type part. */
function typeOf(req: { getType?: () => string; getUrn(): string }): string {
    return req.getType?.() || req.getUrn().split("::")[2] || "";
}

function toMap(s: Struct | undefined): PropertyMap {
    return (s?.toJavaScript() ?? {}) as PropertyMap;
}

function toStruct(value: object): Struct {
    // Undefined fields are left out (a Struct cannot hold them).
    return Struct.fromJavaScript(toPropertyMap(value));
}

function failuresOf(failures: Failure[]): pb.CheckFailure[] {
    return failures.map((f) => new pb.CheckFailure().setProperty(f.property).setReason(f.reason));
}

/** The schema: an asset of a self-contained executable, else schema.json beside the code: the packaged plugin's
 * folder (above lib/main.js) or the repository's root (above build/provider/protocol/server.js). */
function readSchema(): string {
    if (sea.isSea()) return sea.getAsset(ASSETS.schema, "utf8");
    return fs.readFileSync(findSchema(), "utf8");
}

function findSchema(): string {
    for (const dir of [path.join(__dirname, ".."), path.join(__dirname, "..", "..", "..")]) {
        const file = path.join(dir, "schema.json");
        if (fs.existsSync(file)) return file;
    }
    throw new RpcError(grpc.status.INTERNAL, "schema.json is missing from the plugin's installation");
}

/**
 * The protocol's unary RPCs, each under the name of the Provider method that answers it (serviceFor wires them by
 * name), with its request and response types: a method of that name must fit them.
 */
type Rpcs = {
    [K in keyof IResourceProviderServer as string extends K ? never : K]?:
        IResourceProviderServer[K] extends grpc.handleUnaryCall<infer Req, infer Res> ? (req: Req) => Res | Promise<Res> : never;
};

export class Provider implements Rpcs {
    private config?: ResolvedConfig;
    private configUnknown = false;
    private fetcher?: IamFetcher;
    private schema?: string;
    private readonly deployment: Deployment;

    constructor(private readonly log: Logger, private readonly engineAlive: EngineAlive = async () => true, command?: () => RunCommand) {
        this.deployment = new Deployment(log, () => {
            try {
                return this.configUnknown ? undefined : this.iam();
            } catch {
                return undefined; // the note says it was not checked, and why
            }
        }, process.env, command);
    }

    /** The IAM fetcher for the current configuration, built on first use. */
    private iam(): IamFetcher {
        if (this.configUnknown) {
            throw new RpcError(grpc.status.FAILED_PRECONDITION,
                "the provider configuration is not known yet (it depends on outputs of resources not yet created)");
        }
        if (!this.fetcher) {
            if (!this.config) this.applyConfig({}); // not configured: environment and defaults, as Terraform does
            this.fetcher = new IamFetcher(fetcherOptions(this.config!, this.log));
        }
        return this.fetcher;
    }

    private applyConfig(input: PropertyMap, origin?: ConfigOrigin): void {
        const { config, failures } = resolveConfig(input, process.env, origin);
        if (!config) {
            throw new RpcError(grpc.status.INVALID_ARGUMENT,
                `invalid provider configuration: ${failures.map((f) => f.reason).join("; ")}`);
        }
        this.fetcher?.close();
        this.fetcher = undefined;
        this.config = config;
    }

    /** The engine's address (command line, Handshake or Attach): its Log service, and the deployment's other plugins. */
    attachEngine(address: string | undefined): void {
        this.log.attach(address);
        this.deployment.engine(address);
    }

    handshake(req: pb.ProviderHandshakeRequest): pb.ProviderHandshakeResponse {
        this.attachEngine(req.getEngineAddress());
        return new pb.ProviderHandshakeResponse().setAcceptSecrets(true).setAcceptResources(false).setAcceptOutputs(false);
    }

    attach(req: pluginPb.PluginAttach): Empty {
        this.attachEngine(req.getAddress());
        return new Empty();
    }

    getPluginInfo(): pluginPb.PluginInfo {
        return new pluginPb.PluginInfo().setVersion(PACKAGE_VERSION);
    }

    getSchema(req: pb.GetSchemaRequest): pb.GetSchemaResponse {
        if (req.getVersion() !== 0) {
            throw new RpcError(grpc.status.INVALID_ARGUMENT,
                `schema version ${req.getVersion()} is not supported: this provider serves schema version 0`);
        }
        this.schema ??= readSchema();
        return new pb.GetSchemaResponse().setSchema(this.schema);
    }

    checkConfig(req: pb.CheckRequest): pb.CheckResponse {
        const news = toMap(req.getNews());
        const { failures } = checkConfig(news);
        // Keys declared secret are returned as secrets, so the engine keeps them encrypted in state even
        // when they were set as plain config.
        const inputs: PropertyMap = {};
        for (const [k, v] of Object.entries(news)) {
            const secret = (configProperties as Record<string, { secret?: boolean }>)[k]?.secret;
            inputs[k] = secret && !unwrap(v).secret ? makeSecret(v) : v;
        }
        return new pb.CheckResponse().setInputs(toStruct(inputs)).setFailuresList(failuresOf(failures));
    }

    diffConfig(req: pb.DiffRequest): pb.DiffResponse {
        const olds = toMap(req.getOlds());
        const news = toMap(req.getNews());
        const res = new pb.DiffResponse();
        const keys = new Set([...Object.keys(olds), ...Object.keys(news)].filter((k) => !isEngineKey(k)));
        const detailed = res.getDetaileddiffMap();
        const diffs: string[] = [];
        for (const key of [...keys].sort()) {
            const before = olds[key] === undefined ? undefined : unwrap(olds[key]);
            const after = news[key] === undefined ? undefined : unwrap(news[key]);
            if (JSON.stringify(before?.value) === JSON.stringify(after?.value) && !after?.unknown) continue;
            diffs.push(key);
            const kind = before === undefined ? pb.PropertyDiff.Kind.ADD
                : after === undefined ? pb.PropertyDiff.Kind.DELETE : pb.PropertyDiff.Kind.UPDATE;
            detailed.set(key, new pb.PropertyDiff().setKind(kind).setInputdiff(true));
        }
        // A configuration change never replaces the provider: every resource is addressed by name.
        return res.setChanges(diffs.length ? pb.DiffResponse.DiffChanges.DIFF_SOME : pb.DiffResponse.DiffChanges.DIFF_NONE)
            .setDiffsList(diffs).setHasdetaileddiff(true);
    }

    configure(req: pb.ConfigureRequest): pb.ConfigureResponse {
        const urn = req.getUrn();
        if (urn) this.deployment.attach(urn);
        const input = configFromRequest(req.hasArgs() ? toMap(req.getArgs()) : undefined, new Map(req.getVariablesMap().entries()));
        this.configUnknown = unwrap(input).unknown;
        if (!this.configUnknown) {
            this.applyConfig(input, configOrigin(req.getName() ?? ""));
            this.deployment.provider(urn ?? "", String(this.config?.values.serviceManagementCustomEndpoint ?? ""));
        }
        return new pb.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true)
            .setAcceptresources(false).setAcceptoutputs(false);
    }

    async invoke(req: pb.InvokeRequest): Promise<pb.InvokeResponse> {
        const fn = functionsByToken.get(req.getTok());
        if (!fn) throw unknownFunction(req.getTok());
        const { values: args, secrets } = unwrapMap(toMap(req.getArgs()));
        const secret = secrets.size > 0;
        const checked = checkProperties(fn.inputs, args);
        const res = new pb.InvokeResponse();
        if (checked.failures.length) return res.setFailuresList(failuresOf(concealSecrets(checked.failures, args, secrets)));
        if (checked.unknowns.length) {
            // During a preview an argument may depend on a resource not created yet: the result is unknown
            // too, and nothing is asked of the API. Outside a preview that is an error.
            if (!req.getPreview()) {
                return res.setFailuresList(failuresOf(checked.unknowns.map((p) => ({
                    property: p,
                    reason: `\`${p}\` is not known, and this is not a preview`,
                }))));
            }
            const unknown: PropertyMap = {};
            // Known arguments are echoed as they came: a secret one stays secret.
            for (const k of Object.keys(fn.outputs)) {
                unknown[k] = k in args && !checked.unknowns.includes(k) ? (secrets.has(k) ? makeSecret(args[k]) : args[k]) : UNKNOWN_VALUE;
            }
            return res.setReturn(toStruct(unknown));
        }
        const result = toPropertyMap(await fn.invoke(checked.values, this.context()));
        // Outputs computed from a secret argument stay secret.
        if (secret) for (const k of Object.keys(result)) result[k] = makeSecret(result[k]);
        return res.setReturn(toStruct(result));
    }

    /**
     * Shutdown: the writes already sent finish (IamFetcher.drain), then the deployment settles what the engine now
     * holds and says what stays open (journal/journal.ts), within a budget: the engine kills a plugin 5 s after SIGINT.
     */
    async drain(): Promise<void> {
        this.deployment.stop();
        await (this.fetcher?.drain() ?? Promise.resolve());
        await this.deployment.finish(this.engineAlive, 2500).catch((e: unknown) => {
            this.log.debug(`the crash journal's end of run failed: ${e instanceof Error ? e.message : String(e)}`);
        });
        await this.log.flush();
    }

    /** No mappings: this package converts no other tool's programs. */
    getMapping(): pb.GetMappingResponse {
        return new pb.GetMappingResponse();
    }

    getMappings(): pb.GetMappingsResponse {
        return new pb.GetMappingsResponse();
    }

    cancel(): Empty {
        this.deployment.cancel();
        this.fetcher?.cancelAll();
        return new Empty();
    }

    /** The definition of a resource type; the provider's own type and unknown types are errors that say so. */
    private resource(type: string): Resource {
        const def = resourcesByToken.get(type);
        if (def) return def;
        if (type === PROVIDER_TYPE) {
            throw new RpcError(grpc.status.INVALID_ARGUMENT, `${PROVIDER_TYPE} is configured through CheckConfig/DiffConfig/Configure`);
        }
        throw unknownResource(type);
    }

    private context(): InvokeContext {
        return { iam: () => this.iam() };
    }

    /**
     * Runs a resource operation inside the deployment (journal/journal.ts): `held` is the claim of the state the engine
     * sent, `scope` that of the state the answer leaves.
     */
    private operation<T>(op: { urn: string; kind: OperationKind; preview: boolean; held?: Claim },
        run: (ctx: ResourceContext) => Promise<T>, scope: (result: T) => Claim | undefined): Promise<T> {
        return this.deployment.operation(op, { iam: () => this.iam(), warn: (message) => this.log.warn(message, op.urn) }, run, scope);
    }

    check(req: pb.CheckRequest): pb.CheckResponse {
        this.deployment.attach(req.getUrn());
        const def = this.resource(typeOf(req));
        const { failures, claim, warnings } = def.check(toMap(req.getNews()));
        // Check sees every resource of the program on every preview and update: resources that fight over a
        // grant, a role or a whole policy are told so, each on its own resource (once per pair, in the deployment).
        if (claim) for (const n of this.deployment.declare(req.getUrn(), claim)) this.log.warn(n.message, n.urn);
        for (const w of warnings) this.log.warn(w, req.getUrn());
        // The inputs are taken as the engine sent them (nothing is defaulted or normalized).
        return new pb.CheckResponse().setInputs(req.getNews() ?? new Struct()).setFailuresList(failuresOf(failures));
    }

    diff(req: pb.DiffRequest): pb.DiffResponse {
        const def = this.resource(typeOf(req));
        const olds = req.hasOldInputs() ? toMap(req.getOldInputs()) : toMap(req.getOlds());
        const d = def.diff(olds, toMap(req.getNews()));
        // The engine sends a resource's state only when it holds it: the journal takes it as the engine's word, and
        // asks for an update where the state and IAM disagree on a grant the program declares (journal/journal.ts).
        const journal = this.deployment.state(req.getUrn(), def.claimOf(toMap(req.getOlds())), def.claimOf(toMap(req.getNews())));
        for (const why of journal.tell) this.log.warn(why, req.getUrn());
        if (journal.force && !d.changed.includes(def.grantProperty)) {
            d.changed.push(def.grantProperty);
            d.detailed.push({ path: def.grantProperty, kind: "update", replace: false });
        }
        const res = new pb.DiffResponse()
            .setChanges(d.changed.length ? pb.DiffResponse.DiffChanges.DIFF_SOME : pb.DiffResponse.DiffChanges.DIFF_NONE)
            .setDiffsList(d.changed).setReplacesList(d.replaces).setDeletebeforereplace(d.deleteBeforeReplace)
            .setHasdetaileddiff(true);
        const K = pb.PropertyDiff.Kind;
        const kinds = { add: [K.ADD, K.ADD_REPLACE], delete: [K.DELETE, K.DELETE_REPLACE], update: [K.UPDATE, K.UPDATE_REPLACE] };
        for (const line of d.detailed) {
            res.getDetaileddiffMap().set(line.path, new pb.PropertyDiff().setKind(kinds[line.kind][line.replace ? 1 : 0]).setInputdiff(true));
        }
        return res;
    }

    async create(req: pb.CreateRequest): Promise<pb.CreateResponse> {
        const def = this.resource(typeOf(req));
        const r = await this.operation({ urn: req.getUrn(), kind: "create", preview: req.getPreview() },
            (ctx) => def.create(toMap(req.getProperties()), req.getPreview(), ctx), (res) => def.claimOf(res.properties));
        return new pb.CreateResponse().setId(r.id).setProperties(toStruct(r.properties));
    }

    async read(req: pb.ReadRequest): Promise<pb.ReadResponse> {
        const def = this.resource(typeOf(req));
        const state = toMap(req.getProperties());
        // A refresh sends the state the engine holds; an import has none yet.
        const refresh = Object.keys(state).length > 0;
        const r = await this.operation({ urn: req.getUrn(), kind: refresh ? "refresh" : "import", preview: false, held: refresh ? def.claimOf(state) : undefined },
            (ctx) => def.read(req.getId(), state, toMap(req.getInputs()), ctx), (res) => (res && !("reason" in res) ? def.claimOf(res.properties) : undefined));
        if (r === undefined) return new pb.ReadResponse(); // gone: an empty ID tells the engine so
        if ("reason" in r) throw new RpcError(grpc.status.INVALID_ARGUMENT, r.reason);
        return new pb.ReadResponse().setId(r.id).setProperties(toStruct(r.properties)).setInputs(toStruct(r.inputs));
    }

    async update(req: pb.UpdateRequest): Promise<pb.UpdateResponse> {
        const def = this.resource(typeOf(req));
        const olds = req.hasOldInputs() ? toMap(req.getOldInputs()) : toMap(req.getOlds());
        const properties = await this.operation({ urn: req.getUrn(), kind: "update", preview: req.getPreview(), held: def.claimOf(toMap(req.getOlds())) },
            (ctx) => def.update(olds, toMap(req.getNews()), req.getPreview(), ctx), (res) => def.claimOf(res));
        return new pb.UpdateResponse().setProperties(toStruct(properties));
    }

    async delete(req: pb.DeleteRequest): Promise<Empty> {
        const def = this.resource(typeOf(req));
        const state = toMap(req.getProperties());
        await this.operation({ urn: req.getUrn(), kind: "delete", preview: false, held: def.claimOf(state) }, (ctx) => def.delete(state, ctx), () => undefined);
        return new Empty();
    }

    close(): void {
        this.fetcher?.close();
        this.deployment.close();
        this.log.close();
    }
}

/** Turns any failure into a status a person can read; never includes a credential. */
function toStatus(e: unknown): Partial<grpc.StatusObject> {
    if (e instanceof RpcError) return { code: e.code, details: e.message };
    if (e instanceof IamError) return { code: e.code as grpc.status, details: e.message };
    if (e instanceof InputError) return { code: grpc.status.INVALID_ARGUMENT, details: `invalid inputs: ${e.message}` };
    const message = e instanceof Error ? e.message : String(e);
    return { code: grpc.status.INTERNAL, details: `internal error: ${redact(message)}` };
}

type Handler<Req, Res> = (req: Req) => Res | Promise<Res>;

function unary<Req, Res>(log: Logger, name: string, fn: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
        Promise.resolve()
            .then(() => fn(call.request))
            .then((res) => callback(null, res))
            .catch((e: unknown) => {
                const status = toStatus(e);
                if (status.code === grpc.status.INTERNAL) log.error(`${name}: ${status.details}`);
                callback(status);
            });
    };
}

/**
 * The gRPC service implementation: every unary RPC of the protocol for which Provider has a method of the same
 * name (so a Provider method is named for its RPC and nothing else is); the others answer UNIMPLEMENTED.
 */
export function serviceFor(p: Provider, log: Logger): grpc.UntypedServiceImplementation {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(ResourceProviderService)) {
        const handler: unknown = Reflect.get(p, name);
        if (method.requestStream || method.responseStream || typeof handler !== "function") continue;
        impl[name] = unary(log, method.path.split("/").pop() ?? name, (req: unknown): unknown => handler.call(p, req));
    }
    return impl;
}

/** Starts the gRPC server on 127.0.0.1; resolves with the port and a shutdown function. */
export async function serve(log: Logger, engineAddress?: string, engineAlive?: EngineAlive, command?: () => RunCommand): Promise<{ port: number; shutdown(): Promise<void> }> {
    const provider = new Provider(log, engineAlive, command);
    provider.attachEngine(engineAddress);
    const server = new grpc.Server({
        "grpc.max_receive_message_length": 400 * 1024 * 1024,
        "grpc.max_send_message_length": 400 * 1024 * 1024,
        "grpc.enable_channelz": 0, // per-call bookkeeping nobody reads here
    });
    server.addService(ResourceProviderService, serviceFor(provider, log));
    // The ipv4: scheme takes the address as it is, without the DNS resolver a bare host:port goes through.
    const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync("ipv4:127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    return {
        port,
        shutdown: () => new Promise<void>((resolve) => {
            // Drop reads, finish writes already sent (and their confirmations), answer the calls in flight; never
            // hang the engine: it kills a plugin 5 s after SIGINT (and waits for it before the next), so force
            // just before that. Once drained, the calls left only have a failure to send, which takes
            // milliseconds; a graceful close can still wait seconds on a client connection that stays open, so
            // it gets a short grace only.
            let force = setTimeout(() => done(true), 4000);
            function done(forced: boolean): void {
                clearTimeout(force);
                if (forced) server.forceShutdown();
                resolve();
            }
            void provider.drain().finally(() => {
                clearTimeout(force);
                force = setTimeout(() => done(true), 250);
                server.tryShutdown(() => done(false));
            });
        }).finally(() => provider.close()),
    };
}

