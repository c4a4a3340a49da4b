// What users wait for: `pulumi up` and `pulumi destroy` of many ServiceIamMembers on one service, with the real
// Pulumi CLI and YAML host (built by `npm run tools`), the plugin installed from its tarball, and the emulator
// at a fixed API latency; with the API calls each one cost.

import { type Emulator, type EmulatorOptions, type RequestRecord, startEmulator } from "../emulator";
import { compileNodeProgram, inlineStack, PulumiSandbox } from "../tests/e2e/support";

const TOKEN = "ya29.bench-engine-token";
const SERVICE = "engine.endpoints.bench-project.cloud.goog";
const ROLE = "roles/servicemanagement.serviceConsumer";

/** One run's settings: the API latency, and `--parallel` (undefined: the engine's default). */
export interface EngineSetting {
    latencyMs: number;
    parallel?: number;
}

export interface EngineRun extends EngineSetting {
    members: number;
    upMs: number;
    upCalls: number;
    destroyMs: number;
    destroyCalls: number;
    /** 429s the emulator answered for its rate quota (only with `quotaPerMinute`). */
    upRefusals: number;
    destroyRefusals: number;
}

/** What the bench may set on the engine runs' emulators. */
export type EngineEmulator = Pick<EmulatorOptions, "quotaPerMinute">;

function program(name: string, members: number): string {
    const resources = Array.from({ length: members }, (_, i) => [
        `  member${i}:`,
        "    type: cloud:endpoints:ServiceIamMember",
        "    properties:",
        `      serviceName: ${SERVICE}`,
        `      role: ${ROLE}`,
        `      member: user:consumer${i}@example.com`,
    ].join("\n"));
    return [`name: ${name}`, "runtime: yaml", "resources:", ...resources, ""].join("\n");
}

/**
 * `pulumi up` then `pulumi destroy` of `members` Members, once per entry of `schedule`, in that order (so that
 * repetitions can be interleaved): each run on a fresh stack in its own project, against a fresh emulator; one
 * sandbox (the plugin installed once), removed at the end.
 */
export async function engineRuns(members: number, schedule: EngineSetting[], log: (m: string) => void,
    emulator: EngineEmulator = {}): Promise<EngineRun[]> {
    const sb = await PulumiSandbox.create("bench");
    const runs: EngineRun[] = [];
    try {
        for (const [i, { latencyMs, parallel }] of schedule.entries()) {
            const flags = ["--yes", "--skip-preview", ...(parallel === undefined ? [] : ["--parallel", String(parallel)])];
            const emu = await startEmulator({ ...emulator, accessTokens: [TOKEN] });
            try {
                emu.createService(SERVICE, "bench-project");
                const name = `members-${i + 1}-${latencyMs}ms${parallel === undefined ? "" : `-p${parallel}`}`;
                const dir = sb.project(name, { "Pulumi.yaml": program(name, members) });
                await sb.initStack(dir, emu.url, TOKEN);
                emu.setFaults({ latencyMs, minLatencyMs: latencyMs });
                log(`engine: up of ${members} members at ${latencyMs} ms API latency${parallel === undefined ? "" : `, --parallel ${parallel}`} ` +
                    `(run ${i + 1} of ${schedule.length})`);
                emu.resetRequests();
                let started = Date.now();
                await sb.pulumi(["up", ...flags], dir);
                const upMs = Date.now() - started;
                const upCalls = emu.requestCount;
                const upRefusals = emu.quotaRefusals;
                const granted = (emu.getPolicy(`services/${SERVICE}`).bindings ?? []).flatMap((b) => b.members).length;
                if (granted !== members) throw new Error(`up granted ${granted} members, not ${members}`);
                emu.resetRequests();
                started = Date.now();
                await sb.pulumi(["destroy", ...flags], dir);
                const destroyMs = Date.now() - started;
                runs.push({ members, latencyMs, parallel, upMs, upCalls, upRefusals, destroyMs, destroyCalls: emu.requestCount, destroyRefusals: emu.quotaRefusals });
            } finally {
                await emu.close();
            }
        }
    } finally {
        sb.dispose();
    }
    return runs;
}

/** A TypeScript program (against sdk/nodejs) that looks up `count` distinct consumers of one service. */
const LOOKUPS_PROGRAM = `
import * as cloud from "pulumi-cloud-endpoints";

export function program(service: string, count: number): () => Promise<Record<string, unknown>> {
    return async () => {
        const results = await Promise.all(Array.from({ length: count }, (_, i) =>
            cloud.endpoints.getServiceConsumersIamPolicy({ serviceName: service, consumerProject: \`consumer-\${1000 + i}\` })));
        return { looked: results.length };
    };
}
`;

