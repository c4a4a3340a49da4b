// The API's rate quota as the plugin meets it (provider/iam/quota.ts): what a quota answer says, and how calls
// are paced once one came. A clock of the test's own: sleeping advances it, so a minute passes at once. The same
// pacing through the real plugin and the emulator's quota is in tests/resources/limits.test.ts.

import { expect } from "chai";
import { Pacer, QuotaAnswer, quotaAnswer, QuotaWait } from "../../provider/iam/quota";

/** Google's answer to a call beyond a per-minute quota of `limit` (the shape of its documented quota errors). */
function exhausted(limit?: number, limitName = "DefaultRequestsPerMinutePerProject") {
    return {
        status: "RESOURCE_EXHAUSTED",
        message: "Quota exceeded for quota metric 'Default requests' and limit 'Default requests per minute' of service " +
            "'servicemanagement.googleapis.com' for consumer 'project_number:123456'.",
        details: [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "RATE_LIMIT_EXCEEDED",
            domain: "googleapis.com",
            metadata: {
                service: "servicemanagement.googleapis.com",
                consumer: "projects/123456",
                quota_limit: limitName,
                ...(limit === undefined ? {} : { quota_limit_value: String(limit) }),
            },
        }],
    };
}

class Clock {
    t = 1_000_000;
    sleeps: number[] = [];
    now = () => this.t;
    /** Time passes on the next turn of the event loop, after what the calls before did with the last moment. */
    sleep = (ms: number) => new Promise<boolean>((resolve) => {
        this.sleeps.push(ms);
        setImmediate(() => {
            this.t += ms;
            resolve(true);
        });
    });
}

const never = () => new Error("cancelled");

describe("the API's rate quota", () => {
    it("reads Google's quota answer: the limit, its window and whose quota; any other 429 is not a quota answer", () => {
        expect(quotaAnswer(429, exhausted(120))).to.deep.equal({
            limit: 120, windowMs: 60_000, limitName: "DefaultRequestsPerMinutePerProject", consumer: "projects/123456",
        });
        expect(quotaAnswer(429, exhausted(10_000, "DefaultRequestsPerDayPerProject"))?.windowMs).to.equal(86_400_000);
        // Without the limit's value it is a 429 like any other (a transient refusal, retried on its backoff).
        expect(quotaAnswer(429, exhausted())).to.equal(undefined);
        expect(quotaAnswer(429, { status: "UNAVAILABLE" })).to.equal(undefined);
        expect(quotaAnswer(503, exhausted(120))).to.equal(undefined);
    });

    it("sends calls at once while no quota answer came", async () => {
        const clock = new Clock();
        const pacer = new Pacer(clock.now);
        for (let i = 0; i < 500; i++) (await pacer.admit(clock.t + 1000, clock.sleep, never)).done();
        expect(clock.sleeps).to.deep.equal([]);
    });

    it("after a quota answer, sends at most the limit in any minute, in arrival order, and a refused call waits its turn", async () => {
        const clock = new Clock();
        const pacer = new Pacer(clock.now);
        const deadline = clock.t + 10 * 60_000;
        const answer = quotaAnswer(429, exhausted(3)) as QuotaAnswer;
        const first = [];
        for (let i = 0; i < 4; i++) first.push(await pacer.admit(deadline, clock.sleep, never));
        first[3].refused(answer); // three got through: the fourth is refused, and gives its place back
        first.slice(0, 3).forEach((a) => a.done());
        const sentAt: number[] = [];
        const order: number[] = [];
        await Promise.all([0, 1, 2, 3, 4].map(async (i) => {
            await pacer.admit(deadline, clock.sleep, never);
            sentAt.push(clock.t);
            order.push(i);
        }));
        expect(order).to.deep.equal([0, 1, 2, 3, 4]);
        // Three more once the first three leave the window, two more a minute after those.
        const start = 1_000_000;
        expect(sentAt.slice(0, 3).every((t) => t >= start + 60_000 && t < start + 61_000), JSON.stringify(sentAt.map((t) => t - start))).to.equal(true);
        expect(sentAt.slice(3).every((t) => t >= start + 120_000 && t < start + 122_000), JSON.stringify(sentAt.map((t) => t - start))).to.equal(true);
        expect(pacer.refusals).to.equal(1);
    });

    it("when quota answers come though this process's calls leave room, pauses every call, longer each time", async () => {
        const clock = new Clock();
        const pacer = new Pacer(clock.now);
        const answer = quotaAnswer(429, exhausted(120)) as QuotaAnswer;
        const deadline = clock.t + 600_000;
        (await pacer.admit(deadline, clock.sleep, never)).refused(answer);
        (await pacer.admit(deadline, clock.sleep, never)).refused(answer);
        const ok = await pacer.admit(deadline, clock.sleep, never);
        expect(clock.sleeps.length).to.equal(2);
        expect(clock.sleeps[0]).to.be.within(500, 1000);
        expect(clock.sleeps[1]).to.be.within(1000, 2000);
        ok.done();
    });

    it("a call whose turn would come after its deadline fails at once, saying when its turn would come", async () => {
        const clock = new Clock();
        const pacer = new Pacer(clock.now);
        const answer = quotaAnswer(429, exhausted(1)) as QuotaAnswer;
        (await pacer.admit(clock.t + 1000, clock.sleep, never)).done();
        (await pacer.admit(clock.t + 1000, clock.sleep, never)).refused(answer);
        const failure = await pacer.admit(clock.t + 5000, clock.sleep, never).then(() => undefined, (e: unknown) => e);
        expect(failure).to.be.instanceOf(QuotaWait);
        expect((failure as QuotaWait).turnInMs).to.be.within(59_000, 61_000);
        expect((failure as QuotaWait).quota.consumer).to.equal("projects/123456");
        expect(clock.sleeps).to.deep.equal([]);
        // The failed call took no place: the next one with time enough is sent when the window has room.
        await pacer.admit(clock.t + 120_000, clock.sleep, never);
        expect(clock.sleeps.length).to.equal(1);
    });

    it("a cancelled wait ends at once with the caller's error, and the calls after it keep their turn", async () => {
        const clock = new Clock();
        const pacer = new Pacer(clock.now);
        (await pacer.admit(clock.t + 1000, clock.sleep, never)).done();
        (await pacer.admit(clock.t + 1000, clock.sleep, never)).refused(quotaAnswer(429, exhausted(1)) as QuotaAnswer);
        const stop = new Error("stopped");
        const failure = await pacer.admit(clock.t + 120_000, async () => false, () => stop).then(() => undefined, (e: unknown) => e);
        expect(failure).to.equal(stop);
        await pacer.admit(clock.t + 120_000, clock.sleep, never);
        expect(clock.sleeps.length).to.equal(1);
    });
});
