// The public shapes of the emulator: its options (the CLI flags, camelCased), the in-process handle, and the
// IAM policy as the API's JSON carries it (discovery document servicemanagement.v1, schemas Policy, Binding,
// Expr, AuditConfig, AuditLogConfig).

export interface Condition {
    expression: string;
    title: string;
    description?: string;
    location?: string;
}

export interface Binding {
    role: string;
    members: string[];
    condition?: Condition;
}

export interface AuditLogConfig {
    logType: string;
    exemptedMembers?: string[];
}

export interface AuditConfig {
    service: string;
    auditLogConfigs: AuditLogConfig[];
}

export interface Policy {
    version?: number;
    etag?: string;
    bindings?: Binding[];
    auditConfigs?: AuditConfig[];
}

/**
 * The defaults of the options that have one: what the server uses when an option is omitted, and what
 * `--help` shows.
 */
export const DEFAULTS = {
    port: 0,
    host: "127.0.0.1",
    /** Seconds. */
    tokenLifetime: 3600,
    missingService: 403,
    propagationMs: 0,
    faultRate: 0,
    latencyMs: 0,
} as const;

/** How the emulator answers where Google's behaviour is a matter of timing or is not documented. */
export interface Behavior {
    /**
     * For this many ms after a write, getIamPolicy keeps answering the policy as it was before it (IAM is
     * eventually consistent; writers confirm by re-reading). setIamPolicy's etag check always sees the newest.
     * Default 0 (`--propagation-ms`).
     */
    propagationMs?: number;
    /**
     * The status of a request on a service that does not exist: 403 (default: Google answers "not found or
     * permission denied", as gcloud shows it) or 404 (`--missing-service 403|404`).
     */
    missingService?: 403 | 404;
    /**
     * Accept setIamPolicy bindings with a `condition`. Default false: Google's list of resource types that
     * accept conditional role bindings does not include Service Management services or consumers
     * (`--allow-conditions`).
     */
    allowConditions?: boolean;
}

/** The emulator's options: the CLI flags, camelCased, and the Behavior they start with. */
export interface EmulatorOptions extends Behavior {
    /** TCP port; 0 (default) picks a free one. */
    port?: number;
    /** Interface to bind; default 127.0.0.1. */
    host?: string;
    /** Static bearer tokens accepted with every permission (`--access-token`). */
    accessTokens?: string[];
    /** Static bearer tokens that authenticate but hold no permission (`--denied-token`). */
    deniedTokens?: string[];
    /** State file: loaded at start if it exists, rewritten atomically after every mutation (`--state`). */
    state?: string;
    /** Fraction (0..1) of `/v1/services…` requests answered with 429, 503 or a connection reset. */
    faultRate?: number;
    /** Each `/v1/services…` request is delayed uniformly 0..latencyMs ms. */
    latencyMs?: number;
    /** Lifetime in seconds of the access tokens this emulator issues; default 3600. */
    tokenLifetime?: number;
    /**
     * Rate quota (`--quota-per-minute N`): at most N Service Management calls per consumer project are
     * answered in any rolling 60-second window; the next is refused with Google's 429 RESOURCE_EXHAUSTED.
     * Google's figure is 120 ("Service Infrastructure quotas"). Default: no quota.
     */
    quotaPerMinute?: number;
    /**
     * For tests only (no CLI flag): the clock the quota window is measured with, in ms (default `Date.now`),
     * so a test can move past the window without waiting a minute.
     */
    quotaClock?: () => number;
    /** Write a service-account key (mode 0600) accepted by the token endpoint to this file (`--mint-key`). */
    mintKey?: string;
    /** client_email of the key written by `mintKey`. */
    mintEmail?: string;
    /**
     * Serve HTTPS, as Google does, with this certificate chain and key (PEM; `--tls-cert`, `--tls-key`): the
     * API, the token endpoint and the admin paths alike. Without it the emulator speaks plain HTTP.
     */
    tls?: { cert: string; key: string };
}

/** One request the emulator received (admin `/__emulator/…` requests are not recorded). */
export interface RequestRecord {
    method: string;
    /** Raw path, still percent-encoded, without the query string. */
    path: string;
    /** HTTP status answered; 0 while pending or when the connection was reset on purpose. */
    status: number;
    /** The User-Agent header. */
    userAgent: string;
    /** The X-Goog-User-Project header, when sent (the project billed for quota). */
    userProject?: string;
}

export interface FaultSettings {
    rate?: number;
    /** Upper bound of the random delay added to each API request. */
    latencyMs?: number;
    /** Lower bound of that delay (default 0): equal to latencyMs for a fixed delay, as coalescing tests need. */
    minLatencyMs?: number;
    /** Which faults to inject, chosen at random among them (default: DEFAULT_FAULT_KINDS). */
    kinds?: FaultKind[];
    /**
     * The next `count` answers to `verb` requests (e.g. getIamPolicy) are held `delayMs` after the request was
     * processed: a slow answer still on its way, showing the policy as it was when it was read.
     */
    slowAnswers?: { verb: string; count: number; delayMs: number };
}