/** `pulumi up` of a TypeScript Automation API program making `count` distinct consumer lookups. */
export async function lookupRun(count: number, log: (m: string) => void): Promise<{ count: number; upMs: number; calls: number }> {
    const entry = await compileNodeProgram("bench-lookups", LOOKUPS_PROGRAM);
    const { program } = require(entry) as { program(service: string, count: number): () => Promise<Record<string, unknown>> };
    const sb = await PulumiSandbox.create("bench-lookups");
    const emu = await startEmulator({ accessTokens: [TOKEN] });
    try {
        emu.createService(SERVICE, "bench-project");
        const stack = await inlineStack(sb, "bench-lookups", program(SERVICE, count), emu.url, TOKEN);
        log(`engine: ${count} consumer lookups from a TypeScript program`);
        emu.resetRequests();
        const started = Date.now();
        const up = await stack.up();
        const upMs = Date.now() - started;
        if (up.outputs.looked?.value !== count) throw new Error(`the program looked up ${JSON.stringify(up.outputs.looked?.value)}, not ${count}`);
        return { count, upMs, calls: emu.requestCount };
    } finally {
        await emu.close();
        sb.dispose();
    }
}

/** A consumer project of the lookups under quota (a valid project ID). */
export const quotaConsumer = (i: number) => `quota-consumer-${String(i).padStart(4, "0")}`;

/** One run of lookups under the quota: what the emulator answered, and which lookups failed. */
export interface QuotaLookups {
    count: number;
    wallMs: number;
    /** Requests the emulator received, quota refusals included. */
    requests: number;
    /** 429s it answered for its rate quota. */
    refusals: number;
    /** Lookups without a 200 answer from the emulator. */
    failures: number;
    /** The first error the run printed, when anything failed. */
    failure?: string;
}

/** Creates `count` consumers of the service, each with a policy, without API calls (the quota is not charged). */
export function seedConsumers(emu: Pick<Emulator, "createService" | "setPolicy">, service: string, count: number): void {
    emu.createService(service, "bench-project");
    for (let i = 0; i < count; i++) {
        emu.setPolicy(`services/${service}/consumers/${quotaConsumer(i)}`, { bindings: [{ role: ROLE, members: [`user:consumer${i}@example.com`] }] });
    }
}

/** Consumers of `service` whose getIamPolicy the emulator answered 200: what counts as a lookup that worked. */
export function consumersAnswered(requests: readonly RequestRecord[], service: string): Set<string> {
    const prefix = `/v1/services/${encodeURIComponent(service)}/consumers/`;
    return new Set(requests.filter((r) => r.status === 200 && r.path.startsWith(prefix) && r.path.endsWith(":getIamPolicy"))
        .map((r) => decodeURIComponent(r.path.slice(prefix.length, -":getIamPolicy".length))));
}

/** A Pulumi YAML program of `count` fn::invoke lookups of distinct consumers. */
function lookupsProgram(name: string, count: number): string {
    const lookups = Array.from({ length: count }, (_, i) => [
        `  lookup${i}:`,
        "    fn::invoke:",
        "      function: cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy",
        "      arguments:",
        `        serviceName: ${SERVICE}`,
        `        consumerProject: ${quotaConsumer(i)}`,
        "      return: etag",
    ].join("\n"));
    return [`name: ${name}`, "runtime: yaml", "variables:", ...lookups, "outputs:", `  last: \${lookup${count - 1}}`, ""].join("\n");
}

/**
 * `pulumi up` of a YAML program making `count` distinct consumer lookups, against an emulator with `emulator`'s
 * settings (its quota). A failed lookup fails the update: the run is timed and reported all the same.
 */
export async function yamlLookupRun(count: number, emulator: EngineEmulator, log: (m: string) => void): Promise<QuotaLookups> {
    const sb = await PulumiSandbox.create("bench-quota");
    const emu = await startEmulator({ ...emulator, accessTokens: [TOKEN] });
    try {
        seedConsumers(emu, SERVICE, count);
        const dir = sb.project("quota-lookups", { "Pulumi.yaml": lookupsProgram("quota-lookups", count) });
        await sb.initStack(dir, emu.url, TOKEN);
        log(`engine: ${count} consumer lookups from a YAML program (fn::invoke), ${emulator.quotaPerMinute ?? "no"} calls per minute quota`);
        emu.resetRequests();
        const started = Date.now();
        const up = await sb.tryPulumi(["up", "--yes", "--skip-preview"], dir);
        const wallMs = Date.now() - started;
        const failures = count - consumersAnswered(emu.requests, SERVICE).size;
        const printed = `${up.stdout}\n${up.stderr}`.split("\n").map((l) => l.trim());
        const failure = up.code === 0 && failures === 0 ? undefined
            : printed.find((l) => /error/i.test(l) && !/^error: update failed$/i.test(l)) ?? `pulumi up exited ${up.code}`;
        return { count, wallMs, requests: emu.requestCount, refusals: emu.quotaRefusals, failures: up.code === 0 ? failures : Math.max(failures, 1), failure };
    } finally {
        await emu.close();
        sb.dispose();
    }
}
