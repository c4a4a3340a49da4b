// The main job (`npm start`): start the emulator with sample data, launch the plugin exactly as the engine
// does, configure it through Configure, invoke both lookups and print what they return. `--help` for usage.

import { ChildProcess } from "child_process";
import * as crypto from "crypto";
import minimist from "minimist";
import { spawnEmulator } from "../emulator";
import { configFromRequest, configProperties, DEFAULT_ENDPOINT, isConfigKey, resolveConfig } from "../provider/protocol/config";
import { PACKAGE_NAME } from "../provider/package/version";
import { credentialsFor } from "../provider/iam/auth";
import { credentialSettings } from "../provider/protocol/iamConfig";
import { AuditConfig, Binding, parsePolicyData } from "../provider/iam/policy";
import { PropertyMap } from "../provider/declare/properties";
import { CONSUMERS_FN, Plugin, SERVICE_FN } from "../tests/support/plugin";

const USAGE = `usage: npm start [-- [--real --service NAME --consumer PROJECT [--endpoint URL]] [--help]]

  (no flags)           start the emulator (on a free port) with sample data, run the plugin as the engine does,
                       print both lookups
  --real               run the same two lookups against the real Service Management API instead, with the
                       credentials the provider would find: GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_CREDENTIALS, or
                       Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the
                       metadata server). Default: off
  --service NAME       the service to read (required with --real; no default)
  --consumer PROJECT   the consumer project to read (required with --real; no default)
  --endpoint URL       the Service Management API base URL (with --real). Default: ${DEFAULT_ENDPOINT}
  --help               print this text and exit
`;

/**
 * The plugin's messages name settings as a Pulumi user writes them (`cloud:<key>`, `pulumi config set …`); an
 * `npm start` user gives them as flags and environment variables, so messages are shown in those terms:
 * the endpoint is --endpoint, every other key the first environment variable the provider reads it from.
 */
function asTyped(message: string): string {
    const typed = (key: string) => {
        if (key === "serviceManagementCustomEndpoint") return "--endpoint";
        return (isConfigKey(key) ? configProperties[key].env?.[0] : undefined) ?? `${PACKAGE_NAME}:${key}`;
    };
    return message
        .replace(/`pulumi config set (?:--secret )?cloud:(\w+) ([^`]*)`/g, (_m, key: string, value: string) => {
            const t = typed(key);
            return t.startsWith("--") ? `\`npm start -- --real … ${t} ${value}\`` : `\`${t}=${value} npm start -- --real …\``;
        })
        .replace(/`?cloud:(\w+)`?/g, (_m, key: string) => typed(key))
        .replace(/`(\w+)`/g, (m, key: string) => (isConfigKey(key) ? typed(key) : m));
}

class UsageError extends Error {}


const SAMPLE = {
    service: "bookstore.endpoints.example-project.cloud.goog",
    other: "inventory.endpoints.example-project.cloud.goog",
    consumer: "consumer-project-1",
};

/** Seeds through the emulator's own API, as a user of the real service would. */
async function seed(url: string, token: string): Promise<void> {
    const post = async (p: string, body: object) => {
        const res = await fetch(new URL(p, url), {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify(body),
        });
        if (!res.ok) throw new Error(`seeding ${p}: HTTP ${res.status} ${await res.text()}`);
    };
    await post("services", { serviceName: SAMPLE.service, producerProjectId: "example-project" });
    await post("services", { serviceName: SAMPLE.other, producerProjectId: "example-project" });
    await post(`services/${SAMPLE.service}:setIamPolicy`, { updateMask: "bindings,auditConfigs", policy: {
        bindings: [
            { role: "roles/servicemanagement.serviceConsumer", members: ["user:bob@example.com", "group:readers@example.com", "user:alice@example.com"] },
            { role: "roles/servicemanagement.admin", members: ["serviceAccount:deployer@example-project.iam.gserviceaccount.com"] },
        ],
        auditConfigs: [{ service: "allServices", auditLogConfigs: [
            { logType: "DATA_READ", exemptedMembers: ["user:bob@example.com"] },
            { logType: "ADMIN_READ" },
        ] }],
    } });
    // No conditional binding: Service Management is not among the services Google lists as allowing them.
    await post(`services/${SAMPLE.service}/consumers/${SAMPLE.consumer}:setIamPolicy`, { policy: { bindings: [
        { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"] },
        { role: "roles/servicemanagement.serviceConsumer", members: ["user:carol@example.com"] },
    ] } });
}

/** Columns padded to their widest cell (header included), so every row lines up. */
function columns(header: string[], rows: string[][]): string {
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) => `  ${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ")}\n`;
    return line(header) + rows.map(line).join("");
}

/** Role (with its condition's title) → one member a row, the role named on its first row only. */
function bindingsTable(list: Binding[]): string {
    if (list.length === 0) return "  (no bindings)\n";
    return columns(["ROLE", "MEMBERS"], list.flatMap((b) => {
        const role = b.condition ? `${b.role} [if ${b.condition.title}]` : b.role;
        return b.members.map((m, i) => [i === 0 ? role : "", m]);
    }));
}

