// The HTTP surface: the Service Management API subset (`/v1/services…`), IAM Credentials' generateAccessToken,
// the OAuth2 token endpoint (`/token`) and an unauthenticated admin surface (`/__emulator/…`). Plain `http`,
// one synchronous handler per request after the body is read: fast, and no interleaving inside a write.

import { randomInt } from "crypto";
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "http";
import https from "https";
import {
    applySet, checkPolicy, checkUpdateMask, deletion, etagMatches, PolicyProblem, renameMember, viewPolicy, type Accounts,
    type StoredPolicy,
} from "./iam";
import { ApiError, errorInfo, SERVICE_MANAGEMENT } from "./errors";
import { BadField, isMessage, isObject, parseMessage, type Message, type MessageName, type Value } from "./protojson";
import { consumerOf, quotaExceeded, RateQuota } from "./quota";
import { isProjectId, isServiceName, PERMISSIONS } from "./rules";
import { Store } from "./state";
import { TokenAuthority, type Caller } from "./tokens";
import type {
    AuthorizedUserFile, Behavior, Emulator, EmulatorOptions, FaultKind, FaultSettings, IssueTokenOptions, ManagedService,
    Policy, RequestRecord, ServiceAccountKey,
} from "./types";
import { DEFAULT_FAULT_KINDS, DEFAULTS, FAULT_KINDS } from "./types";

const JSON_TYPE = "application/json; charset=UTF-8";
const MAX_BODY = 1 << 20;
/** Past this much discarded body the socket is dropped rather than drained. */
const MAX_DRAIN = 64 * MAX_BODY;
const MAX_RECORDS = 100_000;
const IAM_VERBS = new Set(["getIamPolicy", "setIamPolicy", "testIamPermissions"]);
const VERBS = new Set([...IAM_VERBS, "generateAccessToken"]);
const AUTH = "https://www.googleapis.com/auth/";
const READ_SCOPES = new Set(["cloud-platform", "cloud-platform.read-only", "service.management", "service.management.readonly"].map((s) => AUTH + s));
const WRITE_SCOPES = new Set(["cloud-platform", "service.management"].map((s) => AUTH + s));
const IAM_SCOPES = new Set(["cloud-platform", "iam"].map((s) => AUTH + s));
const EMAIL = /^[^\s@/]+@[^\s@/]+$/;
const SERVICE_NAME_RULE = "a service name is a DNS name: dot-separated labels of lowercase letters, digits and " +
    "dashes, each starting with a letter, at most 63 characters each and 253 in all";
const PROJECT_ID_RULE = "a project ID is 6 to 30 lowercase letters, digits or hyphens, starting with a letter and " +
    "not ending with a hyphen, or a domain-scoped ID such as example.com:my-project";
const CREDENTIALS_HINT = "Expected OAuth 2 access token, login cookie or other valid authentication credential. " +
    "See https://developers.google.com/identity/sign-in/web/devconsole-project.";

const badRequest = (message: string, field?: string): ApiError => new ApiError(400, "INVALID_ARGUMENT", message,
    field === undefined ? [] : [{
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: [{ field, description: message }],
    }]);

/** A repeated string field (or field mask) of a parsed message. */
function stringList(v: Value | undefined): string[] {
    const out: string[] = [];
    if (Array.isArray(v)) for (const s of v) if (typeof s === "string") out.push(s);
    return out;
}

/** Parses a request body as a message of the discovery document; a field it does not allow is a 400 naming it. */
function parseBody(body: Record<string, unknown>, name: MessageName): Message {
    try {
        return parseMessage(body, name);
    } catch (e) {
        if (e instanceof BadField) throw badRequest(e.message, e.field);
        throw e;
    }
}

function permissionDenied(permission: string, resource: string): ApiError {
    return new ApiError(403, "PERMISSION_DENIED",
        `Permission '${permission}' denied on resource '${resource}' (or it may not exist).`,
        [errorInfo("IAM_PERMISSION_DENIED", { permission, resource })]);
}

function decodeSegment(s: string): string {
    if (!s.includes("%")) return s;
    try {
        return decodeURIComponent(s);
    } catch {
        throw badRequest("Invalid resource name: malformed percent-encoding in the request path.");
    }
}

