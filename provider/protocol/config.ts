// Provider configuration (namespace `cloud`): declared once here; schema.json's `config` and `provider`
// sections, CheckConfig's validation and Configure's parsing are derived from these declarations.

import { checkProperties, Failure } from "../declare/check";
import { property, TypeSpec, types, Values } from "../declare/define";
import { projectIdProblem } from "../iam/names";
import { credentialTransportProblem } from "../iam/transport";
import { PropertyMap, unwrap, Value } from "../declare/properties";
import { typeToken } from "../package/tokens";
import { PACKAGE_NAME } from "../package/version";

export const DEFAULT_ENDPOINT = "https://servicemanagement.googleapis.com/v1/";
export const DEFAULT_SCOPES = [
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
];


function checkEndpoint(value: string): string | undefined {
    let url: URL;
    try {
        url = new URL(value);
    } catch {
        return `${JSON.stringify(value)} is not an absolute URL (e.g. https://servicemanagement.googleapis.com/v1/)`;
    }
    return credentialTransportProblem(url);
}

// Go's units, with microseconds in each spelling Go accepts: us, the micro sign and the Greek mu (written as
// escapes: the packaged bundle must stay ASCII, see provider/process/boot.ts).
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "\u00b5s": 1e-3, "\u03bcs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNITS = "ns|us|\u00b5s|\u03bcs|ms|s|m|h";
const DURATION = new RegExp(`^(?:\\d+(?:\\.\\d+)?(?:${UNITS}))+$`);
const PART = new RegExp(`(\\d+(?:\\.\\d+)?)(${UNITS})`, "g");

/** Parses a Go-style duration ("90s", "2m30s", "1500ms"), the format Terraform's request_timeout takes. */
export function parseDuration(value: string): number | undefined {
    if (!DURATION.test(value)) return undefined;
    let ms = 0;
    for (const [, n, unit] of value.matchAll(PART)) ms += Number(n) * UNIT_MS[unit];
    return ms;
}

function checkDuration(value: string): string | undefined {
    const ms = parseDuration(value);
    if (ms === undefined) return `${JSON.stringify(value)} is not a duration such as "60s", "2m" or "1m30s"`;
    if (ms < 1 || ms > 24 * 3_600_000) return `the duration must be between 1ms and 24h, not ${value}`;
    return undefined;
}

/** An access token is opaque, but it travels in a header: RFC 6750's b64token syntax, of sane length. */
function checkAccessToken(token: string): string | undefined {
    if (token.length > 8192) return `the access token is ${token.length} characters long; at most 8192 are accepted`;
    return /^[A-Za-z0-9\-._~+/]+=*$/.test(token)
        ? undefined
        : "the access token has characters an OAuth 2.0 bearer token cannot have (spaces, control or non-ASCII " +
            "characters, or punctuation outside - . _ ~ + /); it is not shown, as it is secret";
}

/** OAuth scopes are https URLs, e.g. https://www.googleapis.com/auth/cloud-platform. */
function checkScope(scope: string): string | undefined {
    return /^https:\/\/[a-z0-9.-]+\/[\x21-\x7e]+$/i.test(scope)
        ? undefined
        : `${JSON.stringify(scope.length > 80 ? `${scope.slice(0, 80)}…` : scope)} is not an OAuth scope URL (e.g. https://www.googleapis.com/auth/cloud-platform)`;
}

const SERVICE_ACCOUNT_EMAIL = /^[^\s@/]+@[a-z0-9.-]+$/;
function checkServiceAccount(value: string): string | undefined {
    return SERVICE_ACCOUNT_EMAIL.test(value)
        ? undefined
        : `${JSON.stringify(value)} is not a service account email (e.g. deployer@my-project.iam.gserviceaccount.com)`;
}

function checkCredentials(value: string): string | undefined {
    if (value.trim() === "") return "the credentials are empty: give the contents of a key JSON file, or its path";
    if (value.trim().startsWith("{")) {
        try {
            const json = JSON.parse(value) as Value;
            if (typeof json !== "object" || json === null || Array.isArray(json) || typeof json.type !== "string") {
                return "the credentials JSON has no `type` field; give a service account key, an authorized_user " +
                    "or an external_account credentials file";
            }
        } catch {
            return "the credentials look like JSON but do not parse (their text is not shown, as it is secret)";
        }
    }
    return undefined;
}

const ENDPOINT_DESCRIPTION = "Must be an absolute https:// URL, or http:// to a loopback host.";

/**
 * `batching`, as Pulumi GCP (and Terraform's `batching` block) spells it. The token gives the provider input the
 * name Pulumi GCP's SDKs give theirs (`ProviderBatching`); stack config gets its own name in schema/schema.ts.
 */
