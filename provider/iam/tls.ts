// Extra CA certificates, loaded when the plugin first needs TLS rather than when Node starts.
//
// Node reads NODE_EXTRA_CA_CERTS, and builds its whole certificate store with it, before any of the plugin
// runs: 30–35 ms of every start on a machine that sets it, for a plugin that may open no TLS connection at all
// (a preview that calls no API, the emulator over plain HTTP). So the packaged plugin's launcher hands the
// variable over under DEFERRED_CA_ENV, and the plugin adds those certificates to Node's own roots itself, the
// way Node would have: for its API calls and for google-auth-library's token requests (Node's default agent).

import * as fs from "fs";
import * as https from "https";
import * as tls from "tls";

/** Set by the folder packaging's launcher (scripts/dist.ts) to the file NODE_EXTRA_CA_CERTS named. */
export const DEFERRED_CA_ENV = "PULUMI_CLOUD_EXTRA_CA_CERTS";

/** undefined: not looked at yet; null: nothing was deferred (or the file could not be read). */
let deferred: tls.SecureContext | null | undefined;

/**
 * TLS options that trust Node's roots plus the deferred extra certificates: `{}` when nothing was deferred.
 * The first call reads the file, builds one context for every connection, and gives Node's default agent the
 * same trust.
 */
export function deferredCaOptions(): { secureContext?: tls.SecureContext } {
    if (deferred === undefined) deferred = load();
    return deferred ? { secureContext: deferred } : {};
}

function load(): tls.SecureContext | null {
    const file = process.env[DEFERRED_CA_ENV];
    if (!file) return null;
    let pem: string;
    try {
        pem = fs.readFileSync(file, "utf8");
    } catch (e) {
        // Node's own words and behaviour for an unreadable NODE_EXTRA_CA_CERTS: warn and go on without it.
        process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
        return null;
    }
    const context = tls.createSecureContext({ ca: [...tls.rootCertificates, pem] });
    https.globalAgent.options.secureContext = context;
    return context;
}

/** OpenSSL's verdicts on a certificate chain nothing trusted (as Node reports them in `code`). */
const UNTRUSTED = new Set([
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT", "CERT_UNTRUSTED",
]);

/** What to do about an error that is a certificate nothing trusts (added to its message); "" otherwise. */
export function untrustedCertificateHint(e: unknown): string {
    const code = (e as { code?: unknown } | undefined)?.code;
    if (typeof code !== "string" || !UNTRUSTED.has(code)) return "";
    return ". The server's certificate is not signed by a CA this machine trusts: if your network's own CA signs it " +
        "(a company CA, a TLS-inspecting proxy), set NODE_EXTRA_CA_CERTS to that CA's PEM file";
}
