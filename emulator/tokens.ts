// Credentials: the access tokens the API accepts, the OAuth2 token endpoint's grants (jwt-bearer for
// service-account keys, refresh_token for authorized_user files) and the keys this emulator mints.

import { createHash, createPublicKey, generateKeyPairSync, randomBytes, randomInt, verify, type KeyObject } from "crypto";
import type { IssuedToken, Store } from "./state";
import type { AuthorizedUserFile, ServiceAccountKey } from "./types";

export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
/** The project of minted keys that name none (nor a client_email of another project). */
export const DEFAULT_PROJECT = "emulator-project";
export const DEFAULT_MINT_EMAIL = `emulator@${DEFAULT_PROJECT}.iam.gserviceaccount.com`;
/** How far in the future a JWT's `iat` may be (clock skew), and the longest assertion Google accepts. */
const MAX_SKEW_S = 300;
const MAX_ASSERTION_S = 3600;

/** The identity behind a bearer token. */
export interface Caller {
    denied: boolean;
    scopes?: string[];
}

export type GrantResult =
    | { ok: true; token: string; expiresIn: number; scope?: string }
    | { ok: false; status: number; error: string; description: string };

type JwtCheck =
    | { ok: true; claims: Record<string, unknown> }
    | { ok: false; error: string; description: string };

const hashToken = (t: string): string => createHash("sha256").update(t).digest("base64url");

function decodeJson(part: string): Record<string, unknown> | undefined {
    try {
        const v: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
        return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
        return undefined;
    }
}

export class TokenAuthority {
    private readonly staticTokens = new Map<string, Caller>();
    /** Parsed public keys by key id: parsing a PEM per verification would dominate the cost. */
    private readonly publicKeys = new Map<string, KeyObject>();
    /** Self-signed JWTs used directly as bearer tokens, once verified (cleared when it grows). */
    private readonly jwtCache = new Map<string, IssuedToken>();

    constructor(
        private readonly store: Store,
        public lifetimeSeconds: number,
        private readonly tokenUrl: string,
        /** Audiences a self-signed JWT may name: the API's (or this emulator's) origin, or a URL under it. */
        private readonly apiOrigins: readonly string[],
    ) {}

    addStatic(token: string, denied: boolean): void {
        this.staticTokens.set(token, { denied });
    }

    /** Issues a random opaque token and remembers only its hash and expiry. */
    issue(opts: { lifetimeSeconds?: number; denied?: boolean; scopes?: string[] } = {}): { token: string; expiresAt: number } {
        const lifetime = opts.lifetimeSeconds ?? this.lifetimeSeconds;
        const token = `ya29.emulator.${randomBytes(32).toString("base64url")}`;
        const entry: IssuedToken = { expiresAt: Date.now() + lifetime * 1000, denied: opts.denied ?? false };
        if (opts.scopes) entry.scopes = opts.scopes;
        this.store.tokens.set(hashToken(token), entry);
        this.store.save();
        return { token, expiresAt: entry.expiresAt };
    }

    /** The caller behind `Authorization: Bearer …`, or undefined when unknown or expired. */
    /** The caller a bearer token stands for; "expired" for a token this emulator issued that has expired. */
    authenticate(token: string): Caller | "expired" | undefined {
        const fixed = this.staticTokens.get(token);
        if (fixed) return fixed;
        const now = Date.now();
        if (token.startsWith("ya29.")) {
            const issued = this.store.tokens.get(hashToken(token));
            if (!issued) return undefined;
            // Kept until the state is next pruned, so a later use is still told "expired", not "unknown".
            return issued.expiresAt <= now ? "expired" : issued;
        }
        return this.selfSignedJwt(token, now);
    }

    /** google-auth-library may skip the token endpoint and send a JWT signed by the key itself as the bearer. */
    private selfSignedJwt(token: string, now: number): Caller | "expired" | undefined {
        const cached = this.jwtCache.get(token);
        if (cached) return cached.expiresAt > now ? cached : "expired";
        if (token.split(".").length !== 3) return undefined;
        const check = this.verifyJwt(token, (aud) =>
            aud === undefined || this.apiOrigins.some((o) => aud === o || aud.startsWith(`${o}/`)));
        if (!check.ok) return undefined;
        const entry: IssuedToken = { expiresAt: Number(check.claims.exp) * 1000, denied: false };
        if (typeof check.claims.scope === "string") entry.scopes = check.claims.scope.split(/\s+/).filter(Boolean);
        if (this.jwtCache.size > 1000) this.jwtCache.clear();
        this.jwtCache.set(token, entry);
        return entry;
    }

    private publicKey(keyId: string): KeyObject | undefined {
        let key = this.publicKeys.get(keyId);
        if (!key) {
            const known = this.store.keys.get(keyId);
            if (!known) return undefined;
            key = createPublicKey(known.publicKeyPem);
            this.publicKeys.set(keyId, key);
        }
        return key;
    }

