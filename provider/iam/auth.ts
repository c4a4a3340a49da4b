// Credentials for the IAM fetcher: an access token, a credentials file or its contents (service-account key,
// authorized user, external account), Application Default Credentials, and impersonation on top of any of them.
// All but a bare access token go through google-auth-library, loaded on first use only, so starting the plugin
// does not pay for it. A bare access token needs no library at all: it is sent as it is, as the library's
// OAuth2Client would send it (it cannot refresh a token it was only given).

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { AuthClient } from "google-auth-library";
import { redact } from "./errors";
import { deferredCaOptions, untrustedCertificateHint } from "./tls";
import { credentialTransportProblem } from "./transport";

/** The token URL google-auth-library signs JWTs for and posts them to. */
const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

/** Something that can authorize a request, and say (without any secret) where its credentials came from. */
export interface Credentials {
    /** Where the credentials came from, for messages: never contains a secret. */
    readonly source: string;
    /** The Authorization header value ("Bearer …"): at once when it is known without asking anyone. */
    authorization(): string | Promise<string>;
}

type Library = typeof import("google-auth-library");

interface CredentialsJson {
    type?: string;
    client_email?: string;
    private_key?: string;
    private_key_id?: string;
    token_uri?: string;
    client_id?: string;
    client_secret?: string;
    refresh_token?: string;
    [key: string]: unknown;
}

function checkTokenUri(uri: string): void {
    const problem = credentialTransportProblem(new URL(uri));
    if (problem) throw new Error(`the credentials' token_uri is refused: ${problem}`);
}

/** Reads credentials given as JSON contents or as a path to a JSON file. */
function readCredentials(value: string, what: string): CredentialsJson {
    const text = value.trim().startsWith("{") ? value : readFile(value, what);
    try {
        return JSON.parse(text) as CredentialsJson;
    } catch {
        throw new Error(`${what} is not valid JSON (its contents are not shown, as they are secret)`);
    }
}

function readFile(file: string, what: string): string {
    try {
        return fs.readFileSync(file, "utf8");
    } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? "error";
        throw new Error(`${what}: cannot read the credentials file ${JSON.stringify(file)} (${code})`);
    }
}

/** A client for a credentials JSON, honouring its own token_uri (as gcloud and the key file intend). */
async function clientFromJson(lib: Library, json: CredentialsJson, scopes: string[], what: string): Promise<AuthClient> {
    const tokenUri = json.token_uri;
    if (tokenUri) checkTokenUri(tokenUri);
    switch (json.type) {
        case "service_account": {
            if (!json.client_email || !json.private_key) {
                throw new Error(`${what}: the service account key has no client_email or private_key`);
            }
            const jwt = new lib.JWT({ email: json.client_email, key: json.private_key, keyId: json.private_key_id, scopes });
            if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
                // The library signs the JWT and always posts it to Google's token URL; route that one request
                // to the key's own token_uri (e.g. the emulator's), keeping the library's signing and caching.
                jwt.transporter.interceptors.request.add({
                    resolved: async (opts) => {
                        if (String(opts.url) === GOOGLE_TOKEN_URL) opts.url = new URL(tokenUri);
                        return opts;
                    },
                });
            }
            return jwt;
        }
        case "authorized_user":
            return new lib.UserRefreshClient({
                clientId: json.client_id,
                clientSecret: json.client_secret,
                refreshToken: json.refresh_token,
                ...(tokenUri ? { endpoints: { oauth2TokenUrl: tokenUri } } : {}),
            });
        default:
            // External accounts, impersonated_service_account files and future types: the library knows them.
            return new lib.GoogleAuth({ credentials: json as never, scopes }).getClient();
    }
}

/** The well-known ADC file gcloud writes (`gcloud auth application-default login`). */
function gcloudAdcFile(): string {
    const dir = process.env.CLOUDSDK_CONFIG
        ?? (process.platform === "win32" ? path.join(process.env.APPDATA ?? "", "gcloud") : path.join(os.homedir(), ".config", "gcloud"));
    return path.join(dir, "application_default_credentials.json");
}

