// The main job (`npm start`): start the emulator with sample data, launch the plugin exactly as the engine
// does, configure it through Configure, invoke both lookups and print what they return.
//
//   npm start                                     # embedded emulator, sample data
//   npm start -- --real --service S --consumer P  # a real endpoint with Application Default Credentials

import { ChildProcess } from "child_process";
import * as crypto from "crypto";
import minimist from "minimist";
import { spawnEmulator } from "../emulator";
import { PropertyMap, Value } from "../provider/properties";
import { CONSUMERS_FN, Plugin, SERVICE_FN } from "../tests/support/plugin";


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
    await post(`services/${SAMPLE.service}:setIamPolicy`, { policy: { bindings: [
        { role: "roles/servicemanagement.serviceConsumer", members: ["user:bob@example.com", "group:readers@example.com", "user:alice@example.com"] },
        { role: "roles/servicemanagement.admin", members: ["serviceAccount:deployer@example-project.iam.gserviceaccount.com"] },
    ] } });
    await post(`services/${SAMPLE.service}/consumers/${SAMPLE.consumer}:setIamPolicy`, { policy: { version: 3, bindings: [
        { role: "roles/servicemanagement.serviceController", members: ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"] },
        {
            role: "roles/servicemanagement.serviceConsumer",
            members: ["user:carol@example.com"],
            condition: { title: "until-2030", description: "Expires at the start of 2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" },
        },
    ] } });
}

function table(bindings: Value): string {
    const rows = (Array.isArray(bindings) ? bindings : []) as { role: string; members: string[]; condition?: { title: string } }[];
    if (rows.length === 0) return "  (no bindings)\n";
    const roleWidth = Math.max(4, ...rows.map((b) => b.role.length + (b.condition ? b.condition.title.length + 7 : 0)));
    let out = `  ${"ROLE".padEnd(roleWidth)}  MEMBERS\n`;
    for (const b of rows) {
        const role = b.condition ? `${b.role} [if ${b.condition.title}]` : b.role;
        b.members.forEach((m, i) => (out += `  ${(i === 0 ? role : "").padEnd(roleWidth)}  ${m}\n`));
    }
    return out;
}

async function lookup(plugin: Plugin, title: string, token: string, args: PropertyMap): Promise<boolean> {
    process.stdout.write(`\n== ${title}(${Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ")})\n`);
    try {
        const res = await plugin.invoke(token, args);
        if (res.failures.length) {
            for (const f of res.failures) process.stdout.write(`  failure: ${f.reason}\n`);
            return false;
        }
        const r = res.return!;
        process.stdout.write(table(r.bindings));
        const record: PropertyMap = {};
        for (const k of Object.keys(r).filter((k) => k !== "bindings" && k !== "auditConfigs").sort()) record[k] = r[k];
        process.stdout.write(`\n  record: ${JSON.stringify(record, null, 2).replace(/\n/g, "\n  ")}\n`);
        return true;
    } catch (e) {
        process.stdout.write(`  error: ${(e as { details?: string }).details ?? String(e)}\n`);
        return false;
    }
}

async function main(): Promise<number> {
    const args = minimist(process.argv.slice(2), { boolean: ["real"], string: ["service", "consumer", "endpoint"] });
    let emulator: ChildProcess | undefined;
    const variables: Record<string, string> = {};
    let service = args.service ?? SAMPLE.service;
    let consumer = args.consumer ?? SAMPLE.consumer;
    if (args.real) {
        if (!args.service || !args.consumer) throw new Error("--real needs --service NAME and --consumer PROJECT");
        if (args.endpoint) variables["cloud:config:serviceManagementCustomEndpoint"] = args.endpoint;
        process.stdout.write(`Using ${args.endpoint ?? "the real Service Management API"} with Application Default Credentials.\n`);
    } else {
        const token = `ya29.demo-${crypto.randomBytes(12).toString("hex")}`;
        const started = await spawnEmulator(["--access-token", token], "inherit");
        emulator = started.child;
        await seed(started.url, token);
        process.stdout.write(`Emulator at ${started.url} with sample data (two services, a consumer, a conditional binding).\n`);
        variables["cloud:config:serviceManagementCustomEndpoint"] = started.url;
        variables["cloud:config:accessToken"] = token;
        service = SAMPLE.service;
        consumer = SAMPLE.consumer;
    }
    const plugin = await Plugin.start({ env: process.env });
    process.stdout.write(`Plugin bin/pulumi-resource-cloud listening on 127.0.0.1:${plugin.port}; configured through Configure.\n`);
    try {
        await plugin.configure(undefined, variables);
        const ok = await lookup(plugin, "getServiceIamPolicy", SERVICE_FN, { serviceName: service })
            && await lookup(plugin, "getServiceConsumersIamPolicy", CONSUMERS_FN, { serviceName: service, consumerProject: consumer });
        return ok ? 0 : 1;
    } finally {
        await plugin.stop();
        emulator?.kill("SIGINT");
    }
}

main().then((code) => process.exit(code), (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
});
