// What users wait for: `pulumi up` and `pulumi destroy` of many ServiceIamMembers on one service, with the real
// Pulumi CLI and YAML host (built by `npm run tools`), the plugin installed from its tarball, and the emulator
// at a fixed API latency; with the API calls each one cost.

import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { type Emulator, type EmulatorOptions, type RequestRecord, startEmulator } from "../emulator";
import { JOURNAL_URL_ENV } from "../provider/deployment/location";
import { compileNodeProgram, inlineStack, pidsWith, PulumiSandbox, toolsBin, yaml } from "../tests/e2e/support";
import { slowGcs, startFakeGcs } from "../tests/support/gcs";
import { listGrants, ROLE } from "../tests/support/plugin";

const TOKEN = "ya29.bench-engine-token";
const SERVICE = "engine.endpoints.bench-project.cloud.goog";

/** One run's settings: the API latency, and `--parallel` (undefined: the engine's default). */
export interface EngineSetting {
    latencyMs: number;
    parallel?: number;
    /** The crash journal in a `gs://` bucket (a GCS emulator behind a proxy adding this many ms a request), else on local disk. */
    journalBucketMs?: number;
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
    /** The program's grants missing from the policy after `pulumi up`. */
    upFailures: number;
    /** The program's grants still in the policy after `pulumi destroy`. */
    destroyFailures: number;
}

/** What the bench may set on the engine runs' emulators. */
type EngineEmulator = Pick<EmulatorOptions, "quotaPerMinute">;

const memberOf = (i: number) => `user:consumer${i}@example.com`;

/**
 * `pulumi up` then `pulumi destroy` of `members` Members, once per entry of `schedule`, in that order (so that
 * repetitions can be interleaved): each run on a fresh stack in its own project, against a fresh emulator; one
 * sandbox (the plugin installed once), removed at the end. A command that fails throws; the grants each left
 * wrong are counted (EngineRun.upFailures, destroyFailures).
 */
export async function engineRuns(members: number, schedule: EngineSetting[], log: (m: string) => void,
    emulator: EngineEmulator = {}): Promise<EngineRun[]> {
    const sb = await PulumiSandbox.create("bench");
    const runs: EngineRun[] = [];
    const declared = Array.from({ length: members }, (_, i) => `${ROLE} ${memberOf(i)}`);
    try {
        for (const [i, { latencyMs, parallel, journalBucketMs }] of schedule.entries()) {
            const flags = ["--yes", "--skip-preview", ...(parallel === undefined ? [] : ["--parallel", String(parallel)])];
            const emu = await startEmulator({ ...emulator, accessTokens: [TOKEN] });
            const bucket = journalBucketMs === undefined ? undefined : await journalBucket(sb, journalBucketMs);
            try {
                emu.createService(SERVICE, "bench-project");
                const granted = () => new Set(listGrants(emu.getPolicy(`services/${SERVICE}`)));
                const name = `members-${i + 1}-${latencyMs}ms${parallel === undefined ? "" : `-p${parallel}`}`;
                const resources = Array.from({ length: members }, (_, m) => yaml.member(`member${m}`, SERVICE, memberOf(m))).join("");
                const dir = sb.project(name, { "Pulumi.yaml": yaml.program(name, { resources }) });
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
                const afterUp = granted();
                const upFailures = declared.filter((g) => !afterUp.has(g)).length;
                emu.resetRequests();
                started = Date.now();
                await sb.pulumi(["destroy", ...flags], dir);
                const destroyMs = Date.now() - started;
                const afterDestroy = granted();
                runs.push({
                    members, latencyMs, parallel, journalBucketMs, upMs, upCalls, upRefusals, upFailures,
                    destroyMs, destroyCalls: emu.requestCount, destroyRefusals: emu.quotaRefusals,
                    destroyFailures: declared.filter((g) => afterDestroy.has(g)).length,
                });
            } finally {
                await emu.close();
                await bucket?.close();
            }
        }
    } finally {
        sb.dispose();
    }
    return runs;
}

