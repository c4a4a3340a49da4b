// `npm run campaign -- [--seed S] [--trials N] [--seeds K] [--trial T] [--fault F] [--traces DIR] [--keep]`: the randomized fault campaign (tests/e2e/campaign.ts)
// at length, through the real CLI with the tools built (`npm run tools`). Prints each trial and the totals; the
// seeds it prints replay it. Exits 1 when any trial broke an invariant. Every trial's engine RPCs are recorded and held
// to the simulator's engine model; `--traces DIR` keeps each trial's trace there (`npm run sim -- --conform DIR`).

import minimist from "minimist";
import * as crypto from "crypto";
import { startEmulator } from "../emulator";
import { isFault, trial, TrialResult } from "../tests/e2e/campaign";
import { PulumiSandbox, toolsMissing } from "../tests/e2e/support";

async function main(): Promise<number> {
    const args = minimist(process.argv.slice(2), { string: ["seed", "trials", "seeds", "trial", "fault", "traces"], boolean: ["keep"] });
    // --fault "kill -9 of the CLI": every trial's fault (the others still drawn from the seed).
    const fault = args.fault;
    if (fault !== undefined && !isFault(fault)) {
        process.stderr.write(`campaign: --fault takes one of: kill -9 of a plugin, kill -9 of the CLI, Ctrl-C once, Ctrl-C twice\n`);
        return 2;
    }
    // --trial T: that trial of the seed alone (each trial is its own project, so it replays on its own).
    const only = args.trial === undefined ? undefined : Number(args.trial);
    const first = Number(args.seed ?? crypto.randomInt(1, 1_000_000));
    const trials = Number(args.trials ?? 25);
    const seeds = Number(args.seeds ?? 1);
    const missing = toolsMissing(["pulumi", "pulumi-language-yaml"]);
    if (missing) {
        process.stderr.write(`campaign: ${missing}; run \`npm run tools\` first\n`);
        return 2;
    }
    const token = `campaign-${crypto.randomBytes(12).toString("hex")}`;
    const emu = await startEmulator({ accessTokens: [token] });
    const sb = await PulumiSandbox.create("campaign");
    const results: TrialResult[] = [];
    try {
        for (let s = 0; s < seeds; s++) {
            const seed = first + s;
            process.stdout.write(`seed ${seed}: ${trials} trials (replay: npm run campaign -- --seed ${seed} --trials ${trials})\n`);
            for (let i = only ?? 0; i < (only === undefined ? trials : only + 1); i++) results.push(await trial({ sb, emu, token, fault, ...(args.traces ? { traces: String(args.traces) } : {}), say: (l) => process.stdout.write(`  ${l}\n`) }, seed, i));
        }
    } finally {
        await emu.close();
        // --keep: the sandbox (projects, state, PULUMI_HOME and the journal, transcripts) stays for a person to read.
        if (args.keep) process.stdout.write(`sandbox kept: ${sb.dir}\n`);
        else sb.dispose();
    }
    const bad = results.filter((r) => r.problems.length > 0);
    const count = (what: string) => results.reduce((n, r) => n + r.problems.filter((p) => p.startsWith(what)).length, 0);
    const byFault = [...new Set(results.map((r) => r.fault))].map((f) => `${f}: ${results.filter((r) => r.fault === f).length}`).join(", ");
    const byOperation = [...new Set(results.flatMap((r) => r.operations))].sort()
        .map((o) => `${o}: ${results.filter((r) => r.operations.includes(o)).length}`).join(", ");
    process.stdout.write(`\n${results.length} trials over ${seeds} seed(s) from ${first} (${byFault}; ${results.filter((r) => r.reverted).length} reverted; ${byOperation}): ` +
        `${count("lost")} lost, ${count("foreign removed")} foreign removed, ${count("unnamed")} unnamed, ` +
        `${count("not converged")} not converged, ${count("the last")} failed recoveries, ${count("false alarm")} false alarms, ` +
        `${count("a warning survived")} warnings surviving their command, ${count("the engine model diverges")} traces the engine model diverges from, ${count("says otherwise than the plugin")} whose notes the journal's core says otherwise, ${count("left after")} left after the notes' commands, ` +
        `${count("the command a note gives failed")} failed note commands, ${count("a preview failed")} failed previews; ` +
        `${results.reduce((n, r) => n + r.leftovers, 0)} grants left and named; ${results.reduce((n, r) => n + r.repairs, 0)} Pulumi snapshot integrity errors repaired; ` +
        `${results.reduce((n, r) => n + r.restores, 0)} checkpoints restored from their .bak; ` +
        `Google's answers during the struck commands: ${answered(results)}; ` +
        `${bad.length} trials with a problem\n`);
    return bad.length ? 1 : 0;
}

/** Google's answers other than 200 over every trial, by status ("0" a reset or a lost answer). */
function answered(results: TrialResult[]): string {
    const total: Record<string, number> = {};
    for (const r of results) for (const [status, n] of Object.entries(r.answers)) total[status] = (total[status] ?? 0) + n;
    const text = Object.entries(total).map(([status, n]) => `${status === "0" ? "reset or lost" : status} ×${n}`).join(", ");
    return text || "none";
}

main().then((code) => (process.exitCode = code), (e: unknown) => {
    process.stderr.write(`campaign: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
});