function rfc3339(ms: number): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `path`, cut short for an error message. */
function shownPath(path: string): string {
    return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** One request in flight. */
interface Ctx {
    req: IncomingMessage;
    res: ServerResponse;
    path: string;
    query: string;
    body: Buffer;
    /**
     * A Service Management call (`/v1/services…`), decided once per request: only these are delayed and
     * faulted, and (in their handlers, once the caller is known) charged to the rate quota.
     */
    serviceManagement: boolean;
    /** The X-Goog-User-Project header, as sent: recorded as is, and the rate quota's consumer when not empty. */
    userProject?: string;
    record?: RequestRecord;
    /** A `lost` fault: the request is carried out, its answer never sent. */
    loseAnswer?: boolean;
}

export class EmulatorServer implements Emulator {
    url = "";
    origin = "";
    tokenUrl = "";
    port = 0;
    readonly requests: RequestRecord[] = [];
    readonly impersonations: string[] = [];
    /** Requests received since the last reset, including those no longer kept in `requests`. */
    requestCount = 0;
    quotaRefusals = 0;
    private readonly server: http.Server | https.Server;
    private readonly store: Store;
    private tokens!: TokenAuthority;
    private faultRate: number = DEFAULTS.faultRate;
    private faultKinds: FaultKind[] = [...DEFAULT_FAULT_KINDS];
    private slowAnswers?: { verb: string; count: number; delayMs: number };
    private latencyMs: number = DEFAULTS.latencyMs;
    private minLatencyMs = 0;
    private readonly timers = new Set<NodeJS.Timeout>();
    /** Requests received and not yet dispatched (their body, or their latency, still to come), and who waits for none. */
    private undispatched = 0;
    private readonly quietWaiters: (() => void)[] = [];
    /** Serialized getIamPolicy answers per stored policy object (replaced on every write, so never stale). */
    private readonly viewCache = new WeakMap<StoredPolicy, string[]>();
    private closing?: Promise<void>;
    private propagationMs: number = DEFAULTS.propagationMs;
    private missingService: 403 | 404 = DEFAULTS.missingService;
    private allowConditions = false;
    private quota?: RateQuota;
    private readonly quotaClock?: () => number;
    /** The accounts view the policy checks use. */
    private readonly accounts: Accounts;
    private readonly host: string;
    private readonly listenPort: number;
    private readonly tokenLifetime: number;

    constructor(private readonly options: EmulatorOptions = {}) {
        const port = (this.listenPort = options.port ?? DEFAULTS.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`invalid port ${port}`);
        const lifetime = (this.tokenLifetime = options.tokenLifetime ?? DEFAULTS.tokenLifetime);
        if (!Number.isFinite(lifetime) || lifetime < 0) throw new RangeError(`invalid token lifetime ${lifetime}`);
        this.host = options.host ?? DEFAULTS.host;
        // Omitted options keep the fields' defaults.
        this.setFaults({ rate: options.faultRate, latencyMs: options.latencyMs });
        this.store = new Store(options.state);
        this.accounts = { isDeleted: (m) => this.store.deletedPrincipals.has(m) };
        this.setBehavior(options);
        this.quotaClock = options.quotaClock;
        this.setQuota(options.quotaPerMinute);
        const handle = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
        this.server = options.tls
            ? https.createServer({ noDelay: true, cert: options.tls.cert, key: options.tls.key }, handle)
            : http.createServer({ noDelay: true }, handle);
    }

    async listen(): Promise<void> {
        const host = this.host;
        await new Promise<void>((resolve, reject) => {
            this.server.once("error", reject);
            this.server.listen(this.listenPort, host, () => {
                this.server.off("error", reject);
                resolve();
            });
        });
        const address = this.server.address();
        if (address === null || typeof address === "string") throw new Error("the emulator is not listening on TCP");
        this.port = address.port;
        this.origin = `${this.options.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${this.port}`;
        this.url = `${this.origin}/v1/`;
        this.tokenUrl = `${this.origin}/token`;
        const origins = [`https://${SERVICE_MANAGEMENT}`, this.origin];
        this.tokens = new TokenAuthority(this.store, this.tokenLifetime, this.tokenUrl, origins);
        for (const t of this.options.accessTokens ?? []) this.tokens.addStatic(t, false);
        for (const t of this.options.deniedTokens ?? []) this.tokens.addStatic(t, true);
    }

    close(): Promise<void> {
        this.closing ??= new Promise<void>((resolve) => {
            for (const t of this.timers) clearTimeout(t);
            this.timers.clear();
            this.undispatched = 0;
            for (const wake of this.quietWaiters.splice(0)) wake();
            this.server.close(() => resolve());
            this.server.closeAllConnections();
        });
        return this.closing;
    }

    // ---- in-process API ------------------------------------------------------------------------------------

    resetRequests(): void {
        this.requests.length = 0;
        this.requestCount = 0;
        this.quotaRefusals = 0;
    }

    setFaults(faults: FaultSettings): void {
        const rate = faults.rate ?? this.faultRate;
        const latencyMs = faults.latencyMs ?? this.latencyMs;
        const minLatencyMs = faults.minLatencyMs ?? 0;
        if (typeof rate !== "number" || !(rate >= 0 && rate <= 1)) throw new RangeError(`fault rate must be within 0..1, got ${rate}`);
        if (typeof latencyMs !== "number" || !(latencyMs >= 0 && Number.isFinite(latencyMs))) {
            throw new RangeError(`latency must be a non-negative number of ms, got ${latencyMs}`);
        }
        if (!(minLatencyMs >= 0 && minLatencyMs <= Math.max(latencyMs, minLatencyMs) && Number.isFinite(minLatencyMs))) {
            throw new RangeError(`minimum latency must be a non-negative number of ms, got ${minLatencyMs}`);
        }
        const kinds = faults.kinds ?? this.faultKinds;
        if (kinds.length === 0 || !kinds.every((k) => FAULT_KINDS.includes(k))) {
            throw new RangeError(`fault kinds must be some of ${FAULT_KINDS.join(", ")}, got ${JSON.stringify(kinds)}`);
        }
        if (faults.slowAnswers !== undefined) {
            const { verb, count, delayMs } = faults.slowAnswers;
            if (!VERBS.has(verb) || !(Number.isInteger(count) && count >= 0) || !(delayMs >= 0 && Number.isFinite(delayMs))) {
                throw new RangeError(`slow answers need a verb of ${[...VERBS].join(", ")}, a count ≥ 0 and a delay ≥ 0 ms`);
            }
            this.slowAnswers = { verb, count, delayMs };
        }
        this.faultKinds = [...kinds];
        this.faultRate = rate;
        this.latencyMs = Math.max(latencyMs, minLatencyMs);
        this.minLatencyMs = minLatencyMs;
    }

    setQuota(perMinute: number | undefined): void {
        this.quota = perMinute === undefined ? undefined : new RateQuota(perMinute, this.quotaClock);
    }

    setBehavior(behavior: Behavior): void {
        // Only an omitted field keeps its value: anything else given (null included) must be valid.
        const propagationMs = behavior.propagationMs === undefined ? this.propagationMs : behavior.propagationMs;
        const missingService = behavior.missingService === undefined ? this.missingService : behavior.missingService;
        const allowConditions = behavior.allowConditions === undefined ? this.allowConditions : behavior.allowConditions;
        if (typeof allowConditions !== "boolean") throw new RangeError(`allowConditions must be true or false, got ${String(allowConditions)}`);
        if (!(propagationMs >= 0 && Number.isFinite(propagationMs))) {
            throw new RangeError(`propagation delay must be a non-negative number of ms, got ${propagationMs}`);
        }
        if (missingService !== 403 && missingService !== 404) throw new RangeError(`missing-service status must be 403 or 404, got ${missingService}`);
        this.propagationMs = propagationMs;
        this.missingService = missingService;
        this.allowConditions = allowConditions;
    }

    deletePrincipal(member: string): string {
        const uid = String(randomInt(1, 2 ** 47)).padStart(21, "1");
        const { member: stored, deleted } = deletion(member, uid);
        if (this.store.deletedPrincipals.has(stored)) throw new Error(`${stored} is already deleted`);
        this.store.deletedPrincipals.set(stored, deleted);
        this.renameEverywhere(stored, deleted);
        return deleted;
    }

    undeletePrincipal(member: string): void {
        const { member: stored } = deletion(member, "0");
        const deleted = this.store.deletedPrincipals.get(stored);
        if (deleted === undefined) throw new Error(`${stored} is not deleted`);
        this.store.deletedPrincipals.delete(stored);
        this.renameEverywhere(deleted, stored);
    }

    /** Rewrites a member in every stored policy at once, as IAM does on (un)deletion (no propagation delay). */
    private renameEverywhere(from: string, to: string): void {
        for (const [parent, policy] of this.store.policies) {
            const next = renameMember(policy, from, to, () => this.store.nextEtag());
            if (next) this.store.writePolicy(parent, next, 0, false);
        }
        this.store.save();
    }

    watchPolicies(listener: (parentName: string) => void): () => void {
        this.store.watchers.add(listener);
        return () => this.store.watchers.delete(listener);
    }

    quiet(): Promise<void> {
        return this.undispatched === 0 ? Promise.resolve() : new Promise((resolve) => this.quietWaiters.push(resolve));
    }

    mintServiceAccountKey(opts?: { clientEmail?: string; projectId?: string }): ServiceAccountKey {
        return this.tokens.mintServiceAccountKey(opts);
    }

    mintAuthorizedUser(): AuthorizedUserFile {
        return this.tokens.mintAuthorizedUser();
    }

    issueToken(opts: IssueTokenOptions = {}): string {
        return this.tokens.issue(opts).token;
    }

    addAccessToken(token: string, opts: { denied?: boolean } = {}): void {
        this.tokens.addStatic(token, opts.denied ?? false);
    }

    createService(serviceName: string, producerProjectId: string): ManagedService {
        const name = this.serviceNameOrThrow(serviceName, (m) => new Error(m));
        if (!isProjectId(producerProjectId)) throw new Error(`Invalid producerProjectId ${JSON.stringify(producerProjectId)}: ${PROJECT_ID_RULE}`);
        if (this.store.services.has(name)) throw new Error(`service ${name} already exists`);
        const service = { serviceName: name, producerProjectId };
        this.store.services.set(name, service);
        this.store.save();
        return { ...service };
    }

    setPolicy(parentName: string, policy: Policy): Policy {
        const parent = this.seedParent(parentName);
        // A seeded policy passes the same checks as a write at version 3, without the etag check; and it places
        // a state rather than making a setIamPolicy call, so it takes conditions whatever allowConditions says.
        const { etag: _ignored, ...rest } = policy;
        const raw: Record<string, unknown> = { ...rest, version: 3 };
        let next: StoredPolicy;
        try {
            const input = checkPolicy(parseMessage(raw, "Policy", "policy"),
                { accounts: this.accounts, resource: parent, conditionsAllowed: true });
            next = applySet(this.store.policyOf(parent), input, new Set(["bindings", "auditConfigs"]), this.store.nextEtag());
        } catch (e) {
            if (e instanceof PolicyProblem || e instanceof BadField) throw new Error(`${e.message} (${e.field})`);
            throw e;
        }
        this.store.writePolicy(parent, next, 0);
        return structuredClone(viewPolicy(next, 3));
    }

    getPolicy(parentName: string): Policy {
        return structuredClone(viewPolicy(this.store.policyOf(this.seedParent(parentName)), 3));
    }

    private seedParent(parentName: string): string {
        const parts = parentName.split("/");
        const ok = parts[0] === "services" && (parts.length === 2 || (parts.length === 4 && parts[2] === "consumers"));
        if (!ok) throw new Error(`${parentName} is not services/S or services/S/consumers/P`);
        const name = this.serviceNameOrThrow(parts[1], (m) => new Error(m));
        if (!this.store.services.has(name)) throw new Error(`service ${name} does not exist`);
        if (parts.length === 2) return `services/${name}`;
        if (!isProjectId(parts[3])) throw new Error(`Invalid consumer project ${JSON.stringify(parts[3])}: ${PROJECT_ID_RULE}`);
        return `services/${name}/consumers/${parts[3]}`;
    }

    /** A bare service name; `services/S` is refused here because a path segment never carries the prefix. */
    private serviceNameOrThrow(raw: string, error: (message: string) => Error): string {
        if (raw.startsWith("services/")) throw error(`Invalid service name ${JSON.stringify(raw)}: give the bare name, without "services/".`);
        if (!isServiceName(raw)) throw error(`Invalid service name ${JSON.stringify(raw.slice(0, 300))}: ${SERVICE_NAME_RULE}.`);
        return raw;
    }

    // ---- HTTP ----------------------------------------------------------------------------------------------

    private handle(req: IncomingMessage, res: ServerResponse): void {
        const raw = req.url ?? "/";
        const q = raw.indexOf("?");
        const path = q < 0 ? raw : raw.slice(0, q);
        const userProject = req.headers["x-goog-user-project"];
        const ctx: Ctx = {
            req, res, path,
            query: q < 0 ? "" : raw.slice(q + 1),
            body: Buffer.alloc(0),
            serviceManagement: path.startsWith("/v1/services"),
            userProject: typeof userProject === "string" ? userProject : undefined,
        };
        if (!ctx.path.startsWith("/__emulator/")) {
            ctx.record = { method: req.method ?? "", path: ctx.path, status: 0, userAgent: req.headers["user-agent"] ?? "" };
            if (ctx.userProject !== undefined) ctx.record.userProject = ctx.userProject;
            this.requestCount++;
            this.requests.push(ctx.record);
            if (this.requests.length > MAX_RECORDS) this.requests.splice(0, MAX_RECORDS / 2);
        }
        req.on("error", () => { /* client went away; nothing to answer */ });
        // Until it is dispatched (or its client leaves before its body is whole), the request may still change a policy.
        this.undispatched++;
        let counted = true;
        let ended = false;
        const dispatched = () => {
            if (!counted) return;
            counted = false;
            if (--this.undispatched === 0) for (const wake of this.quietWaiters.splice(0)) wake();
        };
        req.on("close", () => {
            if (!ended) dispatched();
        });
        const declared = Number(req.headers["content-length"] ?? 0);
        let size = 0;
        let tooLarge = declared > MAX_BODY;
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY) tooLarge = true;
            if (size > MAX_DRAIN) req.socket.destroy();
            else if (!tooLarge) chunks.push(chunk);
        });
        req.on("end", () => {
            ended = true;
            if (tooLarge) {
                dispatched();
                this.sendError(ctx, new ApiError(413, "INVALID_ARGUMENT", `Request payload size exceeds the limit: ${MAX_BODY} bytes.`));
                return;
            }
            ctx.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
            if (ctx.serviceManagement && this.latencyMs > 0) {
                const timer = setTimeout(() => {
                    this.timers.delete(timer);
                    dispatched();
                    this.dispatch(ctx);
                }, this.minLatencyMs + Math.random() * (this.latencyMs - this.minLatencyMs));
                this.timers.add(timer);
            } else {
                dispatched();
                this.dispatch(ctx);
            }
        });
    }

    private dispatch(ctx: Ctx): void {
        try {
            if (ctx.serviceManagement && this.faultRate > 0 && Math.random() < this.faultRate && this.fault(ctx)) return;
            if (ctx.path.startsWith("/v1/")) this.api(ctx);
            else if (ctx.path === "/token") this.tokenEndpoint(ctx);
            else if (ctx.path.startsWith("/__emulator/")) this.admin(ctx);
            else this.frontEndNotFound(ctx);
        } catch (e) {
            if (e instanceof ApiError) {
                this.sendError(ctx, e);
            } else {
                process.stderr.write(`cloud-emulator: internal error on ${ctx.req.method} ${ctx.path}: ${(e as Error).stack}\n`);
                this.sendError(ctx, new ApiError(500, "INTERNAL", "Internal error encountered."));
            }
        }
    }

    private send(ctx: Ctx, status: number, body: string, headers?: OutgoingHttpHeaders): void {
        if (ctx.record) ctx.record.status = status;
        const slow = this.slowAnswers;
        if (slow && slow.count > 0 && ctx.path.endsWith(`:${slow.verb}`)) {
            slow.count--;
            const timer = setTimeout(() => {
                this.timers.delete(timer);
                this.answer(ctx, status, body, headers);
            }, slow.delayMs);
            this.timers.add(timer);
            return;
        }
        this.answer(ctx, status, body, headers);
    }

    private answer(ctx: Ctx, status: number, body: string, headers?: OutgoingHttpHeaders): void {
        if (ctx.res.destroyed) return;
        if (ctx.loseAnswer) {
            if (ctx.record) ctx.record.status = 0;
            return void ctx.req.socket.destroy();
        }
        ctx.res.writeHead(status, { "Content-Type": JSON_TYPE, ...headers, "Content-Length": Buffer.byteLength(body) });
        ctx.res.end(body);
    }

    private sendError(ctx: Ctx, e: ApiError): void {
        // Google sends `details` only when there are some.
        const error = e.details.length
            ? { code: e.code, message: e.message, status: e.status, details: e.details }
            : { code: e.code, message: e.message, status: e.status };
        const body = JSON.stringify({ error });
        this.send(ctx, e.code, body, e.headers);
    }

    /**
     * A path outside every API: Google's front end answers it with an HTML page, not an API error (what a
     * client configured with a base URL lacking `/v1/` gets).
     */
    private frontEndNotFound(ctx: Ctx): void {
        const shown = shownPath(ctx.path).replace(/[<>&"]/g, "");
        const html = "<!DOCTYPE html>\n<html lang=en>\n<meta charset=utf-8>\n<title>Error 404 (Not Found)!!1</title>\n" +
            `<p><b>404.</b> <ins>That’s an error.</ins>\n<p>The requested URL <code>${shown}</code> was not found on this server. ` +
            "<ins>That’s all we know.</ins>\n";
        this.send(ctx, 404, html, { "Content-Type": "text/html; charset=UTF-8" });
    }

    /** An unknown path, or a known path with another HTTP verb (Google maps each method to one verb). */
    private notFound(ctx: Ctx): ApiError {
        return new ApiError(404, "NOT_FOUND", `The requested URL ${shownPath(ctx.path)} was not found on this server.`);
    }

    /**
     * An injected fault: a 429, a 503 or a reset connection, each transient, as Google's front end sometimes
     * answers. The 429 is not the rate quota's refusal (quota.ts): it names no limit (no quota_limit_value in
     * its ErrorInfo, which is how a client tells it is worth retrying at once) and says so with Retry-After: 0.
     */
    /** Injects one fault: true when it ends the request, false when the request goes on (`lost`: its answer will not). */
    private fault(ctx: Ctx): boolean {
        switch (this.faultKinds[randomInt(this.faultKinds.length)]) {
            case "429":
                throw new ApiError(429, "RESOURCE_EXHAUSTED",
                    "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service " +
                    `'${SERVICE_MANAGEMENT}'.`,
                    [errorInfo("RATE_LIMIT_EXCEEDED", { service: SERVICE_MANAGEMENT })],
                    { "Retry-After": "0" });
            case "503":
                throw new ApiError(503, "UNAVAILABLE", "The service is currently unavailable.");
            case "lost":
                ctx.loseAnswer = true;
                return false;
            default:
                ctx.req.socket.destroy();
                return true;
        }
    }

    /** Routes `/v1/…`. The verb is read from the raw last segment, so an encoded `%3A` never splits a name. */
    private api(ctx: Ctx): void {
        const segs = ctx.path.slice(4).split("/");
        const last = segs[segs.length - 1];
        const colon = last.lastIndexOf(":");
        let verb: string | undefined;
        if (colon >= 0 && VERBS.has(last.slice(colon + 1))) {
            verb = last.slice(colon + 1);
            segs[segs.length - 1] = last.slice(0, colon);
        }
        // No name here holds a raw `:`, so one left over is an unknown custom verb.
        if (segs.some((s) => s === "") || (!verb && colon >= 0)) throw this.notFound(ctx);
        const method = ctx.req.method;
        if (segs[0] === "services") {
            if (segs.length === 1 && !verb) {
                if (method === "POST") return this.createServiceHttp(ctx);
                if (method === "GET") return this.listServices(ctx);
                throw this.notFound(ctx);
            }
            if (segs.length === 2 && !verb) {
                if (method === "GET") return this.getService(ctx, segs[1]);
                throw this.notFound(ctx);
            }
            const consumer = segs.length === 4 && segs[2] === "consumers";
            if ((segs.length === 2 || consumer) && verb && IAM_VERBS.has(verb)) {
                if (method !== "POST") throw this.notFound(ctx);
                return this.iam(ctx, verb, segs[1], consumer ? segs[3] : undefined);
            }
        }
        if (segs.length === 4 && segs[0] === "projects" && segs[1] === "-" && segs[2] === "serviceAccounts" &&
            verb === "generateAccessToken") {
            if (method !== "POST") throw this.notFound(ctx);
            return this.generateAccessToken(ctx, segs[3]);
        }
        throw this.notFound(ctx);
    }

    /** The caller of an API request; 401 unless a known unexpired bearer token, 403 without a fitting scope. */
    private caller(ctx: Ctx, scopes: ReadonlySet<string>): Caller {
        const header = ctx.req.headers.authorization;
        if (!header) {
            throw new ApiError(401, "UNAUTHENTICATED", `Request is missing required authentication credential. ${CREDENTIALS_HINT}`,
                [errorInfo("CREDENTIALS_MISSING", { service: SERVICE_MANAGEMENT })],
                { "WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"' });
        }
        const caller = header.length > 7 && header.slice(0, 7).toLowerCase() === "bearer "
            ? this.tokens.authenticate(header.slice(7).trim())
            : undefined;
        if (caller === undefined || caller === "expired") {
            // An expired token and one IAM never issued get the same message but distinct reasons.
            throw new ApiError(401, "UNAUTHENTICATED", `Request had invalid authentication credentials. ${CREDENTIALS_HINT}`,
                [errorInfo(caller === "expired" ? "ACCESS_TOKEN_EXPIRED" : "ACCESS_TOKEN_TYPE_UNSUPPORTED", { service: SERVICE_MANAGEMENT })],
                { "WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' });
        }
        if (caller.scopes && !caller.scopes.some((s) => scopes.has(s))) {
            throw new ApiError(403, "PERMISSION_DENIED", "Request had insufficient authentication scopes.",
                [errorInfo("ACCESS_TOKEN_SCOPE_INSUFFICIENT", { service: SERVICE_MANAGEMENT })],
                { "WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="insufficient_scope"' });
        }
        return caller;
    }

    /**
     * The caller of a Service Management call, which is then counted against the rate quota, or refused (429,
     * not counted). Charged once the caller is known, as Google charges the consumer its credentials name: a
     * call without valid credentials is not counted. Per consumer project (see consumerOf). Only Service
     * Management's handlers call this: IAM Credentials' generateAccessToken, also under /v1/, is another
     * service with a quota of its own.
     */
    private smCaller(ctx: Ctx, scopes: ReadonlySet<string>): Caller {
        const caller = this.caller(ctx, scopes);
        if (this.quota) {
            const consumer = consumerOf(ctx.userProject);
            if (!this.quota.admit(consumer)) {
                this.quotaRefusals++;
                throw quotaExceeded(consumer, this.quota.limit);
            }
        }
        return caller;
    }

    private json(ctx: Ctx): Record<string, unknown> {
        if (ctx.body.length === 0) return {};
        let value: unknown;
        try {
            value = JSON.parse(ctx.body.toString("utf8"));
        } catch {
            throw badRequest("Invalid JSON payload received. Unexpected token.");
        }
        if (!isObject(value)) throw badRequest("Invalid JSON payload received. Expected an object.");
        return value;
    }

    private serviceSegment(raw: string): string {
        return this.serviceNameOrThrow(decodeSegment(raw), badRequest);
    }

    private projectSegment(raw: string): string {
        const project = decodeSegment(raw);
        if (!isProjectId(project)) throw badRequest(`Invalid consumer project ${JSON.stringify(project.slice(0, 300))}: ${PROJECT_ID_RULE}.`);
        return project;
    }

    /** A service that does not exist: 403 by default (Google does not tell it from a denial), or 404. */
    private serviceNotFound(name: string): ApiError {
        return this.missingService === 404
            ? new ApiError(404, "NOT_FOUND", `Service '${name}' not found or permission denied.`)
            : new ApiError(403, "PERMISSION_DENIED", `Service '${name}' not found or permission denied.`);
    }

    private createServiceHttp(ctx: Ctx): void {
        const caller = this.smCaller(ctx, WRITE_SCOPES);
        const { serviceName, producerProjectId } = parseBody(this.json(ctx), "ManagedService");
        if (typeof serviceName !== "string") throw badRequest("serviceName is required.", "service_name");
        if (typeof producerProjectId !== "string") throw badRequest("producerProjectId is required.", "producer_project_id");
        const name = this.serviceNameOrThrow(serviceName, (m) => badRequest(m, "service_name"));
        if (!isProjectId(producerProjectId)) throw badRequest(`Invalid producerProjectId: ${PROJECT_ID_RULE}.`, "producer_project_id");
        if (caller.denied) throw permissionDenied("servicemanagement.services.create", `projects/${producerProjectId}`);
        if (this.store.services.has(name)) throw new ApiError(409, "ALREADY_EXISTS", `Service '${name}' already exists.`);
        const service = { serviceName: name, producerProjectId };
        this.store.services.set(name, service);
        const n = this.store.nextOperation();
        this.store.save();
        this.send(ctx, 200, JSON.stringify({
            name: `operations/services.${name}.${n}`,
            metadata: {
                "@type": "type.googleapis.com/google.api.servicemanagement.v1.OperationMetadata",
                resourceNames: [`services/${name}`],
                startTime: rfc3339(Date.now()),
            },
            done: true,
            response: { "@type": "type.googleapis.com/google.api.servicemanagement.v1.ManagedService", ...service },
        }));
    }

    private listServices(ctx: Ctx): void {
        const caller = this.smCaller(ctx, READ_SCOPES);
        const producer = new URLSearchParams(ctx.query).get("producerProjectId");
        const services = caller.denied ? [] : [...this.store.services.values()]
            .filter((s) => producer === null || s.producerProjectId === producer);
        this.send(ctx, 200, JSON.stringify(services.length ? { services } : {}));
    }

    private getService(ctx: Ctx, rawName: string): void {
        const caller = this.smCaller(ctx, READ_SCOPES);
        const name = this.serviceSegment(rawName);
        if (caller.denied) throw permissionDenied("servicemanagement.services.get", `services/${name}`);
        const service = this.store.services.get(name);
        if (!service) throw this.serviceNotFound(name);
        this.send(ctx, 200, JSON.stringify(service));
    }

    private iam(ctx: Ctx, verb: string, rawService: string, rawConsumer: string | undefined): void {
        const caller = this.smCaller(ctx, verb === "setIamPolicy" ? WRITE_SCOPES : READ_SCOPES);
        const body = this.json(ctx);
        const service = this.serviceSegment(rawService);
        const parent = rawConsumer === undefined
            ? `services/${service}`
            : `services/${service}/consumers/${this.projectSegment(rawConsumer)}`;
        const exists = this.store.services.has(service);

        if (verb === "testIamPermissions") {
            const names = stringList(parseBody(body, "TestIamPermissionsRequest").permissions);
            const wild = names.filter((p) => p.includes("*"));
            if (wild.length) {
                throw badRequest(`Permissions (${wild.map((p) => `'${p}'`).join(", ")}) for testIamPermissions are not allowed to have wildcards.`, "permissions");
            }
            // Missing resources and callers without access both get an empty set, never NOT_FOUND.
            const granted = caller.denied || !exists ? [] : names.filter((p) => PERMISSIONS.has(p));
            this.send(ctx, 200, granted.length ? JSON.stringify({ permissions: granted }) : "{}");
            return;
        }
        if (caller.denied) throw permissionDenied(`servicemanagement.services.${verb}`, parent);
        if (!exists) throw this.serviceNotFound(service);

        if (verb === "getIamPolicy") {
            const options = parseBody(body, "GetIamPolicyRequest").options;
            const version = isMessage(options) ? options.requestedPolicyVersion ?? 0 : 0;
            if (version !== 0 && version !== 1 && version !== 3) {
                throw badRequest(`Invalid requestedPolicyVersion ${JSON.stringify(version)}: it must be 0, 1 or 3.`, "options.requested_policy_version");
            }
            this.send(ctx, 200, this.viewJson(this.store.visiblePolicyOf(parent), version));
            return;
        }

        // setIamPolicy: checks, then one synchronous read-check-write, so the etag check is exact.
        const request = parseBody(body, "SetIamPolicyRequest");
        const policy = request.policy;
        if (!isMessage(policy)) {
            throw badRequest("Invalid argument: 'policy' is required.", "policy");
        }
        const mask = request.updateMask;
        const current = this.store.policyOf(parent);
        let next: StoredPolicy;
        try {
            const input = checkPolicy(policy, { accounts: this.accounts, resource: parent, conditionsAllowed: this.allowConditions });
            const paths = checkUpdateMask(mask === undefined ? undefined : stringList(mask));
            if (input.etag !== undefined && !etagMatches(current, input.etag)) {
                throw new ApiError(409, "ABORTED",
                    "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.");
            }
            next = applySet(current, input, paths, this.store.nextEtag());
        } catch (e) {
            if (e instanceof PolicyProblem) throw badRequest(e.message, e.field);
            throw e;
        }
        this.store.writePolicy(parent, next, this.propagationMs);
        this.send(ctx, 200, this.viewJson(next, 3));
    }

    private viewJson(stored: StoredPolicy, version: number): string {
        const slot = version === 3 ? 1 : 0;
        let cached = this.viewCache.get(stored);
        if (!cached) this.viewCache.set(stored, (cached = []));
        return (cached[slot] ??= JSON.stringify(viewPolicy(stored, version)));
    }

    /** IAM Credentials' generateAccessToken, which google-auth-library's `Impersonated` client calls. */
    private generateAccessToken(ctx: Ctx, rawEmail: string): void {
        const caller = this.caller(ctx, IAM_SCOPES);
        const body = parseBody(this.json(ctx), "GenerateAccessTokenRequest");
        const email = decodeSegment(rawEmail);
        if (!EMAIL.test(email)) throw badRequest(`Invalid service account email ${JSON.stringify(email)}.`);
        const resource = `projects/-/serviceAccounts/${email}`;
        if (caller.denied) throw permissionDenied("iam.serviceAccounts.getAccessToken", resource);
        const scope = stringList(body.scope).filter((s) => s !== "");
        if (scope.length === 0) throw badRequest("Scope required.", "scope");
        let lifetime = this.tokens.lifetimeSeconds;
        if (body.lifetime !== undefined) {
            const m = typeof body.lifetime === "string" ? /^(\d+(?:\.\d+)?)s$/.exec(body.lifetime) : null;
            const seconds = m ? Number(m[1]) : NaN;
            if (!(seconds > 0 && seconds <= 43200)) {
                throw badRequest("lifetime must be a duration such as \"3600s\", at most 43200s.");
            }
            lifetime = Math.min(lifetime, Math.floor(seconds));
        }
        const issued = this.tokens.issue({ lifetimeSeconds: lifetime, scopes: scope });
        this.impersonations.push(email);
        this.send(ctx, 200, JSON.stringify({ accessToken: issued.token, expireTime: rfc3339(issued.expiresAt) }));
    }

    /** `POST /token`, form-encoded (as google-auth-library sends) or JSON. */
    private tokenEndpoint(ctx: Ctx): void {
        const oauthError = (status: number, error: string, description: string): void =>
            this.send(ctx, status, JSON.stringify({ error, error_description: description }), { "Cache-Control": "no-store" });
        if (ctx.req.method !== "POST") return oauthError(405, "invalid_request", "The token endpoint only accepts POST.");
        const params: Record<string, string> = {};
        const text = ctx.body.toString("utf8");
        if ((ctx.req.headers["content-type"] ?? "").includes("json")) {
            let value: unknown;
            try { value = JSON.parse(text); } catch { /* reported below */ }
            if (!isObject(value)) return oauthError(400, "invalid_request", "Invalid JSON body.");
            for (const [k, v] of Object.entries(value)) if (typeof v === "string") params[k] = v;
        } else {
            for (const [k, v] of new URLSearchParams(text)) params[k] = v;
        }
        const result = this.tokens.grant(params);
        if (!result.ok) return oauthError(result.status, result.error, result.description);
        const answer: Record<string, string | number> = { access_token: result.token, expires_in: result.expiresIn };
        if (result.scope) answer.scope = result.scope;
        answer.token_type = "Bearer";
        this.send(ctx, 200, JSON.stringify(answer), { "Cache-Control": "no-store", Pragma: "no-cache" });
    }

    /** Loopback-only control surface for tests that run the emulator as a separate process. */
    private admin(ctx: Ctx): void {
        const method = ctx.req.method;
        if (ctx.path === "/__emulator/requests" && method === "GET") {
            this.send(ctx, 200, JSON.stringify({ count: this.requestCount, quotaRefusals: this.quotaRefusals, requests: this.requests }));
        } else if (ctx.path === "/__emulator/requests:reset" && method === "POST") {
            this.resetRequests();
            this.send(ctx, 200, "{}");
        } else if (ctx.path === "/__emulator/faults" && method === "POST") {
            const body = this.json(ctx);
            const faults: FaultSettings = {};
            if (body.rate !== undefined) faults.rate = body.rate as number;
            if (body.latencyMs !== undefined) faults.latencyMs = body.latencyMs as number;
            if (body.minLatencyMs !== undefined) faults.minLatencyMs = body.minLatencyMs as number;
            if (body.kinds !== undefined) faults.kinds = body.kinds as FaultKind[];
            try {
                this.setFaults(faults);
            } catch (e) {
                throw badRequest((e as Error).message);
            }
            this.send(ctx, 200, JSON.stringify({ rate: this.faultRate, latencyMs: this.latencyMs, minLatencyMs: this.minLatencyMs }));
        } else if (ctx.path === "/__emulator/behavior" && method === "POST") {
            const body = this.json(ctx);
            // Passed through as sent: setBehavior refuses a value of the wrong type or out of range.
            const behavior: Behavior = {};
            if (body.propagationMs !== undefined) behavior.propagationMs = body.propagationMs as number;
            if (body.missingService !== undefined) behavior.missingService = body.missingService as 403 | 404;
            if (body.allowConditions !== undefined) behavior.allowConditions = body.allowConditions as boolean;
            try {
                this.setBehavior(behavior);
            } catch (e) {
                throw badRequest((e as Error).message);
            }
            this.send(ctx, 200, JSON.stringify({
                propagationMs: this.propagationMs, missingService: this.missingService, allowConditions: this.allowConditions,
            }));
        } else if ((ctx.path === "/__emulator/principals:delete" || ctx.path === "/__emulator/principals:undelete") && method === "POST") {
            const member = this.json(ctx).member;
            if (typeof member !== "string") throw badRequest("member is required.");
            try {
                if (ctx.path.endsWith(":delete")) {
                    this.send(ctx, 200, JSON.stringify({ deleted: this.deletePrincipal(member) }));
                } else {
                    this.undeletePrincipal(member);
                    this.send(ctx, 200, "{}");
                }
            } catch (e) {
                throw badRequest((e as Error).message);
            }
        } else {
            throw this.notFound(ctx);
        }
    }
}