/** Points the sandbox's crash journal at a bucket of a fresh GCS emulator, behind a proxy adding `delayMs` a request. */
async function journalBucket(sb: PulumiSandbox, delayMs: number): Promise<{ close(): Promise<void> }> {
    const gcs = await startFakeGcs(toolsBin());
    await gcs.createBucket("journal");
    const slow = await slowGcs(gcs.host, delayMs);
    const env = { STORAGE_EMULATOR_HOST: slow.host, GOOGLE_OAUTH_ACCESS_TOKEN: "bench", [JOURNAL_URL_ENV]: "gs://journal/bench" };
    Object.assign(sb.env, env);
    return {
        async close() {
            for (const k of Object.keys(env)) delete sb.env[k];
            await slow.close();
            await gcs.close();
        },
    };
}

/** A TypeScript program (against sdk/nodejs) that looks up the given consumers of one service. */
const LOOKUPS_PROGRAM = `
import * as cloud from "pulumi-cloud-endpoints";

export function program(service: string, consumers: string[]): () => Promise<Record<string, unknown>> {
    return async () => {
        const results = await Promise.all(consumers.map((consumerProject) =>
            cloud.endpoints.getServiceConsumersIamPolicy({ serviceName: service, consumerProject })));
        return { looked: results.length };
    };
}
`;

/** A consumer project of the lookups (a valid project ID). */
export const lookupConsumer = (i: number) => `lookup-consumer-${String(i).padStart(4, "0")}`;

/** One run of lookups: what the emulator answered, and which lookups failed. */
export interface Lookups {
    count: number;
    wallMs: number;
    /** Requests the emulator received, quota refusals included. */
    requests: number;
    /** 429s it answered for its rate quota. */
    refusals: number;
    /**
     * Lookups that did not succeed: at least those whose getIamPolicy the emulator did not answer 200
     * (consumersAnswered), and at least 1 when the run itself failed.
     */
    failures: number;
    /** The first error the run printed, when anything failed. */
    failure?: string;
}

/** Creates `count` consumers of the service, each with a policy, without API calls (the quota is not charged). */
export function seedConsumers(emu: Pick<Emulator, "createService" | "setPolicy">, service: string, count: number): void {
    emu.createService(service, "bench-project");
    for (let i = 0; i < count; i++) {
        emu.setPolicy(`services/${service}/consumers/${lookupConsumer(i)}`, { bindings: [{ role: ROLE, members: [memberOf(i)] }] });
    }
}

/** Consumers of `service` whose getIamPolicy the emulator answered 200: what counts as a lookup that worked. */
export function consumersAnswered(requests: readonly RequestRecord[], service: string): Set<string> {
    const prefix = `/v1/services/${encodeURIComponent(service)}/consumers/`;
    return new Set(requests.filter((r) => r.status === 200 && r.path.startsWith(prefix) && r.path.endsWith(":getIamPolicy"))
        .map((r) => decodeURIComponent(r.path.slice(prefix.length, -":getIamPolicy".length))));
}

/** How a lookup run makes its lookups, and the emulator it runs against. */
export interface LookupOptions {
    /** A TypeScript Automation API program (against sdk/nodejs), or a Pulumi YAML program of fn::invoke. */
    program: "typescript" | "yaml";
    /** The emulator's settings (its quota). */
    emulator?: EngineEmulator;
}

/** The first line of an error worth showing: the one that names an error, else the first. */
const firstError = (text: string) => {
    const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
    return lines.find((l) => /error/i.test(l) && !/^error: update failed$/i.test(l)) ?? lines[0];
};

/**
 * `pulumi up` of a program making `count` distinct consumer lookups, against a fresh emulator with `opts.emulator`'s
 * settings whose consumers each have a policy. A failed lookup fails the update: the run is timed and reported
 * all the same.
 */
