// The rules of one policy's life (provider/iam/parentPolicy.ts), one test per rule, against an in-memory API
// that holds a policy and an etag as Google does. The same rules through the real plugin and the emulator are
// covered by tests/resources/batching.test.ts and tests/resources/concurrency.test.ts (storms of concurrent
// changes); these pin each transition.

import { expect } from "chai";
import { Code, IamError, OutOfTime } from "../../provider/iam/errors";
import { Batching, Pace, ParentPolicy, PolicyApi, SNAPSHOT_MS, stands } from "../../provider/iam/parentPolicy";
import { Policy } from "../../provider/iam/policy";

const ROLE = "roles/servicemanagement.serviceConsumer";

/** A policy store with etags, recording calls; the next writes can be refused (`refuse`). */
class FakeApi implements PolicyApi {
    policy: Policy = { etag: "e0" };
    serial = 0;
    calls: string[] = [];
    /** Reads answered from `stale`. */
    staleReads = 0;
    warnings: string[] = [];
    /** Answers for the next writes, in order: an error to throw instead of writing. */
    refuse: IamError[] = [];
    /** Reads answer this policy instead of the stored one (IAM's propagation delay), while set. */
    stale?: Policy;
    /** The work ParentPolicy tracked (the confirmations of its writes). */
    inFlight: Promise<unknown>[] = [];
    private tracked?: () => void;
    requestTimeoutMs = 5000;
    requestTimeoutSetting = "cloud:requestTimeout";
    /** The config's default (`batching` unset). */
    batching: Batching = { enabled: true, sendAfterMs: 40 };
    /** When the quota admits the next call (ms since the epoch; 0: now). */
    quotaAt = 0;
    /** The fetcher's pace across its policies, when several share one (see `spread`). */
    pace?: Pace;
    /** Calls sent and not answered yet, across every FakeApi that shares this counter. */
    busy = { calls: 0 };
    quotaWaitMs(): number {
        return Math.max(0, this.quotaAt - Date.now());
    }
    private reading = new AbortController();
    private waiting = new AbortController();

    get signals() {
        return { reading: this.reading.signal, waiting: this.waiting.signal };
    }

    cancel(): void {
        this.reading.abort();
        this.waiting.abort();
        this.reading = new AbortController();
        this.waiting = new AbortController();
    }

    async read(): Promise<Policy> {
        this.calls.push("read");
        this.busy.calls++;
        await tick().finally(() => this.busy.calls--);
        if (this.stale) this.staleReads++;
        return structuredClone(this.stale ?? this.policy);
    }

    async write(_parent: unknown, policy: Policy): Promise<Policy> {
        this.calls.push(`write@${policy.etag}`);
        this.busy.calls++;
        await tick().finally(() => this.busy.calls--);
        const refusal = this.refuse.shift();
        if (refusal) throw refusal;
        if (policy.etag !== this.policy.etag) throw new IamError("stale etag", 409, Code.ABORTED);
        this.policy = { ...structuredClone(policy), etag: `e${++this.serial}` };
        return structuredClone(this.policy);
    }

    track(work: Promise<unknown>): void {
        this.inFlight.push(work);
        this.tracked?.();
    }

    /**
     * Waits for a confirmation to be started (ParentPolicy starts the read-back of its last write once the changes
     * stop), then for all the work tracked so far.
     */
    async confirmed(): Promise<void> {
        if (this.inFlight.length === 0) await new Promise<void>((resolve) => (this.tracked = resolve));
        await Promise.all(this.inFlight);
    }

