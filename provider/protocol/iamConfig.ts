// From the provider's configuration to what iam/ takes: the one place config keys, their sources and the words
// for where a user sets them meet the fetcher and the credentials, so iam/ knows nothing of `cloud:` config.

import { ConfigOrigin, configKeyName, howToSet, parseDuration, ResolvedConfig } from "./config";
import { CredentialSettings, credentialsFor } from "../iam/auth";
import { FetcherOptions } from "../iam/fetcher";

/** The credential settings of a resolved configuration. */
export function credentialSettings(config: ResolvedConfig): CredentialSettings {
    const v = config.values;
    return {
        accessToken: v.accessToken,
        credentials: v.credentials,
        scopes: v.scopes ?? [],
        impersonateServiceAccount: v.impersonateServiceAccount,
        impersonateServiceAccountDelegates: v.impersonateServiceAccountDelegates,
        iamCredentialsCustomEndpoint: v.iamCredentialsCustomEndpoint,
        sources: { accessToken: config.sources.accessToken, credentials: config.sources.credentials },
        noCredentialsHint: noCredentialsHint(config.origin),
    };
}

/** Added to the error when no credentials were configured and none were found on the machine. */
export function noCredentialsHint(origin: ConfigOrigin): string {
    const where = origin.kind === "stack"
        ? `set \`cloud:credentials\` or \`cloud:accessToken\` (${howToSet("accessToken", origin, "TOKEN")})`
        : `set \`credentials\` or \`accessToken\` on the provider resource ${JSON.stringify(origin.name)} (from a secret)`;
    return ". To provide credentials, run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS " +
        `to a key file or GOOGLE_OAUTH_ACCESS_TOKEN to a token, or ${where}`;
}

/**
 * The fetcher's options for a resolved configuration: the one place config keys become fetcher settings.
 * `serviceManagementCustomEndpoint`, `requestTimeout` and `batching`'s properties have defaults and were checked,
 * so a resolved configuration always has them, the durations parseable.
 */
export function fetcherOptions(config: ResolvedConfig, log?: { debug(message: string): void; warn(message: string): void }): FetcherOptions {
    const v = config.values;
    const endpoint = v.serviceManagementCustomEndpoint;
    const requestTimeoutMs = v.requestTimeout === undefined ? undefined : parseDuration(v.requestTimeout);
    const enabled = v.batching?.enableBatching;
    const sendAfterMs = v.batching?.sendAfter === undefined ? undefined : parseDuration(v.batching.sendAfter);
    if (endpoint === undefined || requestTimeoutMs === undefined || enabled === undefined || sendAfterMs === undefined) {
        throw new Error("the resolved configuration lacks serviceManagementCustomEndpoint, a valid requestTimeout or batching " +
            "(enableBatching, a valid sendAfter), which have defaults");
    }
    return {
        endpoint,
        credentials: credentialsFor(credentialSettings(config)),
        requestTimeoutMs,
        batching: { enabled, sendAfterMs },
        settings: {
            endpoint: config.sources.serviceManagementCustomEndpoint ?? `the default endpoint (set ${configKeyName("serviceManagementCustomEndpoint", config.origin)} for another)`,
            requestTimeout: configKeyName("requestTimeout", config.origin),
            billing: `${configKeyName("billingProject", config.origin)} with ${configKeyName("userProjectOverride", config.origin)}`,
        },
        userProject: v.userProjectOverride && v.billingProject ? v.billingProject : undefined,
        log: log && ((m) => log.debug(m)),
        warn: log && ((m) => log.warn(m)),
    };
}


