// `npm run sim -- --seed S --cases N`: runs N cases drawn from seed S against the real journal and prints, for each
// violation, the case's seed, a shrunk transcript and the command that replays it; then how many cases reached each
// named rule, and last the line `N cases, V violations`. Exits 0 exactly when V is 0. The same seed prints the same
// output. `--case K` replays case K alone (with its transcript); `--off RULE[,RULE]` switches rules off (a rule that
// matters lets the simulator find a violation). `--power [--rule RULE[,RULE]]` switches each rule off in turn and
// prints the first case that catches it.

import * as fs from "fs";
import * as path from "path";
import minimist from "minimist";
import { conform, Conformance } from "./conform";
import { TRANSITIONS } from "./model";
import type { Trace } from "./trace";
import { RULE_NAMES, RuleName, Rules } from "../provider/journal/rules";
import { Case, drawCase, knownIssue, runCase, Verdict } from "./case";

/** The seed of case `k` of a run seeded `seed`. */
export const caseSeed = (seed: number, k: number) => (Math.imul(seed >>> 0, 0x9e3779b1) + Math.imul(k + 1, 0x85ebca77)) >>> 0;

/** Smaller cases that still fail: steps, their side commands and strikes dropped one at a time, while it fails. */
async function shrink(c: Case, off: ReadonlySet<RuleName>): Promise<{ c: Case; v: Verdict }> {
    let best = c;
    let verdict = await runCase(c, new Rules(off));
    const tries = (x: Case): Case[] => [
        ...x.steps.map((_, i) => ({ ...x, steps: x.steps.filter((__, k) => k !== i) })),
        ...x.steps.flatMap((s, i) => s.then.map((_, t) => ({ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, then: y.then.filter((__, u) => u !== t) } : y)) }))),
        ...x.steps.flatMap((s, i) => (s.revert ? [{ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, revert: false } : y)) }] : [])),
        ...x.steps.flatMap((s, i) => (s.beside ? [{ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, beside: undefined, besideLate: undefined } : y)) }] : [])),
        ...x.steps.flatMap((s, i) => (s.besideLate ? [{ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, besideLate: undefined } : y)) }] : [])),
        ...x.steps.flatMap((s, i) => (s.later ? [{ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, later: undefined } : y)) }] : [])),
        ...x.steps.flatMap((s, i) => (s.google ? [{ ...x, steps: x.steps.map((y, k) => (k === i ? { ...y, google: undefined } : y)) }] : [])),
        ...x.steps.flatMap((s, i) => (s.strike && (s.strike.torn || s.strike.landsAfter !== undefined || s.strike.again || s.strike.afterDeleteFirst)
            ? [{ ...x, steps: x.steps.map((y, k) => (k === i && y.strike ? { ...y, strike: { kind: y.strike.kind, at: y.strike.at } } : y)) }] : [])),
        ...x.foreign.map((_, i) => ({ ...x, foreign: x.foreign.filter((__, k) => k !== i) })),
        ...(x.upgrade ? [{ ...x, upgrade: false }] : []),
        ...(x.renamed ? [{ ...x, renamed: false }] : []),
    ];
    for (let progress = true; progress;) {
        progress = false;
        for (const t of tries(best)) {
            const v = await runCase(t, new Rules(off));
            if (v.violations.length) {
                best = t;
                verdict = v;
                progress = true;
                break;
            }
        }
    }
    return { c: best, v: verdict };
}

export interface SimResult {
    cases: number;
    violations: number;
    reached: Map<RuleName, number>;
    lines: string[];
    /** Cases with a violation that draw a known issue, by issue: not counted as violations. */
    known: Map<string, number>;
}

/** Runs `cases` cases from `seed`; `print` gets each line of the report as it is made. */
export async function simulate(seed: number, cases: number, off: ReadonlySet<RuleName> = new Set(), print: (line: string) => void = () => undefined,
    opts: { stopAt?: number; only?: number } = {}): Promise<SimResult> {
    const reached = new Map<RuleName, number>();
    const lines: string[] = [];
    const say = (l: string) => {
        lines.push(l);
        print(l);
    };
    let violations = 0;
    let ran = 0;
    const known = new Map<string, number>();
    const ks = opts.only !== undefined ? [opts.only] : Array.from({ length: cases }, (_, k) => k);
    for (const k of ks) {
        const c = drawCase(caseSeed(seed, k));
        const rules = new Rules(off);
        const v = await runCase(c, rules);
        ran++;
        for (const [name] of rules.reached) reached.set(name, (reached.get(name) ?? 0) + 1);
        if (opts.only !== undefined) for (const l of v.transcript) say(l);
        if (v.violations.length === 0) continue;
        const issue = v.known ?? knownIssue(c);
        if (issue !== undefined && opts.only === undefined) {
            known.set(issue, (known.get(issue) ?? 0) + 1);
            continue;
        }
        violations++;
        const small = await shrink(c, off);
        say(`violation in case ${k} (seed ${seed}): ${small.v.violations[0]}`);
        for (const more of small.v.violations.slice(1, 4)) say(`  also: ${more}`);
        say(`  command line ${c.commandKnown ? "known" : "unknown"}; shrunk transcript:`);
        for (const l of small.v.transcript) say(`    ${l}`);
        say(`  replay: npm run sim -- --seed ${seed} --case ${k}${off.size ? ` --off ${[...off].join(",")}` : ""}`);
        if (opts.stopAt !== undefined && violations >= opts.stopAt) break;
    }
    return { cases: ran, violations, reached, lines, known };
}