    /** Verifies an RS256 JWT against the minted keys (by `kid`, else by `iss` = client_email) and its times. */
    verifyJwt(jwt: string, audienceOk: (aud: string | undefined) => boolean): JwtCheck {
        const parts = jwt.split(".");
        const header = parts.length === 3 ? decodeJson(parts[0]) : undefined;
        const claims = parts.length === 3 ? decodeJson(parts[1]) : undefined;
        if (!header || !claims) return { ok: false, error: "invalid_grant", description: "Invalid JWT: malformed assertion." };
        if (header.alg !== "RS256") {
            return { ok: false, error: "invalid_grant", description: "Invalid JWT: the algorithm must be RS256." };
        }
        const candidates = typeof header.kid === "string" && this.store.keys.has(header.kid)
            ? [header.kid]
            : [...this.store.keys.values()].filter((k) => k.clientEmail === claims.iss).map((k) => k.keyId);
        const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
        const signature = Buffer.from(parts[2], "base64url");
        const keyId = candidates.find((id) => verify("RSA-SHA256", signed, this.publicKey(id)!, signature));
        if (!keyId) return { ok: false, error: "invalid_grant", description: "Invalid JWT Signature." };
        if (claims.iss !== this.store.keys.get(keyId)!.clientEmail) {
            return { ok: false, error: "invalid_grant", description: "Invalid grant: account not found" };
        }
        const nowS = Date.now() / 1000;
        const { exp, iat } = claims;
        if (typeof exp !== "number" || typeof iat !== "number" || exp <= nowS || iat > nowS + MAX_SKEW_S ||
            exp - iat > MAX_ASSERTION_S) {
            return {
                ok: false, error: "invalid_grant",
                description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable " +
                    "timeframe. Check your iat and exp values in the JWT claim.",
            };
        }
        const aud = claims.aud;
        if ((aud !== undefined && typeof aud !== "string") || !audienceOk(aud as string | undefined)) {
            return { ok: false, error: "invalid_grant", description: "Invalid JWT: Failed audience check." };
        }
        return { ok: true, claims };
    }

    /** `POST /token`: the grants google-auth-library uses for key files and ADC user files. */
    grant(params: Record<string, string>): GrantResult {
        const grantType = params.grant_type;
        if (grantType === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
            if (!params.assertion) {
                return { ok: false, status: 400, error: "invalid_request", description: "Missing required parameter: assertion" };
            }
            const check = this.verifyJwt(params.assertion, (aud) => aud === GOOGLE_TOKEN_URL || aud === this.tokenUrl);
            if (!check.ok) return { ok: false, status: 400, error: check.error, description: check.description };
            const scope = check.claims.scope;
            if (typeof scope !== "string" || scope.trim() === "") {
                return {
                    ok: false, status: 400, error: "invalid_scope",
                    description: "Invalid OAuth scope or ID token audience provided.",
                };
            }
            const scopes = scope.split(/\s+/).filter(Boolean);
            const { token } = this.issue({ scopes });
            return { ok: true, token, expiresIn: this.lifetimeSeconds, scope: scopes.join(" ") };
        }
        if (grantType === "refresh_token") {
            const grant = params.refresh_token ? this.store.refreshGrants.get(hashToken(params.refresh_token)) : undefined;
            if (!grant) return { ok: false, status: 400, error: "invalid_grant", description: "Bad Request" };
            if (grant.clientId !== params.client_id || grant.clientSecret !== params.client_secret) {
                return { ok: false, status: 401, error: "invalid_client", description: "The OAuth client was not found." };
            }
            const scope = "https://www.googleapis.com/auth/cloud-platform";
            const { token } = this.issue({ scopes: [scope] });
            return { ok: true, token, expiresIn: this.lifetimeSeconds, scope };
        }
        return {
            ok: false, status: 400, error: "unsupported_grant_type",
            description: `Invalid grant_type: ${String(grantType ?? "").slice(0, 100)}`,
        };
    }

    /** A new RSA key whose public half the token endpoint will trust (and the state file keeps). */
    mintServiceAccountKey(opts: { clientEmail?: string; projectId?: string } = {}): ServiceAccountKey {
        const clientEmail = opts.clientEmail ?? DEFAULT_MINT_EMAIL;
        const projectId = opts.projectId ?? /^[^@]+@([^.]+)\.iam\.gserviceaccount\.com$/.exec(clientEmail)?.[1] ?? DEFAULT_PROJECT;
        const { privateKey, publicKey } = generateKeyPairSync("rsa", {
            modulusLength: 2048,
            publicKeyEncoding: { type: "spki", format: "pem" },
            privateKeyEncoding: { type: "pkcs8", format: "pem" },
        });
        const keyId = randomBytes(20).toString("hex");
        this.store.keys.set(keyId, { keyId, clientEmail, publicKeyPem: publicKey });
        this.store.save();
        return {
            type: "service_account",
            project_id: projectId,
            private_key_id: keyId,
            private_key: privateKey,
            client_email: clientEmail,
            client_id: String(randomInt(1e9, 1e10 - 1)) + String(randomInt(1e10, 1e11 - 1)),
            auth_uri: "https://accounts.google.com/o/oauth2/auth",
            token_uri: this.tokenUrl,
            auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
            client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
            universe_domain: "googleapis.com",
        };
    }

    mintAuthorizedUser(): AuthorizedUserFile {
        const clientId = `${randomInt(1e11, 1e12 - 1)}-${randomBytes(16).toString("hex")}.apps.googleusercontent.com`;
        const clientSecret = `GOCSPX-${randomBytes(21).toString("base64url")}`;
        const refreshToken = `1//emulator.${randomBytes(32).toString("base64url")}`;
        this.store.refreshGrants.set(hashToken(refreshToken), { clientId, clientSecret });
        this.store.save();
        return {
            type: "authorized_user",
            client_id: clientId,
            client_secret: clientSecret,
            refresh_token: refreshToken,
            token_uri: this.tokenUrl,
        };
    }
}
