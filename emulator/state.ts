// Everything the emulator remembers, and its optional persistence to one JSON file. Mutations are synchronous
// so a read-check-write (the etag check of setIamPolicy) can never interleave with another request.

import { randomBytes } from "crypto";
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "fs";
import { basename, dirname, join } from "path";
import { EMPTY_ETAG, type StoredPolicy } from "./iam";
import type { ManagedService } from "./types";

/** A public key of a service-account key this emulator minted: what verifies the JWTs signed with it. */
export interface KnownKey {
    keyId: string;
    clientEmail: string;
    publicKeyPem: string;
}

/** An authorized_user grant; the refresh token is kept only as a hash. */
export interface RefreshGrant {
    clientId: string;
    clientSecret: string;
}

/** An access token the emulator issued, keyed by its hash (token values are never stored or logged). */
export interface IssuedToken {
    /** Epoch milliseconds. */
    expiresAt: number;
    denied: boolean;
    /** Scopes the token carries; undefined means unrestricted. */
    scopes?: string[];
}

interface StateFile {
    format: 1;
    etagCounter: number;
    operationCounter: number;
    services: ManagedService[];
    policies: Record<string, StoredPolicy>;
    keys: KnownKey[];
    refreshGrants: Record<string, RefreshGrant>;
    tokens: Record<string, IssuedToken>;
    /** Deleted accounts: member → the unique id in its `deleted:` form. */
    deletedPrincipals?: Record<string, string>;
}

/** Writes a file (mode 0600) through a temp file in the same directory and a rename: no reader sees half. */
export function writeFileAtomic(file: string, contents: string): void {
    const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    try {
        writeFileSync(tmp, contents, { mode: 0o600 });
        renameSync(tmp, file);
    } catch (e) {
        try { unlinkSync(tmp); } catch { /* already gone */ }
        throw e;
    }
}

export class Store {
    readonly services = new Map<string, ManagedService>();
    /** By parent name (`services/S` or `services/S/consumers/P`, unencoded). */
    readonly policies = new Map<string, StoredPolicy>();
    readonly keys = new Map<string, KnownKey>();
    readonly refreshGrants = new Map<string, RefreshGrant>();
    readonly tokens = new Map<string, IssuedToken>();
    /** Deleted accounts: member (as stored) → the unique id of its `deleted:` form. */
    readonly deletedPrincipals = new Map<string, string>();
    /** Policies as they were before a write, served to readers until `until` (epoch ms): propagation delay. */
    readonly stale = new Map<string, { policy: StoredPolicy; until: number }>();
    private etagCounter = 0;
    private operationCounter = 0;

    constructor(private readonly file?: string) {
        if (file && existsSync(file)) this.load(file);
        // Write once at start, so an unwritable location fails the start rather than the first mutation.
        this.save();
    }

    private load(file: string): void {
        let data: StateFile;
        try {
            data = JSON.parse(readFileSync(file, "utf8")) as StateFile;
        } catch (e) {
            throw new Error(`cannot read the emulator state file ${file}: ${(e as Error).message}`);
        }
        if (data.format !== 1) throw new Error(`unknown emulator state format in ${file}`);
        this.etagCounter = data.etagCounter ?? 0;
        this.operationCounter = data.operationCounter ?? 0;
        for (const s of data.services ?? []) this.services.set(s.serviceName, s);
        for (const [k, v] of Object.entries(data.policies ?? {})) this.policies.set(k, v);
        for (const k of data.keys ?? []) this.keys.set(k.keyId, k);
        for (const [k, v] of Object.entries(data.refreshGrants ?? {})) this.refreshGrants.set(k, v);
        for (const [k, v] of Object.entries(data.deletedPrincipals ?? {})) this.deletedPrincipals.set(k, v);
        const now = Date.now();
        for (const [k, v] of Object.entries(data.tokens ?? {})) if (v.expiresAt > now) this.tokens.set(k, v);
    }

    /** Rewrites the state file, if any. */
    save(): void {
        if (!this.file) return;
        const now = Date.now();
        const tokens: Record<string, IssuedToken> = {};
        for (const [k, v] of this.tokens) if (v.expiresAt > now) tokens[k] = v;
        const data: StateFile = {
            format: 1,
            etagCounter: this.etagCounter,
            operationCounter: this.operationCounter,
            services: [...this.services.values()],
            policies: Object.fromEntries(this.policies),
            keys: [...this.keys.values()],
            refreshGrants: Object.fromEntries(this.refreshGrants),
            tokens,
            deletedPrincipals: Object.fromEntries(this.deletedPrincipals),
        };
        writeFileAtomic(this.file, JSON.stringify(data));
    }

    /** A fresh etag: 4 bytes of a persisted counter (never repeats) + 4 random bytes, base64. */
    nextEtag(): string {
        const buf = randomBytes(8);
        this.etagCounter = (this.etagCounter + 1) >>> 0;
        buf.writeUInt32BE(this.etagCounter, 0);
        return buf.toString("base64");
    }

    nextOperation(): number {
        return ++this.operationCounter;
    }

    /** The stored policy of a parent, or the empty one every existing parent starts with. */
    policyOf(parent: string): StoredPolicy {
        return this.policies.get(parent) ?? { bindings: [], auditConfigs: [], etag: EMPTY_ETAG };
    }

    /** The policy a reader sees: the one before the latest write while that write is still propagating. */
    visiblePolicyOf(parent: string, now = Date.now()): StoredPolicy {
        const stale = this.stale.get(parent);
        if (stale && now < stale.until) return stale.policy;
        if (stale) this.stale.delete(parent);
        return this.policyOf(parent);
    }

    /** Told of every policy stored, as it is stored (the server's watchPolicies). */
    readonly watchers = new Set<(parent: string) => void>();

    /**
     * Stores a new policy; with a propagation delay, readers keep seeing the previous one for `propagationMs`.
     * `save`: false where the caller saves once after several writes.
     */
    writePolicy(parent: string, next: StoredPolicy, propagationMs: number, save = true): void {
        if (propagationMs > 0) {
            // Readers see the oldest policy not yet propagated, so a second write inside the window keeps it.
            const previous = this.stale.get(parent);
            const policy = previous && Date.now() < previous.until ? previous.policy : this.policyOf(parent);
            this.stale.set(parent, { policy, until: Date.now() + propagationMs });
        }
        this.policies.set(parent, next);
        for (const w of this.watchers) w(parent);
        if (save) this.save();
    }
}