export async function lookupRun(count: number, opts: LookupOptions, log: (m: string) => void): Promise<Lookups> {
    const consumers = Array.from({ length: count }, (_, i) => lookupConsumer(i));
    const entry = opts.program === "typescript" ? await compileNodeProgram("bench-lookups", LOOKUPS_PROGRAM) : undefined;
    const sb = await PulumiSandbox.create(`bench-lookups-${opts.program}`);
    const emu = await startEmulator({ ...opts.emulator, accessTokens: [TOKEN] });
    try {
        seedConsumers(emu, SERVICE, count);
        let up: () => Promise<string | undefined>;
        if (entry) {
            const { program } = require(entry) as { program(service: string, consumers: string[]): () => Promise<Record<string, unknown>> };
            const stack = await inlineStack(sb, "bench-lookups", program(SERVICE, consumers), emu.url, TOKEN);
            up = async () => {
                const looked = (await stack.up()).outputs.looked?.value;
                return looked === count ? undefined : `the program looked up ${JSON.stringify(looked)}, not ${count}`;
            };
        } else {
            const variables = consumers.map((c, i) => yaml.consumersLookup(`lookup${i}`, SERVICE, c)).join("");
            const dir = sb.project("lookups", { "Pulumi.yaml": yaml.program("lookups", { variables, outputs: `  last: \${lookup${count - 1}}\n` }) });
            await sb.initStack(dir, emu.url, TOKEN);
            up = async () => {
                const r = await sb.tryPulumi(["up", "--yes", "--skip-preview"], dir);
                return r.code === 0 ? undefined : firstError(`${r.stdout}\n${r.stderr}`) ?? `pulumi up exited ${r.code}`;
            };
        }
        log(`engine: ${count} consumer lookups from a ${opts.program === "yaml" ? "YAML program (fn::invoke)" : "TypeScript program (Automation API)"}, ` +
            `${opts.emulator?.quotaPerMinute ?? "no"} calls per minute quota`);
        emu.resetRequests();
        const started = Date.now();
        const failed = await up().catch((e: unknown) => firstError(e instanceof Error ? e.message : String(e)) ?? "pulumi up failed");
        const wallMs = Date.now() - started;
        const unanswered = count - consumersAnswered(emu.requests, SERVICE).size;
        const failures = failed === undefined ? unanswered : Math.max(unanswered, 1);
        const failure = failures === 0 ? undefined : failed ?? `${unanswered} of ${count} lookups were not answered 200`;
        return { count, wallMs, requests: emu.requestCount, refusals: emu.quotaRefusals, failures, failure };
    } finally {
        await emu.close();
        sb.dispose();
    }
}

/** One "engine at scale" run: `members` Members spread round robin over `services` services. */
export interface ScaleSetting {
    members: number;
    services: number;
    latencyMs: number;
    /** The emulator's rate quota (calls per minute per consumer project), as Google's default 120. */
    quotaPerMinute?: number;
    /** PULUMI_SKIP_CHECKPOINTS=true: the engine's own pace, without saving its checkpoint around every step. */
    skipCheckpoints?: boolean;
    /**
     * Also the refreshing commands (REFRESHES) of the stack `up` made, without a quota and then with this one (the
     * emulator's quota set for them alone: its writes are not what they measure).
     */
    refreshQuotaPerMinute?: number;
}

/** The commands that read every resource of the stack (each with no change to find), by the name a report gives them. */
export const REFRESHES = {
    "refresh": ["refresh", "--yes", "--expect-no-changes"],
    "preview --refresh": ["preview", "--refresh", "--expect-no-changes"],
    "up --refresh": ["up", "--refresh", "--yes", "--expect-no-changes"],
} as const;
export type Refresh = keyof typeof REFRESHES;

/** One command of a scale run: its wall time, API calls, and the plugin processes' CPU seconds and peak RSS. */
export interface ScalePhase {
    ms: number;
    calls: number;
    refusals: number;
    cpuS: number;
    peakRssMiB: number;
    /** Grants wrong after it (declared ones missing after up, left after destroy); changes a no-change preview saw. */
    failures: number;
}

export interface ScaleRun extends ScaleSetting {
    up: ScalePhase;
    preview: ScalePhase;
    destroy: ScalePhase;
    /**
     * With `refreshQuotaPerMinute`: each refreshing command, REFRESH_RUNS times with the quota, each between two runs
     * without it: the run of each with the median wall, and each quota run's ratio to the mean of the runs beside it.
     */
    refreshes?: { without: Record<Refresh, ScalePhase>; quota: Record<Refresh, ScalePhase>; ratios?: Record<Refresh, number[]> };
}

/** How many times each refreshing command runs with the quota (and once more than that without it, around them). */
export const REFRESH_RUNS = 3;

