// What users wait for: `pulumi up` and `pulumi destroy` of many ServiceIamMembers on one service, with the real
// Pulumi CLI and YAML host (built by `npm run tools`), the plugin installed from its tarball, and the emulator
// at a fixed API latency; with the API calls each one cost.

import { startEmulator } from "../emulator";
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
}

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
export async function engineRuns(members: number, schedule: EngineSetting[], log: (m: string) => void): Promise<EngineRun[]> {
    const sb = await PulumiSandbox.create("bench");
    const runs: EngineRun[] = [];
    try {
        for (const [i, { latencyMs, parallel }] of schedule.entries()) {
            const flags = ["--yes", "--skip-preview", ...(parallel === undefined ? [] : ["--parallel", String(parallel)])];
            const emu = await startEmulator({ accessTokens: [TOKEN] });
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
                const granted = (emu.getPolicy(`services/${SERVICE}`).bindings ?? []).flatMap((b) => b.members).length;
                if (granted !== members) throw new Error(`up granted ${granted} members, not ${members}`);
                emu.resetRequests();
                started = Date.now();
                await sb.pulumi(["destroy", ...flags], dir);
                runs.push({ members, latencyMs, parallel, upMs, upCalls, destroyMs: Date.now() - started, destroyCalls: emu.requestCount });
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
