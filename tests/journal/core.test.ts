// The journal's decision core alone, as raft's interaction tests drive theirs: no shell, no storage, no clock. Each
// test tells the core what the world shows, takes one step at a time, and reads the actions it returns as a
// transcript, one line per action, that a person can review.

import { expect } from "chai";
import type { Grant } from "../../provider/iam/grants";
import type { Parent } from "../../provider/iam/names";
import type { Policy } from "../../provider/iam/policy";
import type { Claim } from "../../provider/resources/resource";
import { Action, Journal, Operation, PeerView, Writer } from "../../provider/journal/journal";
import { JournalShell } from "../../provider/deployment/shell";
import { Line, providerKey } from "../../provider/journal/knowledge";
import { World as SimWorld } from "../../sim/machine";

const STACK = "urn:pulumi:dev::p";
const PROVIDER = `${STACK}::pulumi:providers:cloud::default_8_38_0`;
const urn = (name: string) => `${STACK}::cloud:endpoints/serviceIamMember:ServiceIamMember::${name}`;
const parent: Parent = { kind: "service", serviceName: "a.endpoints.example.goog" };
const ann: Grant = { role: "roles/viewer", member: "user:ann@example.com" };
const claim: Claim = { parent: "services/a.endpoints.example.goog", scope: "member", grants: [ann], role: ann.role };
const empty: Policy = { bindings: [] };
const withAnn: Policy = { bindings: [{ role: ann.role, members: [ann.member] }] };
const self: Writer = { id: "p1", pid: 1, host: "h" };
const dead: Writer = { id: "p0", pid: 0, host: "h" };

/** One action, for a person. */
function show(a: Action): string {
    const short = (u: string) => u.slice(u.lastIndexOf("::") + 2);
    const items = (keys: string[]) => keys.map((k) => k.split("|").slice(0, 2).join(" ")).join(", ");
    const line = (l: Line): string => {
        switch (l.op) {
            case "wrote": return `wrote ${l.id} ${short(l.urn)} ${[...l.added.map((g) => `+${g.member}`), ...l.removed.map((g) => `-${g.member}`)].join(" ")}`;
            case "holds": return `holds ${short(l.urn)} ${l.claim ? l.claim.grants.map((g) => g.member).join(" ") : "nothing"}`;
            case "answered": case "settled": return `${l.op} ${items(l.items)}`;
            case "said": return `said ${items(l.items)}`;
            case "declare": case "deleting": return `${l.op} ${short(l.urn)}`;
            case "serves": return `serves ${short(l.provider.slice(0, l.provider.indexOf("|")))}`;
            default: return l.op;
        }
    };
    switch (a.kind) {
        case "append": return `append${a.durable ? " (kept now)" : ""}: ${line(a.line)}`;
        case "take": return `take ${a.file}, carrying: ${a.carry.map(line).join("; ")}`;
        case "close": return `close${a.remove ? ", removing the file" : ", keeping the file"}`;
        case "warn": case "debug": return `${a.kind}: ${a.message.split("\n").map((l) => l.slice(0, 90)).join(" / ")}`;
    }
}

/** The actions a step queued, shown. */
function ready(j: Journal): string[] {
    const out: string[] = [];
    for (let a = j.next(); a; a = j.next()) out.push(show(a));
    return out;
}

function core(peers: PeerView[] = [], command = {}): Journal {
    const j = new Journal(self, (t) => t.length.toString(16).padStart(8, "0"));
    j.observe({ now: 1000, peers });
    j.provider(PROVIDER, "");
    j.told(command);
    j.attach({ run: "r1", where: "memory" });
    return j;
}

