// The simulator's engine model held to the real engine: the traces in traces/ were recorded by the real-CLI campaign
// (`npm run campaign -- --traces traces`), each a trial's commands with every call the engine sent the plugin. Each
// must conform (sim/conform.ts); and a trace changed as a wrong model would have it must not.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { commandOf, conform, runsOf } from "../../sim/conform";
import { TRANSITIONS } from "../../sim/model";
import { conformAll } from "../../sim/sim";
import type { Trace, TraceCall } from "../../sim/trace";

const DIR = path.resolve(__dirname, "..", "..", "..", "traces");
const traces = (): Trace[] => fs.readdirSync(DIR).filter((f) => f.endsWith(".json")).sort().map((f) => JSON.parse(fs.readFileSync(path.join(DIR, f), "utf8")) as Trace);

/** A copy of `t` with one command's calls changed by `f`. */
function changed(t: Trace, command: number, f: (calls: TraceCall[]) => TraceCall[]): Trace {
    const copy = JSON.parse(JSON.stringify(t)) as Trace;
    copy.commands[command].calls = f(copy.commands[command].calls);
    return copy;
}

/** The first trace and command in which `pick` finds something to change. */
function find(pick: (calls: TraceCall[], args: string[]) => boolean): { t: Trace; k: number } {
    for (const t of traces()) for (const [k, c] of t.commands.entries()) if (!c.refused && pick(c.calls, c.args)) return { t, k };
    throw new Error("no committed trace has such a command");
}

/**
 * Commands whose notes the core, fed the trace, says otherwise than the real plugin, and why (docs/design/journal.md,
 * "The engine model, held to the real engine"). s31007t20, command 12, `pulumi import --yes` of an orphan: in the
 * import's preview, the real plugin's report named the orphan before the import's Read answered; the model's Read
 * answered first, and the grant it read is then held by the stack, so the report does not name it. Which comes first
 * is a race of two reads of one policy the trace does not order.
 */
const KNOWN_NOTE_DIFFERENCES = ["s31007t20: command 12"];

describe("the engine model against recorded traces of the real engine", function () {
    this.timeout(120_000);

    it("conforms to every committed trace (at least 20), and says which of its flows none exercised", async () => {
        const lines: string[] = [];
        const results = await conformAll(DIR, (l) => lines.push(l));
        expect(results.length).to.be.at.least(20);
        expect(lines.filter((l) => l.includes("DIVERGES")), lines.join("\n")).to.deep.equal([]);
        expect(lines[lines.length - 1]).to.equal(`${results.length} traces, 0 diverging`);
        expect(lines[lines.length - 3]).to.match(/^model flows no trace exercised: /);
        // Every flow named there is one of the model's.
        const named = lines[lines.length - 3].replace(/^model flows no trace exercised: /, "");
        if (named !== "none") for (const flow of named.split("; ")) expect(TRANSITIONS as readonly string[]).to.include(flow);
        // (b) The core, fed what each command's plugin read (its journal, IAM, the engine's calls), says what it said:
        // in every trace but one, whose difference is a race the trace cannot settle (KNOWN_NOTE_DIFFERENCES).
        expect(results.every((r) => r.notesCompared > 0), "every trace records what its plugins read and said").to.equal(true);
        const differing = results.filter((r) => r.notesDiffer).map((r) => `${r.label}: ${/^command \d+/.exec(r.notesDiffer!)?.[0]}`);
        expect(differing).to.deep.equal(KNOWN_NOTE_DIFFERENCES);
        expect(lines[lines.length - 2]).to.match(new RegExp(`^the core fed ${results.length} traces \\(\\d+ commands\\): ${KNOWN_NOTE_DIFFERENCES.length} say otherwise than the plugin$`));
    });

    it("says otherwise than the plugin where a trace's notes are not what the core says (a note dropped, one added)", async () => {
        const spoken = traces().find((t) => t.commands.some((c) => c.said?.length && !c.fault && !c.calls.some((x) => x.end === undefined)));
        if (!spoken) throw new Error("no committed trace has a command that said a note");
        const k = spoken.commands.findIndex((c) => c.said?.length && !c.fault && !c.calls.some((x) => x.end === undefined));
        const dropped = JSON.parse(JSON.stringify(spoken)) as Trace;
        dropped.commands[k].said = dropped.commands[k].said!.slice(1);
        expect((await conform(dropped)).notesDiffer).to.match(/the real plugin said .*; the core, fed the trace, says/);
        const added = JSON.parse(JSON.stringify(spoken)) as Trace;
        added.commands[k].said = [...added.commands[k].said!, "+ service roles/viewer user:nobody@example.com"].sort();
        expect((await conform(added)).notesDiffer).to.not.equal(undefined);
        expect((await conform(spoken)).notesDiffer).to.equal(undefined);
    });

    it("diverges where the engine sent a call the model does not (a Delete before a program's Check had ended)", async () => {
        // A Delete of a resource the program dropped (no Check of it in its run): one of the deletes at the end.
        const dropped = (run: TraceCall[]) => run.find((c) => c.method === "Delete" && !run.some((x) => x.method === "Check" && x.name === c.name));
        const { t, k } = find((calls, args) => args[0] === "up" && runsOf(calls).some((r) => dropped(r) !== undefined && r.some((c) => c.method === "Check")));
        // That Delete moved to start before the first Check of its run ended: a phase out of order.
        const wrong = changed(t, k, (calls) => {
            const run = runsOf(calls).find((r) => dropped(r) !== undefined && r.some((c) => c.method === "Check"))!;
            const check = run.find((c) => c.method === "Check")!;
            const del = dropped(run)!;
            del.start = check.start + 0.5;
            return [...calls].sort((a, b) => a.start - b.start);
        });
        const r = await conform(wrong);
        expect(r.divergence).to.match(/before Check .* \(register\) had ended/);
    });

    it("diverges where the engine never sent a call the model sends (a resource's Check left out)", async () => {
        const { t, k } = find((calls, args) => args[0] === "up" && calls.some((c) => c.method === "Check"));
        const name = t.commands[k].calls.find((c) => c.method === "Check")!.name;
        const r = await conform(changed(t, k, (calls) => calls.filter((c) => !(c.name === name && c.method === "Check"))));
        expect(r.divergence).to.match(new RegExp(`command ${k + 1} .*${name}`));
    });

    it("diverges where the engine ran its preview and the model would not (a trace's preview run dropped)", async () => {
        const { t, k } = find((calls, args) => args[0] === "up" && !args.includes("--skip-preview") && runsOf(calls).filter((r) => r.some((c) => c.method === "Check")).length === 2);
        const r = await conform(changed(t, k, (calls) => runsOf(calls).slice(1).flat()));
        expect(r.divergence).to.match(/preview|runs the engine/);
    });

    it("reads a recorded command line as the model's command", () => {
        expect(commandOf(["up", "--yes", "--skip-preview", "--target", "urn:pulumi:dev::p::cloud:endpoints/serviceIamMember:ServiceIamMember::m1"]))
            .to.deep.include({ kind: "up", skipPreview: true, targets: ["urn:pulumi:dev::sim::cloud:endpoints/serviceIamMember:ServiceIamMember::m1"] });
        expect(commandOf(["import", "--yes", "--protect=false", "cloud:endpoints/serviceIamMember:ServiceIamMember", "o1", "services/s/consumers/cons-x roles/viewer user:a@example.com"]))
            .to.deep.include({ kind: "import", importName: "o1", importAt: { parent: 1, grant: { role: "roles/viewer", member: "user:a@example.com" } } });
    });
});
