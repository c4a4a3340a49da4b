// The journal's rules, each named once: what it says, and the tests that hold it. The journal asks `fires(name)`
// exactly where a rule decides, so a run counts which rules it reached, and the simulator can switch one off to
// show that a rule matters (each switched-off rule must let the simulator find a violation). The design note's
// table (docs/design/journal.md) is made from this list.

export const RULES = {
    "engine-word": {
        says: "A request carrying the resource's state (Diff, Update, Delete, refresh) that agrees with an item settles it: the state holds an added grant, or lacks a removed one.",
        heldBy: ["tests/deployment/deployment.test.ts", "sim"],
    },
    "read-answer-is-no-word": {
        says: "A Diff after a Read of its resource in the run, or in a previewing run with --refresh, carries the Read's answer, not what the engine keeps: it settles nothing.",
        heldBy: ["tests/deployment/deployment.test.ts (`pulumi preview --refresh` after a Binding's update was cut off)", "sim"],
    },
    "preview-holds-nothing": {
        says: "A preview's state was read as it began and may be older than an update beside it: it is no record of what the stack holds; where the command line is unknown (a Diff may be a preview's until its run writes), a Diff's state takes nothing from what another run noted: it adds its grants, as what the stack may hold, unless that was noted after this process's first request.",
        heldBy: ["tests/deployment/deployment.test.ts", "tests/journal/sim.test.ts (a preview beside an `up` that replaces a Member by a twin's grant; a preview's Diffs after an `up` added a member to a Binding; seed 1, case 7989; seed 34, case 8488; seed 45, case 3776)", "sim"],
    },
    "preview-olds-predate-answers": {
        says: "A preview's olds were read as it began and may predate an answer given since (an `up` beside it): an answered item is neither settled nor forced by them; where the command line is unknown (a Diff not yet shown to be an update's may be a preview's), a Diff's reason for an answered item says it may.",
        heldBy: ["tests/journal/sim.test.ts (a preview beside an `up` whose plugin dies, its Diffs after the up's answers)", "sim"],
    },
    "pending-replacement-holds-nothing": {
        says: "A Diff's olds of a resource whose Delete was answered as a replaced resource's, under a URN the program now declares as another resource (a deleteBeforeReplace replacement not yet recorded), hold nothing: the engine keeps the deleted resource until its replacement is recorded. They are the journal's inference, not the engine's word: they judge no answered item of that Delete.",
        heldBy: ["tests/journal/sim.test.ts (seed 1, case 18275; seed 605198, case 1043; seed 34, case 5387; seed 37, case 4011)", "sim"],
    },
    "live-writer-in-flight": {
        says: "An item whose writer still runs is a write under way, not cut off: no Diff is forced for it.",
        heldBy: ["tests/deployment/deployment.test.ts (a preview beside a live up)", "sim"],
    },
    "diff-forces-program": {
        says: "Where the engine's state and IAM disagree on a grant the resource's Update sets, Diff asks for an update that sets it as the program declares.",
        heldBy: ["tests/deployment/deployment.test.ts (a Binding's update killed after its write)", "tests/e2e/deployment.test.ts", "sim"],
    },
    "held-by-stack": {
        says: "A state that holds a grant settles the additions of that grant journaled for other resources: it is in a state now.",
        heldBy: ["tests/deployment/deployment.test.ts (a grant written for a resource whose Create was cut off, then held by another)", "sim"],
    },
    "removal-held-elsewhere": {
        says: "A removal of a grant another resource's state still holds (its own Delete failed or was cut off) stays open, and that resource's Diff asks for an update that puts it back.",
        heldBy: ["sim"],
    },
    "removal-held-by-none": {
        says: "A removal is said only while some resource's state is known to hold its grant: a Binding's Create that removed a member only another resource held, once that resource's state lacks it, removed nothing the stack holds.",
        heldBy: ["tests/journal/sim.test.ts (one Binding of a role replaced by another, the CLI killed after the new one's write)", "sim"],
    },
    "google-answer": {
        says: "Google's answer to a write of a policy settles the open items of that policy it shows gone (added) or back (removed), of writes that can no longer land.",
        heldBy: ["tests/deployment/deployment.test.ts", "sim"],
    },
    "in-flight-slack": {
        says: "Another process's write may still land until well after its last attempt's deadline, and while its writer runs: until then Google's word says nothing of it, and an answer whose state it would undo does not settle it.",
        heldBy: ["tests/emulator/ops.test.ts", "sim"],
    },
    "etag-moved": {
        says: "A write sent with an etag can no longer land once Google shows the policy with another: Google refuses a write whose etag is not current, and etags do not come back.",
        heldBy: ["sim"],
    },
    "landed-once": {
        says: "A write Google answered has landed, and cannot land again: another process's word on it need not wait out its slack.",
        heldBy: ["sim"],
    },
    "fence-in-flight": {
        says: "An operation that finds the policy unchanged since a dead process's write in flight was sent (the same etag) writes it unchanged, so that write can no longer land and Google's answer settles it.",
        heldBy: ["tests/deployment/deployment.test.ts (a removal still in flight as its plugin dies, the program reverted)", "tests/journal/sim.test.ts (a Delete's removal in flight as the CLI dies, then `pulumi up` of the Member)", "sim"],
    },
    "recorded-at-end": {
        says: "At the end of a process whose engine is still there, had at most one Cancel and no operation under way, every answer given before the stop is recorded: its items settle.",
        heldBy: ["tests/deployment/deployment.test.ts (a clean run's close)", "sim"],
    },
    "ctrl-c-twice": {
        says: "After a second Cancel (Ctrl-C) the engine may record nothing more: no answer of the process settles at its end.",
        heldBy: ["tests/deployment/deployment.test.ts (Ctrl-C twice after the answers)", "tests/e2e/deployment.test.ts", "sim"],
    },
    "answer-after-stop": {
        says: "An answer given once the run is being stopped may find an engine that no longer records it: it is left to the next run's word, and (after one Ctrl-C, not two) what the stack holds gains its grants but loses none; after a second Ctrl-C not even a Delete's answer drops what the resource held.",
        heldBy: ["tests/deployment/deployment.test.ts", "tests/journal/sim.test.ts (one Binding of a role replaced by another, Ctrl-C after the new one's write, then `pulumi up --target` of the old one; a Binding and a Member of one grant, a `destroy` cut off by a second Ctrl-C)", "sim"],
    },
    "preview-read-no-record": {
        says: "What a Read of a preview answered (preview --refresh, --preview-only) is saved nowhere: it records and holds nothing; where the command line is unknown, neither does a Read of a process sent nothing a preview does not send.",
        heldBy: ["tests/deployment/deployment.test.ts (`pulumi refresh --preview-only`)", "tests/journal/sim.test.ts (one Binding of a role replaced by another, the program reverted, `pulumi refresh --preview-only` where the command line is unknown)", "sim"],
    },
    "early-report-unanswered-only": {
        says: "As a run starts, only what the engine surely never recorded is said: an answered item, or an addition another resource's state held, waits for the run's own word.",
        heldBy: ["tests/deployment/deployment.test.ts (an unanswered Create's grant that another resource's state held)", "sim"],
    },
    "partial-run-silent": {
        says: "An item left to its resource's request is not said at the end of a run that may not send every resource (a --target or --exclude run, an import, a preview); a removal is never said so.",
        heldBy: ["tests/deployment/deployment.test.ts (a Create answered after the engine's Cancel, then `pulumi up --target`)", "tests/e2e/deployment.test.ts", "sim"],
    },
    "dead-peer-left-to-its-run": {
        says: "A dead process's file is not taken by a process of another run while a process of its own run still runs: its answers are in that run's hands, which lines carried into another run's file no longer show.",
        heldBy: ["tests/journal/sim.test.ts (a preview beside an `up` whose plugin dies, its Diffs after the up's answers)", "sim"],
    },
    "own-provider-says": {
        says: "What was written through a provider another process of the run serves is that process's to check and say.",
        heldBy: ["tests/deployment/deployment.test.ts (an explicit provider's plugin killed mid-write)", "sim"],
    },
    "google-word-at-report": {
        says: "Before an item is said, a fresh read of its policy with the writer's provider's credentials settles it where it shows the grant gone (added) or back (removed).",
        heldBy: ["tests/deployment/deployment.test.ts", "sim"],
    },
    "delete-leaves-to-holder": {
        says: "A Delete leaves a grant that another resource's state held when last seen, where that resource was not Checked in the run and may stay in the stack.",
        heldBy: ["tests/deployment/deployment.test.ts (`pulumi destroy --target` of one of two Members of one grant)", "sim"],
    },
    "settled-while-reading": {
        says: "An item settled while its policy was being read for the report (an operation of the run put the grant back) is not said: the read is older than that.",
        heldBy: ["sim"],
    },
    "said-once-per-run": {
        says: "An open item is said once per run, and again on every run until it is settled.",
        heldBy: ["tests/deployment/deployment.test.ts", "sim (a note said twice in one run is a violation)"],
    },
} as const satisfies Record<string, { says: string; heldBy: readonly string[] }>;

export type RuleName = keyof typeof RULES;
export const RULE_NAMES = Object.keys(RULES) as RuleName[];

/** Which rules are on, and how often each decided. */
export class Rules {
    readonly reached = new Map<RuleName, number>();

    constructor(readonly off: ReadonlySet<RuleName> = new Set()) {}

    /** Where rule `name` applies: whether it is on (counted as reached either way). */
    fires(name: RuleName): boolean {
        this.reached.set(name, (this.reached.get(name) ?? 0) + 1);
        return !this.off.has(name);
    }
}