const batching = types.object(typeToken("index", "ProviderBatching"),
    "How changes to one IAM policy that arrive together are combined into one read-modify-write.", {
        enableBatching: property(types.boolean,
            "Whether changes to one policy that arrive together are written in one read-modify-write (one read, " +
            "one write). When false, every change gets a read and a write of its own, one change after another. " +
            "Defaults to true.", {
                default: true,
            }),
        sendAfter: property(types.string,
            "How long a change waits for company before its policy is written (the first change to a policy " +
            "waits at least this long, while the policy is read; the ones that arrive meanwhile join it), as a duration such as \"40ms\" or " +
            "\"1s\". Defaults to \"40ms\", where Terraform's default is 3s: the window can be this short because a " +
            "batch also grows while a write is in flight, and while changes keep arriving at the engine's pace (a " +
            "large stack's engine sends them one by one as it saves its checkpoint): the plugin waits for the next " +
            "as long as twice the typical gap between them, at most 2s. Not used when `enableBatching` is false.", {
                check: checkDuration,
                default: "40ms",
            }),
    });

/** The provider's configuration keys, in the order schema.json lists them. */
export const configProperties = {
    project: property(types.string, "The default project for resources that need one.", {
        check: projectIdProblem,
        env: ["GOOGLE_PROJECT", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"],
    }),
    credentials: property(types.string,
        "Either the path to or the contents of a service account key file (or another credentials file) in " +
        "JSON format. Without it (and without `accessToken`), Application Default Credentials are used.", {
            secret: true,
            check: checkCredentials,
            env: ["GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE_JSON", "GCLOUD_KEYFILE_JSON"],
        }),
    accessToken: property(types.string,
        "A temporary OAuth 2.0 access token obtained from the Google Authorization server. Takes precedence " +
        "over `credentials`.", {
            secret: true,
            check: checkAccessToken,
            env: ["GOOGLE_OAUTH_ACCESS_TOKEN"],
        }),
    impersonateServiceAccount: property(types.string,
        "The service account to impersonate for all API calls, through the IAM Credentials API.", {
            check: checkServiceAccount,
            env: ["GOOGLE_IMPERSONATE_SERVICE_ACCOUNT"],
        }),
    impersonateServiceAccountDelegates: property(types.array(types.string),
        "The delegation chain for impersonating `impersonateServiceAccount`.", {
            check: (v) => v.map(checkServiceAccount).find((p) => p !== undefined),
        }),
    billingProject: property(types.string,
        "The project billed for quota when `userProjectOverride` is true (sent as `X-Goog-User-Project`).", {
            check: projectIdProblem,
            env: ["GOOGLE_BILLING_PROJECT"],
        }),
    userProjectOverride: property(types.boolean,
        "When true, API calls are billed to `billingProject` (the `X-Goog-User-Project` header).", {
            env: ["USER_PROJECT_OVERRIDE"],
            default: false,
        }),
    requestTimeout: property(types.string,
        "How long one API call may take, retries included, as a duration such as \"60s\" or \"2m\". " +
        "Defaults to \"120s\".", {
            check: checkDuration,
            default: "120s",
        }),
    serviceManagementCustomEndpoint: property(types.string,
        `The Service Management API base URL, e.g. the embedded emulator's. ${ENDPOINT_DESCRIPTION}`, {
            check: checkEndpoint,
            env: ["GOOGLE_SERVICE_MANAGEMENT_CUSTOM_ENDPOINT"],
            default: DEFAULT_ENDPOINT,
        }),
    iamCredentialsCustomEndpoint: property(types.string,
        `The IAM Credentials API base URL used for impersonation. ${ENDPOINT_DESCRIPTION}`, {
            check: checkEndpoint,
            env: ["GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT"],
        }),
    scopes: property(types.array(types.string),
        "OAuth 2.0 scopes requested for the access token. Defaults to cloud-platform and userinfo.email.", {
            check: (v) => (v.length === 0 ? "give at least one scope, or leave `scopes` unset" : v.map(checkScope).find((p) => p !== undefined)),
            default: DEFAULT_SCOPES,
        }),
    batching: property(batching,
        "Batching of changes to one IAM policy (Pulumi GCP's `batching`): see `enableBatching` and `sendAfter`.", {
            // The defaults are its properties' own, filled in where unset (resolveConfig).
            default: {},
        }),
} as const;

export type ConfigValues = Values<typeof configProperties>;
export type ConfigKey = keyof typeof configProperties;

export const isConfigKey = (key: string): key is ConfigKey => key in configProperties;

/** Keys the engine itself adds to a provider's inputs; they are not ours to check. */
export const isEngineKey = (key: string): boolean =>
    key === "version" || key === "pluginDownloadURL" || key.startsWith("__");

/** Where each configured value came from, for messages that must name a source but never a value. */
export type ConfigSources = Partial<Record<ConfigKey, string>>;

/**
 * Where the user writes the configuration: stack config (`cloud:<key>`, the default provider) or the
 * properties of an explicit provider resource (`pulumi:providers:cloud`), named.
 */
export type ConfigOrigin = { kind: "stack" } | { kind: "provider"; name: string };

/** The origin of a Configure call: an explicit provider resource unless the engine's default provider. */
export function configOrigin(providerName: string): ConfigOrigin {
    return providerName === "" || providerName === "default" || providerName.startsWith("default_")
        ? { kind: "stack" }
        : { kind: "provider", name: providerName };
}

/** A config key as the user writes it where it comes from. */
export function configKeyName(key: ConfigKey, origin: ConfigOrigin): string {
    return origin.kind === "stack" ? `${PACKAGE_NAME}:${key}` : `\`${key}\` of the provider resource ${JSON.stringify(origin.name)}`;
}

/** How to set a key, in words the user can act on where they configure the provider. */
export function howToSet(key: ConfigKey, origin: ConfigOrigin, example: string): string {
    const secret = configProperties[key].secret === true;
    return origin.kind === "stack"
        ? `\`pulumi config set${secret ? " --secret" : ""} ${configKeyName(key, origin)} ${example}\``
        : `set \`${key}\` on the provider resource ${JSON.stringify(origin.name)}${secret ? " (from a secret)" : ""}`;
}

export interface ResolvedConfig {
    values: ConfigValues;
    sources: ConfigSources;
    origin: ConfigOrigin;
}

/** Turns a string from `variables` or the environment into the declared type (JSON for non-strings). */
function fromString(key: ConfigKey, raw: string): Value {
    const kind = configProperties[key].type.spec.kind;
    if (kind === "string") return raw;
    if (kind === "boolean" && /^(true|false|1|0)$/i.test(raw.trim())) return /^(true|1)$/i.test(raw.trim());
    if (kind === "array" && !raw.trim().startsWith("[")) return raw.split(",").map((s) => s.trim()).filter(Boolean);
    try {
        return JSON.parse(raw) as Value;
    } catch {
        return raw; // left as a string: checking will name the expected type
    }
}

/** Config values as the engine sends them: typed args, or `cloud:config:<key>` strings. */
export function configFromRequest(args: PropertyMap | undefined, variables: ReadonlyMap<string, string>): PropertyMap {
    const out: PropertyMap = {};
    for (const [k, raw] of variables) {
        const key = k.startsWith("cloud:config:") ? k.slice("cloud:config:".length) : k.startsWith("cloud:") ? k.slice(6) : undefined;
        if (key !== undefined) out[key] = isConfigKey(key) ? fromString(key, raw) : raw;
    }
    // Typed args win over the string variables when both carry a key.
    for (const [k, v] of Object.entries(args ?? {})) out[k] = v;
    return out;
}

/** Normalizes config as CheckConfig/Configure receive it: secrets unwrapped, strings parsed per type. */
function normalize(input: PropertyMap): PropertyMap {
    const out: PropertyMap = {};
    for (const [k, v] of Object.entries(input)) {
        const plain = unwrap(v).value;
        out[k] = typeof plain === "string" && isConfigKey(k) && !isEngineKey(k)
            ? fromString(k, plain)
            : plain;
    }
    return out;
}

/**
 * `value` with the defaults its object type's properties declare filled in where it leaves them unset, so a
 * partly set object (`batching` with only `sendAfter`) resolves like the rest of the config: to every default.
 */
function withDefaults(t: TypeSpec, value: Value): Value {
    if (t.kind !== "object" || typeof value !== "object" || value === null || Array.isArray(value)) return value;
    const out: PropertyMap = { ...value };
    for (const [name, p] of Object.entries(t.object.properties)) {
        const v = out[name];
        if (v !== undefined && v !== null) out[name] = withDefaults(p.type.spec, v);
        else if (p.default !== undefined) out[name] = p.default as Value;
    }
    return out;
}

/** Checks config as given (no environment): the failures CheckConfig reports. */
export function checkConfig(input: PropertyMap): { failures: Failure[]; unknowns: string[] } {
    const { failures, unknowns } = checkProperties(configProperties, normalize(input), isEngineKey);
    return { failures, unknowns };
}

/**
 * Resolves the effective configuration: explicit values, then environment fallbacks, then defaults.
 * Values from the environment are checked with the same rules; failures name the variable.
 */
export function resolveConfig(input: PropertyMap, env: NodeJS.ProcessEnv = process.env, origin: ConfigOrigin = { kind: "stack" }):
    { config?: ResolvedConfig; failures: Failure[] } {
    const merged = normalize(input);
    const sources: ConfigSources = {};
    for (const [key, prop] of Object.entries(configProperties) as [ConfigKey, (typeof configProperties)[ConfigKey]][]) {
        const name = prop.env?.find((e) => env[e] !== undefined && env[e] !== "");
        if (merged[key] !== undefined && merged[key] !== null) {
            sources[key] = configKeyName(key, origin);
        } else if (name) {
            merged[key] = fromString(key, env[name]!);
            sources[key] = `environment variable ${name}`;
        } else if (prop.default !== undefined) {
            merged[key] = prop.default as Value;
        }
        const value = merged[key];
        if (value !== undefined && value !== null) merged[key] = withDefaults(prop.type.spec, value);
    }
    const checked = checkProperties(configProperties, merged, isEngineKey);
    const failures = checked.failures.map((f) => {
        const key = f.property.split(/[.[]/)[0] as ConfigKey;
        const source = sources[key];
        return source && source !== configKeyName(key, origin) ? { ...f, reason: `${f.reason} (set by ${source})` } : f;
    });
    if (failures.length) return { failures };
    return { config: { values: checked.values, sources, origin }, failures: [] };
}