    warn(message: string): void {
        this.warnings.push(message);
    }
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A change adding `member` to ROLE (none when there), and the check that shows it. */
const add = (member: string) => (p: Policy): Policy | undefined => {
    const b = (p.bindings ?? []).find((x) => x.role === ROLE);
    if (b?.members.includes(member)) return undefined;
    const others = (p.bindings ?? []).filter((x) => x.role !== ROLE);
    return { ...p, bindings: [...others, { role: ROLE, members: [...(b?.members ?? []), member] }] };
};
const has = (member: string) => (p: Policy) => (p.bindings ?? []).some((b) => b.role === ROLE && b.members.includes(member));

describe("one policy's life (ParentPolicy)", function () {
    this.timeout(20_000);
    let api: FakeApi;
    let pp: ParentPolicy;
    beforeEach(() => {
        api = new FakeApi();
        pp = new ParentPolicy({ kind: "service", serviceName: "s.endpoints.p.cloud.goog" }, api);
    });
    const members = () => (api.policy.bindings ?? []).flatMap((b) => b.members).sort();

    it("join: a change is answered with Google's answer to its write, before that write is confirmed", async () => {
        const answer = await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        expect(answer.etag).to.equal("e1");
        expect(api.calls).to.deep.equal(["read", "write@e0"]); // no read-back yet
    });

    it("gather: changes that arrive together share one read and one write", async () => {
        await Promise.all(["a", "b", "c"].map((m) => pp.change(add(`user:${m}@x.com`))));
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
        expect(members()).to.deep.equal(["user:a@x.com", "user:b@x.com", "user:c@x.com"]);
    });

    it("cycle: the next cycle starts from the last answer (no read), and its write confirms the one before", async () => {
        await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        await pp.change(add("user:b@x.com"), { confirm: has("user:b@x.com") });
        expect(api.calls).to.deep.equal(["read", "write@e0", "write@e1"]);
        await api.confirmed(); // the changes stop (gathering gives up): only the last write is read back
        expect(api.calls).to.deep.equal(["read", "write@e0", "write@e1", "read"]);
    });

    it("cycle: a 409 redoes the whole batch from a fresh read", async () => {
        api.policy = { etag: "e0", bindings: [{ role: "roles/viewer", members: ["user:v@x.com"] }] };
        api.refuse = [new IamError("another writer got in first", 409, Code.ABORTED)];
        await pp.change(add("user:a@x.com"));
        expect(api.calls).to.deep.equal(["read", "write@e0", "read", "write@e0"]);
        expect(members()).to.deep.equal(["user:a@x.com", "user:v@x.com"]);
    });

    it("cycle: a 400 on a batch is narrowed down by halves, so only the refused change fails", async () => {
        api.refuse = [new IamError("bad", 400, Code.INVALID_ARGUMENT), new IamError("bad", 400, Code.INVALID_ARGUMENT)];
        const results = await Promise.allSettled(["a", "b"].map((m) => pp.change(add(`user:${m}@x.com`))));
        // The batch of two is refused, then its first half alone; the second half is written.
        expect(results.map((r) => r.status)).to.deep.equal(["rejected", "fulfilled"]);
        expect(members()).to.deep.equal(["user:b@x.com"]);
    });

    it("confirm: a read that comes while a write is unconfirmed waits for the read that shows it", async () => {
        api.stale = { etag: "e0" };
        await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        const staleBefore = api.staleReads;
        const read = pp.read();
        while (api.staleReads === staleBefore) await tick(); // a read of the confirmation has not shown it
        api.stale = undefined; // propagated
        const policy = await read;
        expect(has("user:a@x.com")(policy)).to.equal(true);
        // After the write: the read that did not show it, then the one that did.
        expect(api.calls.slice(api.calls.indexOf("write@e0") + 1)).to.deep.equal(["read", "read"]);
    });

    it("confirm: when no read shows the write, the user is warned and reads give what Google holds", async () => {
        await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        api.stale = { etag: "e9" }; // another writer replaced it
        const policy = await pp.read();
        expect(policy.etag).to.equal("e9");
        expect(api.warnings.join("\n")).to.contain("do not show the change");
    });

    it("read: concurrent reads share one call; a fresh read does not", async () => {
        await Promise.all([pp.read(), pp.read(), pp.read()]);
        expect(api.calls).to.deep.equal(["read"]);
        await Promise.all([pp.read(), pp.read({ fresh: true })]);
        expect(api.calls).to.deep.equal(["read", "read", "read"]);
    });

    it("refresh: Reads share one read, in flight or answered, until a write of this process ends", async () => {
        await Promise.all([pp.refresh(), pp.refresh()]);
        await pp.refresh(); // after the read was answered: still the command's read
        expect(api.calls).to.deep.equal(["read"]);
        await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        const after = await pp.refresh(); // the write's confirming read, which the next Reads share
        expect(has("user:a@x.com")(after)).to.equal(true);
        await pp.refresh();
        expect(api.calls).to.deep.equal(["read", "read", "write@e0", "read"]);
    });

    it("refresh: a Read that comes while a write is in flight waits for it, and gets the read that shows it", async () => {
        await pp.refresh();
        const change = pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        while (!api.calls.includes("write@e0")) await sleep(1);
        const during = await pp.refresh();
        expect(has("user:a@x.com")(during)).to.equal(true);
        await change;
        // The write's own read-back answered it: no read of the snapshot's own went out after the write.
        expect(api.calls.slice(api.calls.indexOf("write@e0") + 1)).to.deep.equal(["read"]);
    });

    it("refresh: a snapshot stands while in flight and for SNAPSHOT_MS after its answer; then a Read reads again", () => {
        const read = Promise.resolve<Policy>({});
        expect(stands({ read, members: 0 }, 1e12)).to.equal(true);
        expect(stands({ read, members: 0, answeredAt: 1000 }, 1000 + SNAPSHOT_MS)).to.equal(true);
        expect(stands({ read, members: 0, answeredAt: 1000 }, 1001 + SNAPSHOT_MS)).to.equal(false);
    });

    it("refresh: once the Reads are answered the policy has no work under way; its snapshot is kept only while it stands", async () => {
        api.policy = { etag: "e0", bindings: [{ role: ROLE, members: ["user:a@x.com", "user:b@x.com"] }] };
        const read = pp.refresh();
        expect(pp.idle, "a read in flight").to.equal(false);
        await read;
        expect(pp.idle).to.equal(true);
        const kept = pp.kept();
        expect(kept?.members).to.equal(2);
        expect(pp.kept(kept!.until + 1), "past its time").to.equal(undefined);
        await pp.refresh();
        expect(api.calls, "the snapshot dropped: the next Read reads").to.deep.equal(["read", "read"]);
    });

    it("refresh: a Read that joined a read out of time (its Retry-After past its deadline) retries when it says, within its own", async () => {
        api.requestTimeoutMs = 300;
        const read = api.read.bind(api);
        const started = Date.now();
        let retried = 0;
        Object.assign(api, {
            read: async () => {
                if (api.calls.length === 0) {
                    api.calls.push("read");
                    await sleep(250);
                    // The call's next attempt would go after the first Read's deadline.
                    throw new OutOfTime(new IamError("did not succeed within the request timeout", 503, Code.DEADLINE_EXCEEDED), started + 300, started + 320);
                }
                retried = Date.now() - started;
                return read();
            },
        });
        const first = pp.refresh().then(() => "answered", (e: Error) => e.message);
        await sleep(100);
        const late = await pp.refresh(); // its deadline: 400 ms after the start
        expect(await first).to.contain("did not succeed within the request timeout");
        expect(late.etag).to.equal("e0");
        expect(retried, "the retry waited for the time the call gave").to.be.at.least(315).and.below(400);
        expect(api.calls).to.deep.equal(["read", "read"]);
    });

    it("refresh: after a confirmation that gave up, a read that does not show the write is no snapshot; one that shows it is", async () => {
        await pp.change(add("user:a@x.com"), { confirm: has("user:a@x.com") });
        api.stale = { etag: "e0" }; // IAM's reads lag longer than the confirmation's re-reads
        const during = await pp.refresh(); // waits for the confirmation, which gives up; then asks again
        expect(has("user:a@x.com")(during)).to.equal(false);
        expect(api.warnings.join("\n")).to.contain("do not show the change");
        const reads = api.calls.length;
        api.stale = undefined; // propagated
        expect(has("user:a@x.com")(await pp.refresh()), "the next Read asks again").to.equal(true);
        await pp.refresh();
        expect(api.calls.length, "and the read that showed it is shared").to.equal(reads + 1);
    });

    it("cancel: changes still gathering fail as cancelled and nothing is written", async () => {
        const change = pp.change(add("user:a@x.com"));
        api.cancel();
        const err = await change.then(() => undefined, (e: unknown) => e);
        expect(err).to.be.instanceOf(IamError);
        expect((err as IamError).code).to.equal(Code.CANCELLED);
        await sleep(20);
        expect(api.calls.filter((c) => c.startsWith("write"))).to.deep.equal([]);
    });

    it("cancel: the backoff after a 409 stops at once", async () => {
        api.refuse = [new IamError("stale", 409, Code.ABORTED)];
        const started = Date.now();
        const change = pp.change(add("user:a@x.com"));
        // Written and refused: then in its backoff (≥ 500 ms).
        while (!api.calls.includes("write@e0")) await sleep(5);
        await sleep(20);
        api.cancel();
        const err = await change.then(() => undefined, (e: unknown) => e);
        expect((err as IamError).code).to.equal(Code.CANCELLED);
        expect(Date.now() - started).to.be.below(400);
    });

    it("join: a change that waits out its request timeout says whether other changes held it up", async () => {
        api.requestTimeoutMs = 1;
        const alone = await pp.change(add("user:a@x.com")).then(() => "", (e: Error) => e.message);
        expect(alone).to.contain("ran out before the change").and.contain("cloud:requestTimeout").and.not.contain("busy");
    });

    it("gather: the window is batching.sendAfter; nothing is written before it ends, and the read runs meanwhile", async () => {
        api.batching = { enabled: true, sendAfterMs: 200 };
        const started = Date.now();
        const changes = ["a", "b"].map((m) => pp.change(add(`user:${m}@x.com`)));
        await sleep(120);
        expect(api.calls).to.deep.equal(["read"]);
        await Promise.all(changes);
        expect(Date.now() - started).to.be.at.least(200);
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
    });

    it("cycle: the first cycle's read runs while the batch gathers, so a window as long as a read costs no time", async () => {
        // Reads and writes take 100 ms each: the window of 100 ms overlaps the read.
        api.batching = { enabled: true, sendAfterMs: 100 };
        const slow = <T>(call: () => Promise<T>) => sleep(95).then(call);
        const read = api.read.bind(api);
        const write = api.write.bind(api);
        Object.assign(api, { read: () => slow(read), write: (parent: unknown, policy: Policy) => slow(() => write(parent, policy)) });
        const started = Date.now();
        await Promise.all(["a", "b"].map((m) => pp.change(add(`user:${m}@x.com`))));
        const elapsed = Date.now() - started;
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
        // Window, read and write one after the other would take 300 ms.
        expect(elapsed).to.be.below(280);
    });

    it("cycle: a write refused (409) on the read begun while gathering reads again", async () => {
        api.batching = { enabled: true, sendAfterMs: 100 };
        const change = pp.change(add("user:a@x.com"));
        while (api.calls.length === 0) await sleep(1);
        await sleep(30); // the read answered (5 ms), the window not over
        // Another writer changes the policy after the read, while the batch still gathers.
        api.policy = { etag: "other", bindings: [{ role: "roles/viewer", members: ["user:b@x.com"] }] };
        await change;
        expect(api.calls).to.deep.equal(["read", "write@e0", "read", "write@other"]);
        expect((api.policy.bindings ?? []).map((b) => b.role).sort()).to.deep.equal([ROLE, "roles/viewer"]);
    });

    it("gather: sleeps until an arrival or the rules' next moment, never polls (a long wait costs no CPU)", async () => {
        api.batching = { enabled: true, sendAfterMs: 600 };
        const real = globalThis.setTimeout;
        let timers = 0;
        globalThis.setTimeout = Object.assign((...args: Parameters<typeof real>) => (timers++, real(...args)), real);
        try {
            const first = pp.change(add("user:a@x.com"));
            await sleep(300);
            const second = pp.change(add("user:b@x.com"));
            while (api.calls.length === 0) await new Promise((r) => setImmediate(r));
            // Each change's request timeout, the sleep above, a sleep per arrival and one more when a timer fires
            // a millisecond before the wall clock says: a handful, not one every few milliseconds (60 here).
            expect(timers, "timers set while gathering for 600 ms").to.be.at.most(12);
            await Promise.all([first, second]);
        } finally {
            globalThis.setTimeout = real;
        }
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
    });

    /**
     * The engine as it runs a large stack: `parallel` workers, each saving its checkpoint before and after every
     * step under one lock (`saveMs` each), so changes trickle in one at a time at its pace.
     */
    async function engineSends(n: number, parallel: number, saveMs: number, send: (i: number) => Promise<unknown>): Promise<void> {
        let lock: Promise<unknown> = Promise.resolve();
        const save = () => (lock = lock.then(() => sleep(saveMs)));
        let next = 0;
        await Promise.all(Array.from({ length: parallel }, async () => {
            while (next < n) {
                const i = next++;
                await save();
                await send(i);
                await save();
            }
        }));
    }

    for (const saveMs of [15, 60]) {
        it(`gather: changes that trickle in at the engine's pace (8 workers, ${saveMs} ms per checkpoint) share writes near the floor of one per 8`, async () => {
            await engineSends(80, 8, saveMs, (i) => pp.change(add(`user:m${i}@x.com`)));
            await api.confirmed();
            const writes = api.calls.filter((c) => c.startsWith("write")).length;
            const reads = api.calls.filter((c) => c === "read").length;
            expect(members()).to.have.length(80);
            expect(writes, api.calls.join(" ")).to.be.at.most(15); // 1.5 x 80 / 8
            // One read to start and one to confirm the last write, and a loop that ended while the pace was learned.
            expect(reads, api.calls.join(" ")).to.be.at.most(4);
        });
    }

    it("gather: with the engine's slots spread over 4 policies, a policy goes once every slot waits (not after its own pause)", async () => {
        // The fetcher's one Pace, shared by four policies; `busy` counts calls in flight across them.
        const pace = new Pace();
        const busy = { calls: 0 };
        const apis = Array.from({ length: 4 }, () => Object.assign(new FakeApi(), { pace, busy }));
        const pps = apis.map((a, k) => new ParentPolicy({ kind: "service", serviceName: `s${k}.endpoints.p.cloud.goog` }, a));
        // The time every one of the engine's 8 slots held a change while no call was in flight: the engine
        // could send nothing and the plugin was not writing.
        let outstanding = 0;
        let stalled = 0;
        let since: number | undefined;
        const watch = setInterval(() => {
            const stuck = outstanding === 8 && busy.calls === 0;
            if (stuck && since === undefined) since = Date.now();
            if (!stuck && since !== undefined) (stalled += Date.now() - since), (since = undefined);
        }, 1);
        const started = Date.now();
        await engineSends(160, 8, 15, async (i) => {
            outstanding++;
            await pps[i % 4].change(add(`user:m${i}@x.com`)).finally(() => outstanding--);
        });
        clearInterval(watch);
        const elapsed = Date.now() - started;
        await Promise.all(apis.map((a) => a.confirmed()));
        for (const a of apis) expect((a.policy.bindings ?? [])[0].members).to.have.length(40);
        const writes = apis.reduce((n, a) => n + a.calls.filter((c) => c.startsWith("write")).length, 0);
        console.log(`      stalled ${stalled} of ${elapsed} ms, ${writes} writes`);
        // Each write costs the fake API 5 ms; the engine's checkpoints alone take 160 x 30 ms.
        expect(stalled / elapsed, `stalled ${stalled} of ${elapsed} ms`).to.be.below(0.15);
    });

    it("gather: a first burst still arriving is not taken for all the engine's slots (a hiccup past the window does not split it)", async () => {
        // The fetcher's Pace (as the plugin has): while a burst is still rising, every arrival sets a new most
        // outstanding, so "as many as were ever outstanding" holds at each one and says nothing yet.
        pp = new ParentPolicy({ kind: "service", serviceName: "s.endpoints.p.cloud.goog" }, Object.assign(api, { pace: new Pace() }));
        const changes: Promise<Policy>[] = [];
        for (let i = 0; i < 40; i++) {
            changes.push(pp.change(add(`user:m${i}@x.com`)));
            // About 1 ms apart (timers may be later), with one pause of 15 ms after the 40 ms window.
            await sleep(i === 30 ? 15 : 1);
        }
        await Promise.all(changes);
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
        expect(members()).to.have.length(40);
    });

    it("gather: a cycle that waits for the quota's turn takes the changes that come meanwhile", async () => {
        api.quotaAt = Date.now() + 400;
        const changes = [pp.change(add("user:a@x.com"))];
        await sleep(150);
        changes.push(pp.change(add("user:b@x.com")));
        await sleep(150);
        changes.push(pp.change(add("user:c@x.com")));
        await Promise.all(changes);
        expect(api.calls).to.deep.equal(["read", "write@e0"]);
        expect(members()).to.deep.equal(["user:a@x.com", "user:b@x.com", "user:c@x.com"]);
    });

    describe("with batching disabled (enableBatching: false)", () => {
        beforeEach(() => {
            api.batching = { enabled: false, sendAfterMs: 40 };
        });

        it("gather: changes that arrive together each get a read and a write of their own, in arrival order", async () => {
            const answers = await Promise.all(["a", "b", "c"].map((m) => pp.change(add(`user:${m}@x.com`), { confirm: has(`user:${m}@x.com`) })));
            // Each caller gets Google's answer to its own write.
            expect(answers.map((a) => a.etag)).to.deep.equal(["e1", "e2", "e3"]);
            expect(api.calls).to.deep.equal(["read", "write@e0", "read", "write@e1", "read", "write@e2"]);
            // Applied one after another in arrival order: the binding lists them as they came.
            expect(api.policy.bindings).to.deep.equal([{ role: ROLE, members: ["user:a@x.com", "user:b@x.com", "user:c@x.com"] }]);
            // Each write was accepted on the etag of the one before, which confirms it: only the last is read back.
            await api.confirmed();
            expect(api.calls.slice(6)).to.deep.equal(["read"]);
        });

        it("gather: there is no window; the read starts at once", async () => {
            const change = pp.change(add("user:a@x.com"));
            await sleep(1);
            expect(api.calls).to.deep.equal(["read"]);
            await change;
        });

        it("cycle: the next change reads for itself instead of starting from the last answer", async () => {
            await pp.change(add("user:a@x.com"));
            await pp.change(add("user:b@x.com"));
            expect(api.calls.slice(0, 4)).to.deep.equal(["read", "write@e0", "read", "write@e1"]);
            expect(members()).to.deep.equal(["user:a@x.com", "user:b@x.com"]);
        });

        it("cancel: changes not yet written fail as cancelled; the one being written completes", async () => {
            const results = Promise.allSettled(["a", "b", "c"].map((m) => pp.change(add(`user:${m}@x.com`))));
            while (!api.calls.includes("write@e0")) await sleep(1);
            api.cancel();
            const settled = await results;
            expect(settled.map((r) => r.status)).to.deep.equal(["fulfilled", "rejected", "rejected"]);
            const errors = settled.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
            expect(errors.every((e) => e instanceof IamError && e.code === Code.CANCELLED)).to.equal(true);
            expect(members()).to.deep.equal(["user:a@x.com"]);
        });
    });
});