/** What credentials to use, as the provider's configuration says (provider/protocol/iamConfig.ts makes it). */
export interface CredentialSettings {
    accessToken?: string;
    /** A key file's path or its JSON contents. */
    credentials?: string;
    scopes: readonly string[];
    impersonateServiceAccount?: string;
    impersonateServiceAccountDelegates?: readonly string[];
    iamCredentialsCustomEndpoint?: string;
    /** Where the token and the credentials were set, for messages (never the values). */
    sources: { accessToken?: string; credentials?: string };
    /** Told a user whose credentials could not be found at all: what to set, in the words of where they configure. */
    noCredentialsHint: string;
}

/** Builds the credentials the settings ask for. Nothing is loaded or fetched until the first request. */
export function credentialsFor(v: CredentialSettings): Credentials {
    const s = v.sources;
    const scopes = [...v.scopes];
    let source: string;
    /** What to tell a user whose credentials could not be found at all. */
    let hint = "";
    let base: (lib: Library) => Promise<AuthClient>;
    if (v.accessToken) {
        source = `the access token from ${s.accessToken}`;
        if (!v.impersonateServiceAccount) {
            const header = `Bearer ${v.accessToken}`;
            return { source, authorization: () => header };
        }
        base = async (lib) => {
            const client = new lib.OAuth2Client();
            client.setCredentials({ access_token: v.accessToken });
            return client;
        };
    } else if (v.credentials) {
        const what = `the credentials from ${s.credentials}`;
        source = what;
        base = async (lib) => clientFromJson(lib, readCredentials(v.credentials!, what), scopes, what);
    } else {
        const envFile = process.env.GOOGLE_APPLICATION_CREDENTIALS;
        const file = envFile || (fs.existsSync(gcloudAdcFile()) ? gcloudAdcFile() : undefined);
        source = envFile
            ? `Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS (${envFile})`
            : file ? `Application Default Credentials from ${file}` : "Application Default Credentials (metadata server)";
        if (!file) hint = v.noCredentialsHint;
        base = async (lib) => file
            ? clientFromJson(lib, readCredentials(file, source), scopes, source)
            : new lib.GoogleAuth({ scopes }).getClient();
    }
    let make = base;
    if (v.impersonateServiceAccount) {
        source += `, impersonating ${v.impersonateServiceAccount}`;
        const endpoint = v.iamCredentialsCustomEndpoint?.replace(/\/+$/, "").replace(/\/v1$/, "");
        make = async (lib) => new lib.Impersonated({
            sourceClient: await base(lib),
            targetPrincipal: v.impersonateServiceAccount,
            delegates: [...(v.impersonateServiceAccountDelegates ?? [])],
            targetScopes: scopes,
            lifetime: 3600,
            ...(endpoint ? { endpoint } : {}),
        });
    }
    let client: Promise<AuthClient> | undefined;
    return {
        source,
        async authorization() {
            if (!client) {
                deferredCaOptions(); // the library's token requests go through Node's default agent
                client = import("google-auth-library").then(make);
                client.catch(() => (client = undefined)); // a failed setup is tried again on the next call
            }
            try {
                const headers = await (await client).getRequestHeaders();
                const value = headers.get("authorization");
                if (!value) throw new Error("no Authorization header was produced");
                return value;
            } catch (e) {
                // The hint starts a sentence of its own: the library's message may already end with a period.
                const reason = hint ? describeAuthError(e).replace(/\.+$/, "") : describeAuthError(e);
                throw new CredentialsError(`could not obtain an access token using ${source}: ${reason}${hint}`);
            }
        },
    };
}

export class CredentialsError extends Error {}

/** An auth failure in words, from the token endpoint's own error fields when it gave them; never a secret. */
function describeAuthError(e: unknown): string {
    const data = (e as { response?: { data?: unknown } }).response?.data;
    if (data && typeof data === "object") {
        const { error, error_description: description } = data as { error?: unknown; error_description?: unknown };
        if (typeof error === "string") return redact(description ? `${error}: ${String(description)}` : error);
        const nested = (error as { message?: unknown } | undefined)?.message;
        if (typeof nested === "string") return redact(nested);
    }
    return redact(e instanceof Error ? e.message : String(e)) + untrustedCertificateHint(e);
}