/** Service → log type → exempted members, each named on its first row only. */
function auditTable(list: AuditConfig[]): string {
    if (list.length === 0) return "  (no audit configs)\n";
    return columns(["AUDITED SERVICE", "LOG TYPE", "EXEMPTED MEMBERS"], list.flatMap((a) => a.auditLogConfigs.flatMap((l, i) => {
        const exempted = l.exemptedMembers?.length ? l.exemptedMembers : ["-"];
        return exempted.map((m, j) => [i === 0 && j === 0 ? a.service : "", j === 0 ? l.logType : "", m]);
    })));
}

async function lookup(plugin: Plugin, title: string, token: string, args: PropertyMap): Promise<boolean> {
    process.stdout.write(`\n== ${title}(${Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ")})\n`);
    try {
        const res = await plugin.invoke(token, args);
        if (res.failures.length) {
            for (const f of res.failures) process.stdout.write(`  failure: ${asTyped(f.reason)}\n`);
            return false;
        }
        const r = res.return!;
        // The tables show policyData (the same canonical data as the bindings and auditConfigs outputs), read
        // with the provider's own policy parser.
        const parsed = parsePolicyData(String(r.policyData));
        if ("problem" in parsed) throw new Error(parsed.problem);
        process.stdout.write(bindingsTable(parsed.policy.bindings ?? []));
        process.stdout.write(`\n${auditTable(parsed.policy.auditConfigs ?? [])}`);
        const record: PropertyMap = {};
        for (const k of Object.keys(r).filter((k) => k !== "bindings" && k !== "auditConfigs").sort()) record[k] = r[k];
        process.stdout.write(`\n  record: ${JSON.stringify(record, null, 2).replace(/\n/g, "\n  ")}\n`);
        return true;
    } catch (e) {
        process.stdout.write(`  error: ${asTyped((e as { details?: string }).details ?? String(e))}\n`);
        return false;
    }
}

/** Where the plugin will get its credentials from, given this configuration and environment: the provider's own answer. */
function credentialSource(variables: Record<string, string>): string {
    const { config, failures } = resolveConfig(configFromRequest(undefined, new Map(Object.entries(variables))), process.env);
    if (!config) throw new UsageError(failures.map((f) => asTyped(f.reason)).join("\n"));
    return credentialsFor(credentialSettings(config)).source;
}

async function main(): Promise<number> {
    const unknown: string[] = [];
    const args = minimist(process.argv.slice(2), {
        boolean: ["real", "help"],
        string: ["service", "consumer", "endpoint"],
        unknown: (arg) => {
            unknown.push(arg);
            return false;
        },
    });
    if (args.help) {
        process.stdout.write(USAGE);
        return 0;
    }
    if (unknown.length) throw new UsageError(`unknown argument ${unknown[0]}`);
    let emulator: ChildProcess | undefined;
    const variables: Record<string, string> = {};
    let service: string;
    let consumer: string;
    if (args.real) {
        if (!args.service || !args.consumer) throw new UsageError("--real needs --service NAME and --consumer PROJECT");
        service = args.service;
        consumer = args.consumer;
        if (args.endpoint) variables["cloud:config:serviceManagementCustomEndpoint"] = args.endpoint;
        process.stdout.write(`Using ${args.endpoint ?? "the real Service Management API"} with ${credentialSource(variables)}.\n`);
    } else {
        if (args.service || args.consumer || args.endpoint) throw new UsageError("--service, --consumer and --endpoint go with --real");
        const token = `ya29.demo-${crypto.randomBytes(12).toString("hex")}`;
        const started = await spawnEmulator(["--access-token", token], "inherit");
        emulator = started.child;
        await seed(started.url, token);
        variables["cloud:config:serviceManagementCustomEndpoint"] = started.url;
        variables["cloud:config:accessToken"] = token;
        process.stdout.write(`Emulator at ${started.url} with sample data (two services, a consumer, ` +
            `an audit config); the plugin uses ${credentialSource(variables)}.\n`);
        service = SAMPLE.service;
        consumer = SAMPLE.consumer;
    }
    const plugin = await Plugin.start({ env: process.env });
    process.stdout.write(`Plugin bin/pulumi-resource-cloud listening on 127.0.0.1:${plugin.port}; configured through Configure.\n`);
    try {
        await plugin.configure(undefined, variables);
        // Both lookups run and report, whatever the first one's outcome.
        const results = [
            await lookup(plugin, "getServiceIamPolicy", SERVICE_FN, { serviceName: service }),
            await lookup(plugin, "getServiceConsumersIamPolicy", CONSUMERS_FN, { serviceName: service, consumerProject: consumer }),
        ];
        return results.every(Boolean) ? 0 : 1;
    } finally {
        await plugin.stop();
        emulator?.kill("SIGINT");
    }
}

main().then((code) => process.exit(code), (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    if (e instanceof UsageError) process.stderr.write(`\n${USAGE}`);
    process.exit(e instanceof UsageError ? 2 : 1);
});
