// The journal's deterministic simulator (sim/): the real journal, in-process, against a model of the engine, of
// Google's IAM and of the storage. These hold the simulator to its word (one seed, one output) and hold the flows
// where the plugin cannot read the CLI's command line (Windows, PULUMI_DEBUG_PROVIDERS) to the invariants.

import { expect } from "chai";
import { RuleName, Rules } from "../../provider/journal/rules";
import { Case, drawCase, knownIssue, runCase } from "../../sim/case";
import { World } from "../../sim/machine";
import { BINDING_ROLE, Command, POLICY_PARENT, Draws, GoogleFault, Member, providerUrn, Stack, Strike, urnOf } from "../../sim/model";
import { caseSeed, simulate } from "../../sim/sim";

const grant = { parent: 0, grant: { role: "roles/viewer", member: "user:ann@example.com" } };
const twins: Member[] = [{ name: "a", at: grant, provider: "default" }, { name: "b", at: grant, provider: "default" }];
const base = (over: Partial<Case>): Case => ({ seed: 1, commandKnown: false, foreign: [], initial: twins, steps: [], storage: {}, upgrade: false, ...over });

/** A stack on a fresh world, its program `program` and the setup `pulumi up` run (unless `setup` is false). */
async function stackOf(program: Member[], off: RuleName[] = [], setup = true): Promise<{ stack: Stack; world: World }> {
    const world = new World();
    const stack = new Stack(new Rules(new Set(off)), new Draws(1), world);
    stack.program = program;
    if (setup) await stack.command({ kind: "up", skipPreview: true });
    return { stack, world };
}

/** The violations of case `k` of `seed` as drawn before the later draws (see drawCase), with `off` switched off. */
async function replayed(seed: number, k: number, off: RuleName[] = []): Promise<string[]> {
    return (await runCase(drawCase(caseSeed(seed, k), false), new Rules(new Set(off)))).violations;
}

/** Runs a case under several seeds (the engine's order of steps, parallel deletes), each judged; `off`: rules switched off. */
async function violationsOf(c: Case, off: RuleName[] = []): Promise<string[]> {
    const out: string[] = [];
    for (let seed = 0; seed < 16; seed++) out.push(...(await runCase({ ...c, seed }, new Rules(new Set(off)))).violations);
    return out;
}