/** The run of `runs` with the median wall (the lower middle of an even count). */
function medianRun(runs: ScalePhase[]): ScalePhase {
    return [...runs].sort((x, y) => x.ms - y.ms)[Math.floor((runs.length - 1) / 2)];
}

/** Each run with the quota (`paced[i]`, run between `free[i]` and `free[i + 1]`) over the mean of the two beside it. */
export function quotaRatios(free: number[], paced: number[]): number[] {
    if (free.length !== paced.length + 1) throw new RangeError(`${paced.length} runs with the quota need ${paced.length + 1} around them, not ${free.length}`);
    return paced.map((ms, i) => ms / ((free[i] + free[i + 1]) / 2));
}

/**
 * Each of REFRESHES (`--expect-no-changes` fails a command that finds a change) without the quota and with the emulator's
 * quota set to `perMinute`, in turns that start and end without it: free, quota, free, … free. Each quota run is compared
 * with the mean of the free runs just before and after it, so that a machine getting slower or faster over the minutes
 * (the stack's history growing, a neighbour's load) weighs on both sides of the ratio alike; a quota run always second
 * of a pair made such drift look like the quota's cost.
 */
async function refreshPhases(emu: Emulator, perMinute: number, phase: (args: string[], quota?: number) => Promise<ScalePhase>): Promise<NonNullable<ScaleRun["refreshes"]>> {
    const without: Partial<Record<Refresh, ScalePhase>> = {};
    const quota: Partial<Record<Refresh, ScalePhase>> = {};
    const ratios: Partial<Record<Refresh, number[]>> = {};
    for (const [name, args] of Object.entries(REFRESHES) as [Refresh, readonly string[]][]) {
        const free: ScalePhase[] = [await phase([...args])];
        const paced: ScalePhase[] = [];
        for (let i = 0; i < REFRESH_RUNS; i++) {
            emu.setQuota(perMinute);
            try {
                paced.push(await phase([...args], perMinute));
            } finally {
                emu.setQuota(undefined);
            }
            free.push(await phase([...args]));
        }
        without[name] = medianRun(free);
        quota[name] = medianRun(paced);
        ratios[name] = quotaRatios(free.map((f) => f.ms), paced.map((p) => p.ms));
    }
    return { without: without as Record<Refresh, ScalePhase>, quota: quota as Record<Refresh, ScalePhase>, ratios: ratios as Record<Refresh, number[]> };
}

/** CPU seconds and peak RSS of the processes whose command line contains `text`, polled while `work` runs. */
async function watchProcesses<T>(text: string, work: () => Promise<T>): Promise<{ result: T; cpuS: number; peakRssMiB: number }> {
    const seen = new Map<number, { cpu: number; rss: number }>();
    const tick = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
    const poll = () => {
        for (const pid of pidsWith(text)) {
            try {
                const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
                const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
                const cpu = (Number(f[11]) + Number(f[12])) / tick;
                const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
                const rss = hwm ? Number(hwm[1]) / 1024 : 0;
                const before = seen.get(pid);
                seen.set(pid, { cpu: Math.max(cpu, before?.cpu ?? 0), rss: Math.max(rss, before?.rss ?? 0) });
            } catch {
                // it ended between the listing and the read: its last poll stands
            }
        }
    };
    const timer = setInterval(poll, 100);
    try {
        const result = await work();
        poll();
        const all = [...seen.values()];
        return { result, cpuS: all.reduce((s, p) => s + p.cpu, 0), peakRssMiB: Math.max(0, ...all.map((p) => p.rss)) };
    } finally {
        clearInterval(timer);
    }
}

/**
 * `pulumi up`, a no-change `pulumi preview` and `pulumi destroy` for each setting, each on a fresh stack against a
 * fresh emulator, the plugin installed from its tarball once; on the file backend (the sandbox's).
 */