/**
 * `reset`: the connection is closed before the request is carried out; `lost`: the request is carried out (a write
 * applied) and its answer never sent, the connection closed instead — as a timeout or a reset after Google acted.
 */
export const FAULT_KINDS = ["429", "503", "reset", "lost"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** The kinds a fault rate draws from unless told: those after which nothing was done. */
export const DEFAULT_FAULT_KINDS: readonly FaultKind[] = ["429", "503", "reset"];

export interface ManagedService {
    serviceName: string;
    producerProjectId: string;
}

/** A service-account key file, as the Cloud console and `gcloud iam service-accounts keys create` write it. */
export interface ServiceAccountKey {
    type: "service_account";
    project_id: string;
    private_key_id: string;
    private_key: string;
    client_email: string;
    client_id: string;
    auth_uri: string;
    token_uri: string;
    auth_provider_x509_cert_url: string;
    client_x509_cert_url: string;
    universe_domain: string;
}

/** An Application Default Credentials user file, as `gcloud auth application-default login` writes it. */
export interface AuthorizedUserFile {
    type: "authorized_user";
    client_id: string;
    client_secret: string;
    refresh_token: string;
    token_uri?: string;
}

export interface IssueTokenOptions {
    /** Default: the emulator's token lifetime. 0 gives a token that is already expired. */
    lifetimeSeconds?: number;
    /** A token that authenticates but holds no permission. */
    denied?: boolean;
    /** OAuth scopes the token carries; omitted means unrestricted. */
    scopes?: string[];
}

export interface Emulator {
    /** Base URL of the API, ending in `/v1/`. */
    readonly url: string;
    /** `http://host:port`. */
    readonly origin: string;
    /** `origin + "/token"`. */
    readonly tokenUrl: string;
    readonly port: number;
    /** Requests received since start or the last reset (at most the most recent 100,000 are kept). */
    readonly requests: RequestRecord[];
    /** Requests received since start or the last reset, including any no longer kept in `requests`. */
    readonly requestCount: number;
    /** Calls refused with 429 for the rate quota (`quotaPerMinute`) since start or the last reset. */
    readonly quotaRefusals: number;
    /** Emails of the service accounts impersonated through `generateAccessToken`, in order. */
    readonly impersonations: string[];
    close(): Promise<void>;
    resetRequests(): void;
    setFaults(faults: FaultSettings): void;
    /**
     * Changes the propagation delay, the missing-service status and whether setIamPolicy accepts conditional
     * bindings (allowConditions); omitted fields keep their value. Throws a RangeError on a value out of range
     * or of the wrong type.
     */
    setBehavior(behavior: Behavior): void;
    /** Sets the rate quota (`quotaPerMinute`) from now on, its window empty; undefined: no quota. */
    setQuota(perMinute: number | undefined): void;
    /**
     * Deletes an account as Google does: every grant and audit exemption of `member` (user:, serviceAccount:,
     * group: or a workforce principal://) becomes its `deleted:…?uid=N` form, and granting it again is refused
     * until it is undeleted. Returns the deleted form.
     */
    deletePrincipal(member: string): string;
    /** Undeletes an account: its `deleted:` grants revert to the plain member. */
    undeletePrincipal(member: string): void;
    mintServiceAccountKey(opts?: { clientEmail?: string; projectId?: string }): ServiceAccountKey;
    mintAuthorizedUser(): AuthorizedUserFile;
    issueToken(opts?: IssueTokenOptions): string;
    addAccessToken(token: string, opts?: { denied?: boolean }): void;
    /** Seeds a service; throws on an invalid name or an existing service. */
    createService(serviceName: string, producerProjectId: string): ManagedService;
    /**
     * Seeds a policy on `services/S` or `services/S/consumers/P` (no etag check); returns it as stored. A seed
     * places a state rather than making a setIamPolicy call: conditional bindings are taken even when
     * `allowConditions` is off, so a test can see how a reader copes with them.
     */
    setPolicy(parentName: string, policy: Policy): Policy;
    /** The stored policy (full, version 3 view) of `services/S` or `services/S/consumers/P`. */
    getPolicy(parentName: string): Policy;
    /**
     * Calls `listener` with the parent's name (`services/S` or `services/S/consumers/P`) as each change of a stored
     * policy is made, before its answer is sent: a test sees every state a policy went through. Returns the unsubscribe.
     */
    watchPolicies(listener: (parentName: string) => void): () => void;
    /**
     * Resolves once every request received so far has been dispatched (applied, refused or faulted) or dropped by
     * its client before its body was whole: none still waits for its latency. A write sent by a process that has
     * since died has then landed or never will, as with Google once the request's deadline has passed.
     */
    quiet(): Promise<void>;
}