describe("the journal's simulator", function () {
    this.timeout(120_000);

    // The simulator's main run: a fixed seed, and one drawn per run (printed, so a failure replays).
    for (const seed of [1, Math.floor(Math.random() * 1_000_000)]) {
        it(`10,000 cases from seed ${seed}: no violation outside the named known issues`, async function () {
            this.timeout(600_000);
            const lines: string[] = [];
            const r = await simulate(seed, 10_000, new Set(), (l) => lines.push(l));
            expect(r.cases).to.equal(10_000);
            expect(lines.join("\n"), `npm run sim -- --seed ${seed} --cases 10000`).to.equal("");
            expect(r.violations).to.equal(0);
        });
    }

    it("draws Policies in some cases, from a stream of their own (the same for the same seed; none as drawn before the later draws)", async () => {
        const policies = (k: number, later: boolean) => drawCase(caseSeed(1, k), later).initial.filter((m) => m.owns !== undefined);
        const ks = Array.from({ length: 50 }, (_, k) => k);
        expect(ks.some((k) => policies(k, true).length > 0)).to.equal(true);
        expect(ks.every((k) => policies(k, false).length === 0)).to.equal(true);
        expect(ks.map((k) => JSON.stringify(policies(k, true)))).to.deep.equal(ks.map((k) => JSON.stringify(policies(k, true))));
    });

    it("prints the same report for the same seed", async () => {
        const a = await simulate(7, 300);
        const b = await simulate(7, 300);
        expect(a.lines).to.deep.equal(b.lines);
        expect([...a.reached]).to.deep.equal([...b.reached]);
        expect(a.cases).to.equal(300);
    });

    // The model once let a killed plugin's journal object, still running in-process, append lines, send a Delete
    // under way beside the struck one and answer it; dropping only the lines then made the journal say that a grant
    // whose Delete the engine had recorded was still held (seed 3, case 69).
    it("a plugin killed mid-destroy: its other Delete under way writes nothing, sends nothing and answers nothing", async () => {
        const m1: Member = { name: "m1", at: { parent: 1, grant: { role: "roles/viewer", member: "user:bob@example.com" } }, provider: "default", deleteBeforeReplace: true };
        const program = [{ name: "m0", at: grant, provider: "default" } as Member, m1];
        const c = base({ initial: program, steps: [{ program, command: { kind: "destroy", skipPreview: true }, strike: { kind: "kill-plugin", at: 1 }, then: [], revert: false }] });
        const transcripts: string[] = [];
        const out: string[] = [];
        for (let seed = 0; seed < 16; seed++) {
            const v = await runCase({ ...c, seed }, new Rules());
            out.push(...v.violations);
            transcripts.push(v.transcript.join("\n"));
        }
        expect(out).to.deep.equal([]);
        // In some seed the Deletes ran in parallel and the one beside the struck write died with its plugin.
        expect(transcripts.some((t) => /^ {2}delete m0 .*: failed \(the plugin died\)$/m.test(t) && /^ {2}! kill-plugin after delete of m1/m.test(t))).to.equal(true);
    });

    // Google's faults on a write (sim/model.ts, GoogleFault): where the write lands, the command is clean and its
    // Create recorded; where it fails, the grant is in IAM exactly where Google applied it, and named exactly then.
    const member: Member = { name: "m0", at: grant, provider: "default" };
    const faults: { fault: GoogleFault; inIam: boolean; clean: boolean; named: boolean; waitedMs: number }[] = [
        { fault: { kind: "conflict", at: 1, lands: true }, inIam: true, clean: true, named: false, waitedMs: 1000 },
        { fault: { kind: "conflict", at: 1, lands: false }, inIam: false, clean: false, named: false, waitedMs: 30_000 },
        { fault: { kind: "quota", at: 1, lands: true, waitMs: 5000 }, inIam: true, clean: true, named: false, waitedMs: 5000 },
        { fault: { kind: "quota", at: 1, lands: false }, inIam: false, clean: false, named: false, waitedMs: 30_000 },
        { fault: { kind: "reset", at: 1, lands: true, applied: true }, inIam: true, clean: true, named: false, waitedMs: 0 },
        { fault: { kind: "reset", at: 1, lands: true, applied: false }, inIam: true, clean: true, named: false, waitedMs: 0 },
        { fault: { kind: "reset", at: 1, lands: false, applied: true }, inIam: true, clean: false, named: true, waitedMs: 0 },
        { fault: { kind: "reset", at: 1, lands: false, applied: false }, inIam: false, clean: false, named: false, waitedMs: 0 },
    ];
    for (const { fault, inIam, clean, named, waitedMs } of faults) {
        const what = `${fault.kind}${fault.applied !== undefined ? (fault.applied ? ", applied" : ", not applied") : ""}, ${fault.lands ? "landing" : "failing"}`;
        it(`Google's ${what} on a Member's Create: in IAM ${inIam}, recorded ${clean}, named ${named}; then converged`, async () => {
            const { stack, world } = await stackOf([member], [], false);
            const before = world.now;
            const out = await stack.command({ kind: "up", skipPreview: true }, undefined, fault);
            expect(stack.iam.has(member.at)).to.equal(inIam);
            expect(out.clean).to.equal(clean);
            expect(stack.checkpoint.resources.has(urnOf("m0"))).to.equal(clean);
            expect(out.said.some((s) => s.note.kind === "unrecorded" && !s.untrue)).to.equal(named);
            expect(world.now - before).to.be.within(waitedMs, waitedMs + 100);
            const c = base({ commandKnown: true, initial: [], steps: [{ program: [member], command: { kind: "up", skipPreview: true }, google: fault, then: [], revert: false }] });
            expect(await violationsOf(c)).to.deep.equal([]);
        });
    }

    // The second Ctrl-C may come after the first one's answer reached the engine: it closes its plugins before it saves
    // that answer (Strike.again), so the Create stays pending, its grant in IAM.
    it("a Ctrl-C, the struck Create answered, a second Ctrl-C: the engine keeps the Create pending, and the journal's next run names the grant", async () => {
        const { stack } = await stackOf([member], [], false);
        const out = await stack.command({ kind: "up", skipPreview: true }, { kind: "ctrl-c", at: 1, again: true });
        expect(stack.iam.has(member.at)).to.equal(true);
        expect(stack.checkpoint.resources.has(urnOf("m0"))).to.equal(false);
        expect(stack.checkpoint.pendingCreates.has(urnOf("m0"))).to.equal(true);
        expect(out.clean).to.equal(false);
        // The README's recovery: the pending create cleared, then `pulumi up` (of another Member: an empty stack starts no plugin).
        await stack.command({ kind: "refresh", skipPreview: true, clearPendingCreates: true });
        stack.program = [{ name: "m1", at: { parent: 1, grant: grant.grant }, provider: "default" }];
        const next = await stack.command({ kind: "up", skipPreview: true });
        expect(next.said.some((s) => s.note.kind === "unrecorded" && s.note.at !== undefined && !s.untrue)).to.equal(true);
    });

    // The known issue of a save lost to Ctrl-C twice takes in only what it leaves (a grant in IAM that no state holds):
    // counted so, every violation of such a case once was, and `ctrl-c-twice` switched off went uncaught. Seed 1, case
    // 2104: Ctrl-C twice in a `pulumi destroy`, the save of an answered Delete lost; with the rule off the journal took
    // the Delete for recorded, and the next `pulumi up` did not put the grant back.
    it("the lost-save known issue takes in only orphans: with ctrl-c-twice off, seed 1 case 2104 is a violation", async () => {
        const on = await simulate(1, 1, new Set(), () => undefined, { only: 2104 });
        expect(on.violations).to.equal(0);
        const off = await simulate(1, 1, new Set(["ctrl-c-twice"]), () => undefined, { only: 2104 });
        expect(off.violations).to.equal(1);
        expect(off.lines.join("\n")).to.match(/declared grant .* is not in IAM after a clean up/);
    });

    // A CI run's random seed (seed 495945, case 2021): a Delete that left its grant to a twin answered just before a
    // second Ctrl-C, its save lost; the journal took the drop for recorded, and a later Delete of the twin removed the
    // grant the state still held. Named in the lost-save issue, which takes in such a removal only where the grant was
    // still in IAM as the command that lost the save ended.
    it("the lost-save known issue takes in a later removal of a grant whose save was lost, and only that (seed 495945, case 2021)", async () => {
        const v = await runCase(drawCase(caseSeed(495945, 2021)), new Rules());
        expect(v.known).to.equal("ctrl-c-twice-loses-an-answered-save");
        expect(v.violations.join("\n")).to.match(/was removed, though the stack still holds it/);
        // A Policy's Create answered between two Ctrl-Cs, its save lost: a later note that Pulumi's state holds one of its
        // grants, removed since, is that issue's too (seed 23, case 8643).
        expect((await runCase(drawCase(caseSeed(23, 8643)), new Rules())).known).to.equal("ctrl-c-twice-loses-an-answered-save");
        const c2104 = await runCase(drawCase(caseSeed(1, 2104)), new Rules(new Set(["ctrl-c-twice"])));
        expect(c2104.violations, "seed 1, case 2104, ctrl-c-twice off").to.not.deep.equal([]);
        expect(c2104.known, "its Delete removed the grant in the command that lost the save").to.equal(undefined);
    });

    // Found once the simulator drew a Binding and a Member of one grant (seed 1, case 1554): a `destroy` cut off by a
    // second Ctrl-C, the Binding's Delete answered after it; the journal took the drop for what the stack holds,
    // though the engine records nothing after a second Ctrl-C. An update of the Member (`up --target`) put the grant
    // back, and its `destroy --target` then removed the grant the Binding's state still holds. An answer given before
    // the second Ctrl-C that the engine had not yet recorded is the lost-save issue's, of that operation's grants.
    for (const known of [true, false]) {
        for (const at of [1, 2]) {
            it(`a Binding and a Member of one grant, a \`destroy\` cut off by a second Ctrl-C at write ${at} (command line ${known ? "known" : "unknown"}): the Member's later \`destroy --target\` leaves the grant`, async () => {
                const bob = "user:bob@example.com";
                const bind: Member = { name: "bind", at: { parent: 1, grant: { role: BINDING_ROLE, member: bob } }, members: [bob], provider: "default" };
                const share: Member = { name: "share", at: bind.at, provider: "explicit" };
                const c = base({ commandKnown: known, initial: [bind, share], steps: [{ program: [bind, share], command: { kind: "destroy", skipPreview: true },
                    strike: { kind: "ctrl-c-twice", at }, then: [{ kind: "up", skipPreview: true, targets: [urnOf("share")] }, { kind: "destroy", skipPreview: true, targets: [urnOf("share")] }], revert: false }] });
                const unexplained: string[] = [];
                for (let seed = 0; seed < 16; seed++) {
                    const v = await runCase({ ...c, seed }, new Rules());
                    if (v.known === undefined) unexplained.push(...v.violations);
                }
                expect(unexplained).to.deep.equal([]);
            });
        }
    }

    // A CI run's random seed (seed 11, case 3623): a plugin killed after the journal kept a Delete's answer (it left its
    // grant to a twin) and before the engine heard it; a later Delete of the twin removed the grant the state still
    // held. Named as its own known issue, of that grant only.
    it("a plugin killed between a Delete's kept answer and the engine hearing it is a named known issue, of that grant alone (seed 11, case 3623)", async () => {
        const v = await runCase(drawCase(caseSeed(11, 3623)), new Rules());
        expect(v.known).to.equal("killed-before-the-engine-heard-an-answer");
        expect(v.violations.every((x) => /roles\/viewer user:cy@example.com|"user:cy@example.com"/.test(x))).to.equal(true);
    });

    // A model defect the same seed found (case 9911): a 503 after a reset Google had applied undid the write's record,
    // which the plugin keeps wherever an attempt may have applied (iam/parentPolicy.ts): the grant was left unnamed.
    it("a 503 on the retry after a reset that applied leaves the write's record open: its grant is named (seed 11, case 9911)", async () => {
        expect((await simulate(11, 1, new Set(), () => undefined, { only: 9911 })).violations).to.equal(0);
    });

    for (const torn of [true, false]) {
        it(`a plugin killed ${torn ? "as it journals a write: the record's line is torn, readers skip it, and the write is never sent" : "after its write landed: the record stays"}`, async () => {
            const { stack, world } = await stackOf([member], [], false);
            const strike: Strike = { kind: "kill-plugin", at: 1, ...(torn ? { torn } : {}) };
            await stack.command({ kind: "up", skipPreview: true }, strike);
            expect(stack.iam.has(member.at)).to.equal(!torn);
            const reader = world.spawn("cli-reader");
            const opened = world.open(reader, { op: "hello", writer: reader.writer, run: "reader" });
            if (!("store" in opened)) throw new Error(opened.why);
            const dead = opened.store.peers().map((p) => p.lines.map((l) => l.op));
            expect(dead).to.have.length(1);
            expect(dead[0].includes("wrote")).to.equal(!torn);
        });
    }

    // A write sent as its plugin died, applied by Google after a later run's read found the grant absent: that read is
    // no word on it (in-flight-slack), so the orphan it leaves is named once it lands.
    it("a Create's write in flight as its plugin dies lands after a preview's read: the orphan is named, and with in-flight-slack off it is not", async () => {
        const kept: Member = { name: "m1", at: { parent: 1, grant: grant.grant }, provider: "default" };
        for (const off of [[], ["in-flight-slack"]] as RuleName[][]) {
            const { stack } = await stackOf([kept], off);
            stack.program = [kept, member];
            await stack.command({ kind: "up", skipPreview: true }, { kind: "kill-plugin", at: 1, landsAfter: 1 });
            expect(stack.iam.has(member.at), "not yet applied as the plugin dies").to.equal(false);
            stack.program = [kept];
            await stack.command({ kind: "preview" });
            expect(stack.iam.has(member.at), "applied after the preview's first read").to.equal(true);
            const up = await stack.command({ kind: "up", skipPreview: true });
            expect(up.said.some((s) => s.note.kind === "unrecorded" && s.note.at?.parent === 0), off.join() || "every rule on").to.equal(off.length === 0);
        }
    });

    // Found by the draw of a write in flight as its sender dies (seed 1, cases 3571 and 7264; seed 3, cases 6566 and
    // 7890): a Delete's removal in flight as the CLI is killed; the next `pulumi up` (the program keeps the Member)
    // forces an update to put the grant back, finds it still there and wrote nothing, and its answer settled the
    // removal; the removal then landed (the policy's etag unmoved), and no later run put the grant back or said so.
    // Now that update writes the policy unchanged, which moves the etag: Google refuses the late removal.
    it("a Delete's removal in flight as the CLI dies, then `pulumi up` of the Member: the update fences the late write, and the grant stays", async () => {
        const c = base({ commandKnown: true, initial: [member], steps: [{
            program: [member], command: { kind: "destroy", skipPreview: true, targets: [urnOf("m0")] }, strike: { kind: "kill-cli", at: 1, landsAfter: 2 },
            then: [{ kind: "up", skipPreview: true }], revert: false,
        }] });
        expect(await violationsOf(c)).to.deep.equal([]);
        // Without the fence the removal lands; without the answer's wait (in-flight-slack) it is settled as the
        // update answers, and the late removal is never named.
        expect(await violationsOf(c, ["fence-in-flight", "in-flight-slack"])).to.not.deep.equal([]);
    });

    // Found by seed 16474, case 5571 (the command line unknown): twins of one grant, a `destroy` cut off by the
    // machine's crash after one Delete left the grant to the other (answered, its record lost with the crash) and the
    // other's removed it; then `pulumi up --target` of the second, replaced. Its old Delete's removal settled, as no
    // other resource was thought to hold the grant, while the first twin was still in the stack holding it: lost.
    // With the command line known the flow passes; unknown, it is the known issue of a run cut off with the command
    // line unknown, which now counts the machine's crash as it counts kill -9 of the CLI.
    it("twins, a `destroy` cut off by the machine's crash after one Delete left the grant to the other, then `up --target` of the other's replacement: the grant stays where the command line is known", async () => {
        const ann = { parent: 1, grant: { role: "roles/viewer", member: "user:ann@example.com" } };
        const m0: Member = { name: "m0", at: ann, provider: "default" };
        const m1: Member = { name: "m1", at: ann, provider: "default" };
        const replaced: Member = { name: "m0", at: { parent: 0, grant: { role: "roles/servicemanagement.serviceConsumer", member: "user:dee@example.com" } }, provider: "default" };
        const c = (known: boolean) => base({ commandKnown: known, initial: [m1, m0], steps: [{
            program: [replaced, m1], command: { kind: "destroy", skipPreview: true }, strike: { kind: "crash-machine", at: 1 },
            then: [{ kind: "up", targets: [urnOf("m0")] }], revert: false,
        }] });
        expect(await violationsOf(c(true))).to.deep.equal([]);
        expect(knownIssue(c(false))).to.equal("cut-off-with-command-line-unknown");
    });

    it("`pulumi destroy --target <explicit provider> --target-dependents`: every Member of that provider goes, a default one's twin grant stays", async () => {
        const a: Member = { name: "a", at: grant, provider: "explicit" };
        const b: Member = { name: "b", at: { parent: 0, grant: { role: "roles/viewer", member: "user:bob@example.com" } }, provider: "explicit" };
        const c: Member = { name: "c", at: grant, provider: "default" };
        const { stack } = await stackOf([a, b, c]);
        const cmd: Command = { kind: "destroy", skipPreview: true, targets: [providerUrn("explicit", "")], targetDependents: true };
        const out = await stack.command(cmd);
        expect([...stack.checkpoint.resources.keys()]).to.deep.equal([urnOf("c")]);
        expect([stack.iam.has(a.at), stack.iam.has(b.at)]).to.deep.equal([true, false]);
        expect(out.said.map((s) => s.note.kind)).to.deep.equal(["left"]);
        for (const known of [true, false]) {
            expect(await violationsOf(base({ commandKnown: known, initial: [a, b, c], steps: [{ program: [a, b, c], command: cmd, then: [], revert: false }] }))).to.deep.equal([]);
        }
    });

    it("twins through two providers, Ctrl-C twice after a `destroy` removed one's grant, `pulumi up` of it alone: the update that puts it back settles it", async () => {
        const pair: Member[] = [{ name: "a", at: grant, provider: "explicit" }, { name: "b", at: grant, provider: "default" }];
        const c = base({ commandKnown: true, initial: pair, steps: [{ program: [pair[0]], command: { kind: "destroy", skipPreview: true }, strike: { kind: "ctrl-c-twice", at: 1 }, then: [], revert: false }] });
        expect(await violationsOf(c)).to.deep.equal([]);
    });

    it("a preview beside an `up` that replaces a Member by a twin's grant, where the command line is unknown, then `up --target` of the twin: the replacement's grant stays", async () => {
        const g2 = { parent: 0, grant: { role: "roles/viewer", member: "user:bob@example.com" } };
        const old: Member = { name: "a", at: grant, provider: "explicit" };
        const now: Member[] = [{ ...old, at: g2 }, { name: "b", at: g2, provider: "default" }];
        const c = base({ initial: [old], steps: [{ program: now, command: { kind: "up", skipPreview: true }, beside: 2, then: [{ kind: "up", skipPreview: true, targets: [urnOf("b")] }], revert: true }] });
        expect(await violationsOf(c)).to.deep.equal([]);
        // Switched off, the flow is still safe for a Member: what the stack holds is kept per resource identity, so the
        // preview's older state (the old grant) sits beside the replacement's and does not take its place. The rule
        // still keeps a Binding's older members from taking the place of its current ones, which the simulator does
        // not draw.
        expect(await violationsOf(c, ["preview-holds-nothing"]), "the rule switched off").to.deep.equal([]);
    });

    // A Binding and a Member of one role and member (a program the provider warns of): a preview that read the state
    // before an `up` added a member to the Binding sends its Diffs once the up has ended. Its olds are the Binding's
    // older members; taken for what the stack holds, a `destroy --target` of the Member before any other run found no
    // other holder of that member and removed it, though the Binding declares it.
    for (const known of [true, false]) {
        it(`a preview's Diffs after an \`up\` added a member to a Binding (command line ${known ? "known" : "unknown"}), then \`destroy --target\` of a Member of that role and member: the member stays`, async () => {
            const ann = "user:ann@example.com", bob = "user:bob@example.com";
            const bind = (members: string[]): Member => ({ name: "bind", at: { parent: 0, grant: { role: BINDING_ROLE, member: members[0] } }, members, provider: "default" });
            const m: Member = { name: "m", at: { parent: 0, grant: { role: BINDING_ROLE, member: bob } }, provider: "explicit" };
            const c = base({ commandKnown: known, initial: [bind([ann])], steps: [
                { program: [bind([ann, bob]), m], command: { kind: "up", skipPreview: true }, beside: 1, besideLate: "ended", then: [{ kind: "destroy", skipPreview: true, targets: [urnOf("m")] }], revert: false },
            ] });
            expect(await violationsOf(c)).to.deep.equal([]);
            expect(await violationsOf(c, ["preview-holds-nothing"]), "the rule switched off").to.not.deep.equal([]);
        });
    }

    // The simulator draws that flow (drawShared in sim/case.ts: a Member of a Binding's role and member, a preview
    // beside the step whose update adds the member to the Binding, the Member destroyed alone), and catches the rule
    // switched off (seed 1, case 7989, command line unknown).
    it("a drawn Member of a Binding's role and member, a preview beside the Binding's update, then `destroy --target` of the Member: the rule switched off is caught (seed 1, case 7989)", async () => {
        const c = drawCase(caseSeed(1, 7989));
        expect((await runCase(c, new Rules())).violations).to.deep.equal([]);
        expect((await runCase(c, new Rules(new Set(["preview-holds-nothing"])))).violations.join("\n")).to.match(/bind0's grant .* was removed, though the stack still holds it/);
    });

    // The other side of it (seed 34, case 8488, command line unknown): a Delete answered between two Ctrl-Cs, its save
    // lost, noted as a drop; the next run's Diff of it (olds: its grant) may be a preview's, and once it only kept what
    // another run noted, the drop stayed, and a Delete of the twin removed the grant. The Diff adds its grants.
    it("a Delete's drop noted, its save lost to a second Ctrl-C: a Diff that may be a preview's adds its olds' grants to what the stack holds (seed 34, case 8488)", async () => {
        expect((await runCase(drawCase(caseSeed(34, 8488)), new Rules())).violations).to.deep.equal([]);
    });

    // And its cost (seed 45, case 3776, command line unknown): a preview beside a `destroy --target` of a Binding,
    // its Diffs after the destroy ended, its olds the Binding's members. Added to what the stack holds, a later
    // Delete of a Member of that grant left it to the Binding, gone: untrue. Such a hold is marked, and the Delete says
    // the Binding "may" declare it.
    it("a may-be-preview Diff's olds taken in after a Binding's drop: a later Delete says the Binding may declare the grant (seed 45, case 3776)", async () => {
        const c = drawCase(caseSeed(45, 3776));
        const v = await runCase(c, new Rules());
        expect(v.violations).to.deep.equal([]);
        expect(v.transcript.join("\n")).to.match(/left roles\/editor user:dee@example.com .*: may be declared by .*bind0/);
    });

    // A preview that read the state before an `up` replaced one of two twins sends its Diffs once the up has ended:
    // its olds name the replaced Member's old grant, which no state holds any more. Taken as held, a later Delete of
    // the other twin left that grant to the replaced one, in IAM and in no state.
    for (const known of [true, false]) {
        it(`a preview's Diffs after an \`up\` replaced one of two twins (command line ${known ? "known" : "unknown"}), then \`destroy --target\` of the other: the grant goes`, async () => {
            const bob = { parent: 0, grant: { role: "roles/viewer", member: "user:bob@example.com" } };
            const c = base({ commandKnown: known, steps: [
                { program: [{ ...twins[0], at: bob }, twins[1]], command: { kind: "up", skipPreview: true }, beside: 1, besideLate: "ended", then: [], revert: false },
                { program: [{ ...twins[0], at: bob }], command: { kind: "destroy", skipPreview: true, targets: [urnOf("b")] }, then: [], revert: false },
            ] });
            expect(await violationsOf(c)).to.deep.equal([]);
            // The preview holds nothing either (preview-holds-nothing): where the command line is unknown, its Diffs,
            // sent before any write of its run, do not replace what the up noted.
            expect(await violationsOf(c, ["pending-replacement-holds-nothing", "preview-holds-nothing"]), "both switched off").to.not.deep.equal([]);
        });
    }

    // Found by the simulator once a preview beside an `up` could send its Diffs after the up's operations (seed 1,
    // cases 539, 1674 and 3815): it read the state as the up began, so its olds predate the up's answers.
    describe("a preview beside an `up` whose plugin dies, its Diffs after the up's answers", () => {
        const at = (parent: number, member: string) => ({ parent, grant: { role: "roles/viewer", member: `user:${member}@example.com` } });
        const binding = (members: string[], parent = 0, provider: "default" | "explicit" = "default"): Member => ({
            name: "bind", at: { parent, grant: { role: BINDING_ROLE, member: `user:${members[0]}@example.com` } }, members: members.map((m) => `user:${m}@example.com`), provider,
        });
        const up = (program: Member[], strikeAt: number): Case["steps"][number] => ({
            program, command: { kind: "up", skipPreview: true }, strike: { kind: "kill-plugin", at: strikeAt }, beside: 1, besideLate: "open", then: [], revert: false,
        });
        for (const known of [true, false]) {
            const line = known ? "known" : "unknown";
            it(`the explicit provider's plugin killed after two Creates answered (command line ${line}): the preview takes no file of the live up, and nothing untrue is said`, async () => {
                const d: Member = { name: "d", at: at(0, "dee"), provider: "default" };
                const c = base({ commandKnown: known, initial: [d], steps: [up([d, { name: "b", at: at(0, "bob"), provider: "explicit" }, { name: "c", at: at(1, "cy"), provider: "explicit" }], 2)] });
                expect(await violationsOf(c)).to.deep.equal([]);
                if (known) expect(await violationsOf(c, ["dead-peer-left-to-its-run"]), "the rule switched off").to.not.deep.equal([]);
            });
            it(`a Binding's update answered, the plugin killed at the next write (command line ${line}): the preview's older olds say nothing untrue of it`, async () => {
                const c = base({ commandKnown: known, initial: [binding(["ann"])], steps: [up([binding(["ann", "bob"]), { name: "m", at: at(1, "ann"), provider: "default" }], 2)] });
                expect(await violationsOf(c)).to.deep.equal([]);
                expect(await violationsOf(c, ["preview-olds-predate-answers"]), "the rule switched off").to.not.deep.equal([]);
            });
            it(`a Binding moved to another parent, its old's Delete cut off (command line ${line}): the preview's Diff of the old parent asks no update to put members back there`, async () => {
                const m: Member = { name: "m", at: at(1, "ann"), provider: "default" };
                const c = base({ commandKnown: known, initial: [binding(["cy", "dee"], 1, "explicit"), m], steps: [up([binding(["cy", "dee"], 0, "explicit"), m], 2)] });
                expect(await violationsOf(c)).to.deep.equal([]);
            });
        }
    });

    // The case the simulator found (seed 19, case 6517), replayed: twins of one grant through two providers; after
    // cut-off Deletes, an `up` runs one twin's deleteBeforeReplace replacement before the other's Check, and that
    // Delete's answer (which puts no grant back) was taken to settle the removal the other's Diff must put back.
    it("a removal answered by its resource's Delete before its twin's Check: the twin's update puts the grant back in that run (seed 19, case 6517)", async () => {
        expect(await replayed(19, 6517)).to.deep.equal([]);
    });

    // Found by a 1,000,000-case run of seed 1 (14 of its 17 violations): a deleteBeforeReplace replacement whose
    // Create was not recorded leaves its deleted old in the engine's state (pending replacement), and the next run's
    // Diff of it took the old grant for one the stack holds: a grant left in IAM that nothing names, or a note that
    // outlives the command it gives.
    it("a deleteBeforeReplace old deleted, its replacement's Create cut off: the next Diff's olds hold nothing (seed 1, case 18275)", async () => {
        expect(await replayed(1, 18275)).to.deep.equal([]);
        expect(await replayed(1, 18275, ["pending-replacement-holds-nothing"]), "the rule switched off").to.not.deep.equal([]);
    });

    // The same flow the simulator reaches within 10,000 cases since a strike may be aimed at the Create after a
    // deleteBeforeReplace Delete (seed 1, case 5352): the stale olds, taken as held, made a later Delete of the twin
    // say it left the grant to the replaced Member, which neither the program nor the engine's state held it for.
    it("a strike aimed at the Create after a deleteBeforeReplace Delete, then `destroy --target` of the old grant's twin: the grant is left to no one (seed 1, case 5352)", async () => {
        const run = (off: RuleName[]) => simulate(1, 1, new Set(off), () => undefined, { only: 5352 });
        expect((await run([])).violations).to.equal(0);
        expect((await run(["pending-replacement-holds-nothing"])).violations, "the rule switched off").to.equal(1);
    });

    // Found by the random seed of a CI run (seed 605198, case 1043), the command line unknown: a `destroy` Ctrl-C'd
    // twice, a Member's Delete answered between the two (the engine never recorded it), and a preview beside it whose
    // program replaces that Member. Its Diff's olds were taken for a deleteBeforeReplace old already deleted (they
    // held nothing), which settled the removal; the state still held the grant, so the next `up` did not put it back.
    // Only a replaced resource's Delete empties those olds now.
    it("a `destroy` Delete answered between two Ctrl-Cs, a preview beside it replacing that Member, then `pulumi up` of it: the grant is put back (seed 605198, case 1043)", async () => {
        const run = (off: RuleName[]) => simulate(605198, 1, new Set(off), () => undefined, { only: 1043 });
        expect((await run([])).violations).to.equal(0);
    });

    // Found by seed 34 (case 5387): a Binding moved to another parent (deleteBeforeReplace), its old's Delete answered and
    // the new one's Create refused (409 on every retry); the next up's first Diff of the pending old emptied its olds and
    // noted that empty hold, so the run's second Diff of it no longer saw the drop and took the old members as held: a
    // later Delete of another Binding of that role left a member to it, which no state held. The drop is kept now.
    it("a deleteBeforeReplace Binding's old, its replacement refused: every Diff of the run holds its olds as nothing (seed 34, case 5387)", async () => {
        expect((await simulate(34, 1, new Set(), () => undefined, { only: 5387 })).violations).to.equal(0);
    });

    // Found by seed 37 (case 4011), the command line unknown: a deleteBeforeReplace Binding's old Delete answered
    // between two Ctrl-Cs (never recorded), a preview beside it: its Diff emptied the old's olds, as a recorded Delete
    // would leave them, and so settled that Delete's removal; the next `up` did not put the members back. Olds so emptied
    // judge no answered item of it now.
    it("a deleteBeforeReplace Binding's Delete answered between two Ctrl-Cs, a preview beside it, then `pulumi up` of it: the members are put back (seed 37, case 4011)", async () => {
        expect((await simulate(37, 1, new Set(), () => undefined, { only: 4011 })).violations).to.equal(0);
    });

    // A machine's crash after Google applied a Create the engine had saved: the lines of its answer (what the stack
    // holds, the item the engine's record settles) were not yet on disk, so the next run named the recorded grant an
    // orphan (62 cases in 10,000 of seed 1 were a known issue). They are kept now before the engine hears the answer.
    it("a machine's crash after an answered Create: its grant is not named an orphan by the next run (seed 1, cases 157 and 442)", async () => {
        const g = (member: string) => ({ parent: 0, grant: { role: "roles/viewer", member } });
        const later: Member[] = [{ name: "a", at: g("user:ann@example.com"), provider: "default" }, { name: "b", at: g("user:bob@example.com"), provider: "explicit" },
            { name: "c", at: g("user:cy@example.com"), provider: "default" }];
        const c = base({ commandKnown: true, initial: [later[0]], steps: [
            { program: later, command: { kind: "up", skipPreview: true }, strike: { kind: "crash-machine", at: 2 }, then: [], revert: false },
        ] });
        expect(await violationsOf(c)).to.deep.equal([]);
        for (const k of [157, 442]) expect((await simulate(1, 1, new Set(), () => undefined, { only: k })).violations, `case ${k}`).to.equal(0);
    });

    // Found by a 1,000,000-case run of seed 1 (cases 378347, 423885 and 496015): the replacement's Create, cut off, was
    // journaled as adding the same role and member on another parent, and that addition was taken as a write of the
    // old's grant still open, so the old's olds were taken for a grant the stack holds. A stale holder then kept a
    // later Delete's removal of that grant open, and the final `up` said "this update puts it back".
    it("a deleteBeforeReplace Member moved to another parent, its Create cut off after its old's Delete: the old holds nothing (seed 1, case 378347)", async () => {
        const moved: Member = { name: "a", at: { parent: 1, grant: grant.grant }, provider: "default", deleteBeforeReplace: true };
        const c = base({ commandKnown: true, initial: [{ ...moved, at: grant }], steps: [
            { program: [moved, { name: "b", at: grant, provider: "default" }], command: { kind: "up", refresh: true }, strike: { kind: "kill-cli", at: 2 }, then: [], revert: false },
            { program: [moved, { name: "b", at: grant, provider: "default" }], command: { kind: "destroy", skipPreview: true }, then: [], revert: false, later: true },
        ] });
        expect(await violationsOf(c)).to.deep.equal([]);
        expect(await replayed(1, 378347)).to.deep.equal([]);
    });

    it("after `pulumi stack rename`, a deleteBeforeReplace Member replaced as it registers, before its twin's Check: the twin's update puts the grant back", async () => {
        const c = base({ commandKnown: true, renamed: true, initial: [{ ...twins[0], deleteBeforeReplace: true }, twins[1]],
            steps: [{ program: [{ ...twins[0], deleteBeforeReplace: true, at: { parent: 1, grant: grant.grant } }, twins[1]], command: { kind: "up", skipPreview: true }, then: [], revert: false }] });
        expect(await violationsOf(c)).to.deep.equal([]);
        // The twin's state holds the grant, so the removal is held elsewhere: switched off, its update leaves it removed.
        expect(await violationsOf(c, ["removal-held-elsewhere"]), "the rule switched off").to.not.deep.equal([]);
    });

    for (const known of [true, false]) {
        const line = known ? "known" : "unknown";
        it(`two Members of one grant, \`pulumi destroy --target\` of one (command line ${line}): the other's grant stays`, async () => {
            const c = base({ commandKnown: known, steps: [{ program: twins, command: { kind: "destroy", skipPreview: true, targets: [urnOf("a")] }, then: [], revert: false }] });
            expect(await violationsOf(c)).to.deep.equal([]);
        });

        it(`two Members of one grant, \`pulumi destroy\` of both (command line ${line}): the grant goes, nothing left unnamed`, async () => {
            const c = base({ commandKnown: known, steps: [{ program: twins, command: { kind: "destroy", skipPreview: true }, then: [], revert: false }] });
            expect(await violationsOf(c)).to.deep.equal([]);
        });

        // Found by the simulator once the engine model read condemned olds in a refresh, as recorded traces show: the
        // Read of a replaced Member awaiting its Delete (under its replacement's URN) took the place of what the
        // replacement held, and a `--target` run's Delete of the replacement's twin removed that grant unsaid.
        for (const look of [{ kind: "refresh", skipPreview: true } as const, { kind: "preview", refresh: true } as const]) {
            it(`a Member replaced (create first) whose old's Delete failed, the program put back, \`pulumi ${look.kind} ${look.kind === "refresh" ? "--yes" : "--refresh"}\`, then \`pulumi up --target\` deleting the replacement's twin (command line ${line}): the grant stays`, async () => {
                const before: Member = { name: "m1", at: { parent: 1, grant: { role: "roles/viewer", member: "user:dee@example.com" } }, provider: "default" };
                const after: Member[] = [{ ...before, at: grant }, { name: "m2", at: grant, provider: "default" }];
                const c = base({
                    commandKnown: known, initial: [before],
                    // The program put back before the commands that follow: m2 is no longer declared.
                    steps: [{
                        program: after, command: { kind: "up", skipPreview: true }, strike: { kind: "unavailable", at: 2 }, revert: true,
                        then: [look, { kind: "up", skipPreview: true, targets: [urnOf("m2")] }],
                    }],
                });
                expect(await violationsOf(c)).to.deep.equal([]);
            });
        }

        it(`Ctrl-C once after a Create, the program reverted, \`pulumi up\` with its preview (command line ${line}): no untrue note`, async () => {
            const more: Member = { name: "c", at: { parent: 1, grant: { role: "roles/viewer", member: "user:bob@example.com" } }, provider: "explicit" };
            const c = base({ commandKnown: known, steps: [{ program: [...twins, more], command: { kind: "up", skipPreview: true }, strike: { kind: "ctrl-c", at: 1 }, then: [], revert: true }] });
            expect(await violationsOf(c)).to.deep.equal([]);
        });
    }
});

// Bindings (drawn since the simulator drew only Members): a Binding's Create sets its role to exactly its members, so
// it may remove a member another Binding of the role held.
describe("the journal's simulator, with Bindings", function () {
    this.timeout(120_000);
    const binding = (name: string, members: string[]): Member => ({
        name, at: { parent: 0, grant: { role: BINDING_ROLE, member: `user:${members[0]}@example.com` } },
        members: members.map((u) => `user:${u}@example.com`), provider: "default",
    });
    const old = binding("bind0", ["dee"]);
    const m: Member = { name: "m", at: { parent: 1, grant: { role: "roles/viewer", member: "user:bob@example.com" } }, provider: "default" };

    // Seed 1, case 970: the journal said "Pulumi's state still holds it" of the member the new Binding's Create removed,
    // after the refresh had recorded the old Binding with the new one's members.
    // (Where the command line is unknown, a CLI killed is the named known issue cut-off-with-command-line-unknown: the
    // refresh's Read may be a preview's, so it is no word on what the old Binding holds, and the note stays.)
    it("one Binding of a role replaced by another, the CLI killed after the new one's write, then the README's recovery (command line known): no untrue note", async () => {
        const c = base({ commandKnown: true, initial: [old], steps: [{ program: [binding("bind1", ["ann"])], command: { kind: "up", skipPreview: true }, strike: { kind: "kill-cli", at: 1 }, then: [], revert: false }] });
        expect(await violationsOf(c)).to.deep.equal([]);
        expect((await violationsOf(c, ["removal-held-by-none"])).join("\n")).to.match(/a note untrue when said: says Pulumi's state holds roles\/editor user:dee@example.com/);
    });

    // Seed 301330, case 521: the new Binding's Create answered after the Ctrl-C noted nothing as held (the engine
    // may not record it), so the old Binding's Delete by `pulumi up --target` removed the members both declare.
    it("one Binding of a role replaced by another, Ctrl-C after the new one's write, then `pulumi up --target` of the old one: the new one's members stay", async () => {
        const c = base({ commandKnown: true, initial: [binding("bind0", ["ann", "cy"])], steps: [{
            program: [binding("bind1", ["ann", "bob"])], command: { kind: "up", skipPreview: true }, strike: { kind: "ctrl-c", at: 1 },
            then: [{ kind: "up", skipPreview: true, targets: [urnOf("bind0")] }], revert: false,
        }] });
        expect(await violationsOf(c)).to.deep.equal([]);
    });

    // Seed 2, case 341: where the command line is unknown, `pulumi refresh --preview-only` noted the old Binding as
    // holding what Google showed (the new one's members), so the removal of its member went unsaid, and after the
    // revert nothing put it back.
    it("one Binding of a role replaced by another, the run failing before the old one's Delete, the program reverted, `pulumi refresh --preview-only`, `pulumi up` (command line unknown): the old Binding's member is put back", async () => {
        const c = base({ initial: [old, m], steps: [{
            program: [binding("bind1", ["bob"]), { ...m, at: { ...m.at, grant: { ...m.at.grant, member: "user:cy@example.com" } } }],
            command: { kind: "up", skipPreview: true }, strike: { kind: "unavailable", at: 2 }, then: [{ kind: "refresh", previewOnly: true }], revert: true,
        }] });
        expect(await violationsOf(c)).to.deep.equal([]);
    });
});

describe("the journal's simulator, with Policies", function () {
    this.timeout(120_000);
    const policy = (name: string, owns: [string, string][]): Member => {
        const grants = owns.map(([role, user]) => ({ role, member: `user:${user}@example.com` }));
        return { name, at: { parent: POLICY_PARENT, grant: grants[0] }, owns: grants, provider: "default" };
    };

    // Seed 1, case 9300: the model claimed a role for a Policy (the plugin claims none), so the journal took the
    // refresh's record of the old Policy for another resource under the same URN, and went on saying "Pulumi's state
    // still holds it" of the grant the new Policy's cut-off Create removed, after the old Policy's state lacked it.
    it("one Policy replaced by another, the CLI killed after the new one's write, the README's recovery, the program reverted: no untrue note", async () => {
        const c = base({ commandKnown: true, initial: [policy("pol0", [["roles/viewer", "cy"]])], steps: [{
            program: [policy("pol1", [["roles/servicemanagement.serviceConsumer", "dee"], ["roles/viewer", "dee"]])],
            command: { kind: "up", skipPreview: true }, strike: { kind: "kill-cli", at: 1 }, then: [], revert: true,
        }] });
        expect(await violationsOf(c)).to.deep.equal([]);
    });

    // Seed 3, case 371: Ctrl-C after the new Policy's Create left the stack holding both; after the revert the old one
    // wrote nothing (its state as the program declares it), and the new one's Delete, leaving the policy to it, left
    // the grant only the new one declared in IAM and in no state.
    it("one Policy replaced by another, Ctrl-C after the new one's write, the program reverted: the new one's Delete removes what it alone declared", async () => {
        const m: Member = { name: "m", at: { parent: 0, grant: { role: "roles/viewer", member: "user:dee@example.com" } }, provider: "default" };
        const c = base({ commandKnown: true, initial: [policy("pol0", [["roles/viewer", "bob"]])], steps: [{
            program: [policy("pol1", [["roles/viewer", "bob"], ["roles/servicemanagement.serviceConsumer", "cy"]]), m],
            command: { kind: "up", skipPreview: true }, strike: { kind: "ctrl-c", at: 2 }, then: [], revert: true,
        }] });
        expect(await violationsOf(c)).to.deep.equal([]);
    });
});

describe("the journal's rules", () => {
    it("the design note's table says each rule as rules.ts does, and no other", async () => {
        const fs = await import("fs");
        const path = await import("path");
        const { RULES } = await import("../../provider/journal/rules");
        const note = fs.readFileSync(path.join(__dirname, "..", "..", "..", "docs", "design", "journal.md"), "utf8");
        const rows = [...note.matchAll(/^\| `([a-z-]+)` \| (.*?) \|/gm)].map((m) => [m[1], m[2]]);
        expect(rows).to.deep.equal(Object.entries(RULES).map(([name, r]) => [name, r.says]));
    });
});