export async function scaleRuns(settings: ScaleSetting[], log: (m: string) => void): Promise<{ runs: ScaleRun[]; failed: string[] }> {
    const sb = await PulumiSandbox.create("bench-scale");
    const runs: ScaleRun[] = [];
    const failed: string[] = [];
    try {
        for (const [i, s] of settings.entries()) {
            const emu = await startEmulator({ accessTokens: [TOKEN], ...(s.quotaPerMinute ? { quotaPerMinute: s.quotaPerMinute } : {}) });
            try {
                const services = Array.from({ length: s.services }, (_, k) => `scale${k}.endpoints.bench-project.cloud.goog`);
                for (const svc of services) emu.createService(svc, "bench-project");
                const serviceOf = (m: number) => services[m % services.length];
                const declared = Array.from({ length: s.members }, (_, m) => `${serviceOf(m)} ${ROLE} ${memberOf(m)}`);
                const granted = () => new Set(services.flatMap((svc) => listGrants(emu.getPolicy(`services/${svc}`)).map((g) => `${svc} ${g}`)));
                const name = `scale-${i + 1}`;
                const resources = Array.from({ length: s.members }, (_, m) => yaml.member(`member${m}`, serviceOf(m), memberOf(m))).join("");
                const dir = sb.project(name, { "Pulumi.yaml": yaml.program(name, { resources }) });
                await sb.initStack(dir, emu.url, TOKEN);
                emu.setFaults({ latencyMs: s.latencyMs, minLatencyMs: s.latencyMs });
                const env = s.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {};
                const phase = async (args: string[], wrong: (out: string) => number, quota = s.quotaPerMinute): Promise<ScalePhase> => {
                    emu.resetRequests();
                    const started = Date.now();
                    // 2,000 Members take many minutes per command at the file backend's pace: an hour at the most.
                    const { result, cpuS, peakRssMiB } = await watchProcesses(sb.pluginDir,
                        () => sb.exec(path.join(sb.bin, "pulumi"), [...args, "--non-interactive", "--color", "never"], dir, env, 3_600_000));
                    const ms = Date.now() - started;
                    if (result.code !== 0) throw new Error(`pulumi ${args[0]} failed: ${result.stderr || result.stdout}`);
                    const done = { ms, calls: emu.requestCount, refusals: emu.quotaRefusals, cpuS, peakRssMiB, failures: wrong(result.stdout) };
                    // Each command as it ends: a run cut short still tells what it measured.
                    log(`engine at scale:   pulumi ${args.join(" ")}${quota ? ` (quota ${quota}/min)` : ""}: ${(ms / 1000).toFixed(1)} s, ` +
                        `${done.calls} API calls, ${done.refusals} answered 429, plugin ${cpuS.toFixed(1)} CPU s, peak RSS ${peakRssMiB.toFixed(0)} MiB`);
                    return done;
                };
                log(`engine at scale: ${s.members} Members over ${s.services} service(s), ${s.latencyMs} ms latency` +
                    `${s.quotaPerMinute ? `, quota ${s.quotaPerMinute}/min` : ""}${s.skipCheckpoints ? ", PULUMI_SKIP_CHECKPOINTS" : ""} (${i + 1} of ${settings.length})`);
                const up = await phase(["up", "--yes", "--skip-preview"], () => {
                    const now = granted();
                    return declared.filter((g) => !now.has(g)).length;
                });
                const preview = await phase(["preview", "--expect-no-changes"], () => 0);
                const refreshes = s.refreshQuotaPerMinute === undefined ? undefined
                    : await refreshPhases(emu, s.refreshQuotaPerMinute, (args, quota) => phase(args, () => 0, quota));
                const destroy = await phase(["destroy", "--yes", "--skip-preview"], () => {
                    const now = granted();
                    return declared.filter((g) => now.has(g)).length;
                });
                runs.push({ ...s, up, preview, destroy, ...(refreshes ? { refreshes } : {}) });
            } catch (e) {
                // One setting's failure is reported as such; the others still run.
                const first = (e instanceof Error ? e.message : String(e)).split("\n").find((l) => /error/i.test(l)) ?? String(e).split("\n")[0];
                failed.push(`${s.members} Members over ${s.services} service(s)${s.quotaPerMinute ? ", quota" : ""}${s.skipCheckpoints ? ", PULUMI_SKIP_CHECKPOINTS" : ""}: ${first}`);
                log(`engine at scale: failed: ${failed[failed.length - 1]}`);
            } finally {
                await emu.close();
            }
        }
    } finally {
        sb.dispose();
    }
    return { runs, failed };
}