/**
 * Each rule switched off in turn: the first case (of at most `cases`) in which the simulator finds a violation that
 * the same case, every rule on, does not have. One in a case of a known issue counts too: a known issue excuses the
 * journal where it cannot know, not a rule switched off where, with the rule, it did.
 */
export async function power(seed: number, cases: number, print: (line: string) => void, rules: readonly RuleName[] = RULE_NAMES): Promise<Map<RuleName, number | undefined>> {
    const out = new Map<RuleName, number | undefined>();
    /** Whether case k, every rule on, has no violation: asked once per case, whichever rules need it. */
    const clean = new Map<number, boolean>();
    const cleanWithAll = async (k: number, c: Case) => {
        if (!clean.has(k)) clean.set(k, (await runCase(c, new Rules())).violations.length === 0);
        return clean.get(k)!;
    };
    for (const rule of rules) {
        let found: number | undefined;
        for (let k = 0; k < cases && found === undefined; k++) {
            const c = drawCase(caseSeed(seed, k));
            const v = await runCase(c, new Rules(new Set([rule])));
            // Caught where the same case, every rule on, has no violation.
            if (v.violations.length > 0 && (await cleanWithAll(k, c))) found = k;
        }
        out.set(rule, found);
        print(`  ${rule}: ${found === undefined ? `not caught in ${cases} cases` : `caught at case ${found}`}`);
    }
    return out;
}

/** Every trace (`*.json`) in `dir`, held to the model: one line per trace, the flows none exercised, then `T traces, D diverging`. */
export async function conformAll(dir: string, print: (line: string) => void): Promise<Conformance[]> {
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    const results: Conformance[] = [];
    for (const f of files) {
        const r = await conform(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as Trace);
        results.push(r);
        const notes = r.notesCompared ? `; notes of ${r.notesCompared} commands ${r.notesDiffer ? `DIFFER: ${r.notesDiffer}` : "as the plugin said"}` : "";
        print(`${f}: ${r.commands} commands, ${r.divergence ? `DIVERGES: ${r.divergence}` : "conforms"}${notes}`);
    }
    const unexercised = TRANSITIONS.filter((t) => !results.some((r) => (r.took.get(t) ?? 0) > 0));
    print(`model flows no trace exercised: ${unexercised.length ? unexercised.join("; ") : "none"}`);
    const fed = results.filter((r) => r.notesCompared > 0);
    print(`the core fed ${fed.length} traces (${fed.reduce((n, r) => n + r.notesCompared, 0)} commands): ${fed.filter((r) => r.notesDiffer).length} say otherwise than the plugin`);
    print(`${results.length} traces, ${results.filter((r) => r.divergence).length} diverging`);
    return results;
}

/** The rules a flag names (`--off a,b`), each checked to be one. */
function rulesOf(flag: string, value: unknown): RuleName[] {
    const names = String(value ?? "").split(",").filter(Boolean);
    for (const r of names) if (!(RULE_NAMES as readonly string[]).includes(r)) throw new Error(`--${flag} ${r}: no such rule (the rules: ${RULE_NAMES.join(", ")})`);
    return names as RuleName[];
}

async function main(): Promise<void> {
    const args = minimist(process.argv.slice(2), { string: ["off", "conform", "rule"], boolean: ["power"], default: { seed: 1, cases: 1000 } });
    if (args.conform !== undefined) {
        const results = await conformAll(String(args.conform), (l) => console.log(l));
        process.exitCode = results.length > 0 && results.every((r) => !r.divergence) ? 0 : 1;
        return;
    }
    const seed = Number(args.seed);
    const cases = Number(args.cases);
    const off = new Set(rulesOf("off", args.off));
    if (!Number.isInteger(seed) || !Number.isInteger(cases) || cases < 0) throw new Error("--seed and --cases take whole numbers");
    if (args.power) {
        // --rule R[,R]: those rules alone.
        const only = rulesOf("rule", args.rule);
        console.log(`each rule switched off (seed ${seed}, at most ${cases} cases each):`);
        const caught = await power(seed, cases, (l) => console.log(l), only.length ? only : RULE_NAMES);
        const n = [...caught.values()].filter((k) => k !== undefined).length;
        console.log(`${n} of ${caught.size} rules caught`);
        return;
    }
    const result = await simulate(seed, cases, off, (l) => console.log(l), { ...(args.case !== undefined ? { only: Number(args.case) } : {}) });
    console.log("rules reached (cases):");
    for (const name of RULE_NAMES) console.log(`  ${name}: ${result.reached.get(name) ?? 0}`);
    for (const [issue, n] of [...result.known].sort()) console.log(`known issue ${issue}: ${n} cases with a violation (not counted)`);
    console.log(`${result.cases} cases, ${result.violations} violations`);
    process.exitCode = result.violations === 0 ? 0 : 1;
}

if (require.main === module) {
    main().catch((e: unknown) => {
        console.error(e instanceof Error ? e.message : String(e));
        process.exitCode = 2;
    });
}