describe("the journal's decision core, step by step", () => {
    it("a Create: its line is journaled before the write; its answer names the item; the run's end settles it, kept now", () => {
        const j = core();
        expect(ready(j)).to.deep.equal(["append: serves default"]);
        expect(j.earlyReportDue(), "the early report is due once").to.equal(true);
        expect(j.reportPlan(true), "nothing open: nothing to read").to.equal(undefined);
        j.declare(urn("a"), claim);
        expect(ready(j)).to.deep.equal(["append: declare a"]);
        const op: Operation = { urn: urn("a"), kind: "create", preview: false };
        const begun = j.begin(op);
        expect(ready(j)).to.deep.equal([]);
        const id = j.wrote(op.urn, undefined, parent, empty, withAnn, 31_000);
        expect(id).to.equal("p1:1");
        expect(ready(j)).to.deep.equal(["append: wrote p1:1 a +user:ann@example.com"]);
        j.landed(parent, id, withAnn);
        expect(ready(j), "that it landed, for the other processes (it cannot land again)").to.deep.equal(["append: landed"]);
        j.answered(op, begun, { gone: false, claim });
        expect(ready(j)).to.deep.equal(["append: holds a user:ann@example.com", "append: answered p1:1 +"]);
        expect(j.endOfRun(), "whether the engine is still there decides").to.equal(true);
        j.engineThere(true);
        expect(ready(j)).to.deep.equal(["append (kept now): settled p1:1 +"]);
        j.close();
        expect(ready(j), "what the stack holds stays for the next run").to.deep.equal(["append: closed", "close, keeping the file"]);
    });

    it("the same run's end, with the engine gone: nothing is settled, and the item stays open for the next run", () => {
        const j = core();
        ready(j);
        const op: Operation = { urn: urn("a"), kind: "create", preview: false };
        const begun = j.begin(op);
        j.wrote(op.urn, undefined, parent, empty, withAnn, 31_000);
        j.answered(op, begun, { gone: false, claim });
        ready(j);
        expect(j.endOfRun()).to.equal(true);
        j.engineThere(false);
        expect(ready(j)).to.deep.equal([]);
    });

    it("a dead process's open write is carried over, checked against Google, and said with the command that resolves it", () => {
        const lines: Line[] = [
            { op: "hello", writer: dead, run: "r0" },
            { op: "serves", provider: providerKey(`${PROVIDER}|`) },
            { op: "wrote", n: 1, id: "p0:1", urn: urn("a"), parent, provider: providerKey(`${PROVIDER}|`), added: [ann], removed: [], until: 500 },
        ];
        const peer: PeerView = { file: "p0.jsonl", writer: dead, lines, touched: 500, alive: false };
        const j = core([peer]);
        expect(ready(j)).to.deep.equal(["append: serves default", "take p0.jsonl, carrying: wrote p0:1 a +user:ann@example.com"]);
        j.took("p0.jsonl", true);
        j.observe({ now: 200_000, peers: [] });
        expect(j.earlyReportDue()).to.equal(true);
        const plan = j.reportPlan(true);
        expect(plan?.groups.map((g) => ({ parent: g.read.parent, ask: g.read.ask, items: g.items.length }))).to.deep.equal([{ parent, ask: true, items: 1 }]);
        expect(j.endOfRun(), "a report under way: the end records nothing").to.equal(false);
        j.reported(plan!, [{ policy: withAnn }]);
        const out = ready(j);
        expect(out).to.have.length(2);
        expect(out[0]).to.match(/^warn: what earlier runs of this stack left unrecorded/);
        expect(out[0]).to.include("roles/viewer user:ann@example.com on services/a.endpoints.example.goog was written for");
        expect(out[1]).to.equal("append: said p0:1 +");
        // Google's word settles it instead: a read that shows the grant gone.
        const k = core([peer]);
        ready(k);
        k.took("p0.jsonl", true);
        k.observe({ now: 200_000, peers: [] });
        k.earlyReportDue();
        k.reported(k.reportPlan(true)!, [{ policy: empty }]);
        expect(ready(k)).to.deep.equal(["append: settled p0:1 +"]);
    });

    it("a dead process another process took first: nothing it carried is this process's", () => {
        const peer: PeerView = { file: "p0.jsonl", writer: dead, touched: 500, alive: false, lines: [
            { op: "hello", writer: dead, run: "r0" },
            { op: "wrote", n: 1, id: "p0:1", urn: urn("a"), parent, provider: "x|", added: [ann], removed: [], until: 500 },
        ] };
        const j = core([peer]);
        ready(j);
        j.took("p0.jsonl", false);
        j.close();
        expect(ready(j), "it holds nothing another process needs").to.deep.equal(["append: closed", "close, removing the file"]);
    });

    it("the storage refuses a line: the step's later lines are dropped, the store is closed and the user told once", () => {
        const j = core();
        ready(j);
        j.declare(urn("a"), claim);
        j.declare(urn("b"), { ...claim });
        expect(j.next()?.kind).to.equal("append");
        j.storageFailed("writing failed (ENOSPC)");
        const out = ready(j);
        expect(out[0]).to.equal("close, keeping the file");
        expect(out[1]).to.match(/^warn: the plugin cannot keep its crash journal in memory: writing failed \(ENOSPC\)/);
        expect(out).to.have.length(2);
        j.storageFailed("writing failed (ENOSPC)");
        j.declare(urn("c"), claim);
        expect(ready(j), "said once; nothing more is asked of the store").to.deep.equal([]);
        expect(j.keeping).to.equal(false);
    });

    it("two Members of one grant, the command line unknown: a Delete of one leaves the grant to the other, which the stack holds", () => {
        const j = core([], {});
        ready(j);
        // An earlier run's file says what the stack holds: both twins.
        const earlier: PeerView = { file: "p0.jsonl", writer: dead, touched: 500, alive: true, lines: [
            { op: "hello", writer: dead, run: "r0" },
            { op: "holds", urn: urn("a"), claim, at: 400 },
            { op: "holds", urn: urn("b"), claim, at: 400 },
        ] };
        j.observe({ now: 2000, peers: [earlier] });
        const op: Operation = { urn: urn("a"), kind: "delete", preview: false, held: claim };
        j.begin(op);
        expect(j.kept(claim.parent, op.urn).declaredBy(JSON.stringify([ann.role, ann.member, null]))).to.equal(urn("b"));
        expect(ready(j)).to.deep.equal(["append: deleting a"]);
    });

    it("the shell reads the CLI's command line only where a decision may need it: not for a run of lookups alone", async () => {
        let reads = 0;
        const world = new SimWorld();
        const shell = new JournalShell(world.spawn("cli").host(), { warn: () => undefined, debug: () => undefined }, () => undefined,
            () => (reads++, { previewsFirst: true }));
        // Configure names the provider's URN: the stack's journal opens, nothing is open, nothing needs the command.
        shell.attach(PROVIDER);
        shell.provider(PROVIDER, "");
        await shell.finish(async () => true, 100);
        expect(reads, "a run of lookups alone (reading it may start a process: macOS `ps`)").to.equal(0);
        shell.declare(urn("a"), claim);
        shell.state(urn("a"), claim, claim);
        expect(reads, "read at the first resource request, once").to.equal(1);
        shell.close();
    });
});
