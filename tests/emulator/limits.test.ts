// What Google refuses of Service Management beyond a single request's content: calls past the rate quota
// (429 RESOURCE_EXHAUSTED, as Google's front end answers them) and conditional role bindings, which Service
// Management's resources do not accept (400 INVALID_ARGUMENT), unless the emulator is told to.

import { expect } from "chai";
import { auth as googleAuth, servicemanagement } from "googleapis/build/src/apis/servicemanagement";
import { startEmulator, type Emulator, type Policy } from "../../emulator";
import { apiError, body, call, type Reply } from "./http";

const TOKEN = "limits-token";
const SERVICE = "limits.endpoints.my-project.cloud.goog";
const ROLE = "roles/servicemanagement.serviceConsumer";
const WHEN = { title: "until-2030", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
const QUOTA_MESSAGE = /^Quota exceeded for quota metric 'Default requests' and limit 'Default requests per minute' of service 'servicemanagement\.googleapis\.com' for consumer 'project_number:(\d{12})'\.$/;

/** The project number a quota refusal names (its message and its ErrorInfo must agree), checking its shape. */
function expectQuotaRefusal(r: Reply, limit: number): string {
    expect(r.status, r.text).to.equal(429);
    expect(r.headers["retry-after"], "Google sends no Retry-After with a quota error").to.equal(undefined);
    const error = apiError(r);
    const number = QUOTA_MESSAGE.exec(error.message)?.[1];
    expect(number, error.message).to.be.a("string");
    expect(r.json).to.deep.equal({
        error: {
            code: 429,
            message: error.message,
            status: "RESOURCE_EXHAUSTED",
            details: [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    reason: "RATE_LIMIT_EXCEEDED",
                    domain: "googleapis.com",
                    metadata: {
                        service: "servicemanagement.googleapis.com",
                        consumer: `projects/${number}`,
                        quota_metric: "servicemanagement.googleapis.com/default_requests",
                        quota_limit: "DefaultRequestsPerMinutePerProject",
                        quota_limit_value: String(limit),
                        quota_location: "global",
                    },
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    links: [{ description: "Request a higher quota limit.", url: "https://cloud.google.com/docs/quotas/help/request_increase" }],
                },
            ],
        },
    });
    return number!;
}

/** What a googleapis call failed with: the HTTP status and Google's error as the client parsed it. */
interface ClientFailure {
    status: number;
    cause: { status: string; message: string; details: { "@type": string; reason?: string }[] };
}
function isClientFailure(e: unknown): e is ClientFailure {
    if (typeof e !== "object" || e === null || !("status" in e) || !("cause" in e)) return false;
    const cause = e.cause;
    return typeof e.status === "number" && typeof cause === "object" && cause !== null && "status" in cause && "details" in cause;
}

describe("emulator: limits", function () {
    this.timeout(15_000);

    describe("rate quota", () => {
        const LIMIT = 5;
        let now = 1_000_000;
        let emu: Emulator;
        const post = (path: string, payload: unknown = {}, headers?: Record<string, string>): Promise<Reply> =>
            call("POST", emu.url + path, { token: TOKEN, body: payload, headers });
        const get = (headers?: Record<string, string>): Promise<Reply> => post(`services/${SERVICE}:getIamPolicy`, {}, headers);
        const statuses = async (n: number, headers?: Record<string, string>): Promise<number[]> => {
            const out: number[] = [];
            for (let i = 0; i < n; i++) out.push((await get(headers)).status);
            return out;
        };

        before(async () => {
            emu = await startEmulator({ accessTokens: [TOKEN], quotaPerMinute: LIMIT, quotaClock: () => now });
            emu.createService(SERVICE, "my-project");
        });
        after(() => emu.close());
        beforeEach(() => {
            // Every test starts in a window of its own.
            now += 3_600_000;
            emu.resetRequests();
        });

        it("answers 5 calls of any method, then refuses the 6th with Google's 429 RESOURCE_EXHAUSTED and writes nothing", async () => {
            const before = emu.getPolicy(`services/${SERVICE}`);
            const answered = [
                await call("GET", `${emu.url}services/${SERVICE}`, { token: TOKEN }),
                await call("GET", `${emu.url}services?producerProjectId=my-project`, { token: TOKEN }),
                await post(`services/${SERVICE}:testIamPermissions`, { permissions: ["servicemanagement.services.get"] }),
                await post(`services/${SERVICE}/consumers/consumer-project:getIamPolicy`),
                await get(),
            ];
            expect(answered.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
            const refused = await post(`services/${SERVICE}:setIamPolicy`, { policy: { bindings: [{ role: ROLE, members: ["user:a@example.com"] }] } });
            expectQuotaRefusal(refused, LIMIT);
            expect(emu.getPolicy(`services/${SERVICE}`)).to.deep.equal(before);
            expectQuotaRefusal(await get(), LIMIT);
            // The token endpoint and the admin surface are not API calls: still answered, and they report the count.
            const user = emu.mintAuthorizedUser();
            expect((await call("POST", emu.tokenUrl, { body: { grant_type: "refresh_token", ...user } })).status).to.equal(200);
            expect(emu.quotaRefusals).to.equal(2);
            const log = await call("GET", `${emu.origin}/__emulator/requests`);
            expect(body<{ count: number; quotaRefusals: number }>(log)).to.include({ count: 8, quotaRefusals: 2 });
            expect(emu.requests.filter((r) => r.status === 429)).to.have.length(2);
            emu.resetRequests();
            expect(emu.quotaRefusals).to.equal(0);
        });

        it("setQuota changes the quota from now on, its window empty, and lifts it with undefined", async () => {
            try {
                emu.setQuota(undefined);
                expect(await statuses(LIMIT + 2)).to.deep.equal(Array(LIMIT + 2).fill(200));
                emu.setQuota(2);
                expect(await statuses(3)).to.deep.equal([200, 200, 429]);
            } finally {
                emu.setQuota(LIMIT);
            }
            expect(await statuses(LIMIT + 1)).to.deep.equal([...Array(LIMIT).fill(200), 429]);
        });

        it("does not count refused calls, and frees each call's place 60 s after it was answered (a rolling window)", async () => {
            expect(await statuses(3)).to.deep.equal([200, 200, 200]);
            now += 40_000;
            expect(await statuses(3)).to.deep.equal([200, 200, 429]);
            now += 19_999;
            // 59.999 s after the first three: still inside their window.
            expect(await statuses(4)).to.deep.equal([429, 429, 429, 429]);
            now += 1;
            // The first three have left the window; the five refusals took no place in it.
            expect(await statuses(4)).to.deep.equal([200, 200, 200, 429]);
            now += 40_000;
            // 60 s after the second pair: two places more, and the three just answered still hold theirs.
            expect(await statuses(3)).to.deep.equal([200, 200, 429]);
            expect(emu.quotaRefusals).to.equal(7);
        });

        it("keeps one count per X-Goog-User-Project (one shared without it), and charges only authenticated Service Management calls", async () => {
            const a = { "X-Goog-User-Project": "project-a" };
            const b = { "X-Goog-User-Project": "project-b" };
            expect(await statuses(LIMIT, a)).to.deep.equal([200, 200, 200, 200, 200]);
            const numberA = expectQuotaRefusal(await get(a), LIMIT);
            expect(await statuses(LIMIT, b)).to.deep.equal([200, 200, 200, 200, 200]);
            const numberB = expectQuotaRefusal(await get(b), LIMIT);
            expect(numberB).to.not.equal(numberA);
            expect(await statuses(LIMIT)).to.deep.equal([200, 200, 200, 200, 200]);
            const shared = expectQuotaRefusal(await get(), LIMIT);
            expect(shared).to.not.be.oneOf([numberA, numberB]);
            // A call without valid credentials cannot be charged to a consumer: 401, quota or not.
            const anonymous = await call("POST", `${emu.url}services/${SERVICE}:getIamPolicy`, { headers: a });
            expect(anonymous.status).to.equal(401);
            // IAM Credentials (also under /v1/) is another service with a quota of its own.
            const impersonated = await post("projects/-/serviceAccounts/sa@my-project.iam.gserviceaccount.com:generateAccessToken",
                { scope: ["https://www.googleapis.com/auth/cloud-platform"] });
            expect(impersonated.status, impersonated.text).to.equal(200);
            expect(emu.quotaRefusals).to.equal(3);
        });

        it("reaches a real Google client (googleapis) as a 429 RESOURCE_EXHAUSTED error with Google's details", async () => {
            const auth = new googleAuth.OAuth2();
            auth.setCredentials({ access_token: TOKEN });
            const api = servicemanagement({ version: "v1", auth, rootUrl: `${emu.origin}/` });
            const resource = `services/${SERVICE}`;
            // The client's own retries would only add refusals: off, so the count below is exact.
            for (let i = 0; i < LIMIT; i++) {
                const ok = await api.services.getIamPolicy({ resource, requestBody: {} }, { retry: false });
                expect(ok.status).to.equal(200);
            }
            let failure: unknown;
            try {
                await api.services.getIamPolicy({ resource, requestBody: {} }, { retry: false });
            } catch (e) {
                failure = e;
            }
            if (!isClientFailure(failure)) throw new Error(`expected the client's error for a 429, got ${String(failure)}`);
            expect(failure.status).to.equal(429);
            expect(failure.cause.status).to.equal("RESOURCE_EXHAUSTED");
            expect(failure.cause.message).to.match(QUOTA_MESSAGE);
            expect(failure.cause.details.map((d) => d["@type"])).to.deep.equal([
                "type.googleapis.com/google.rpc.ErrorInfo", "type.googleapis.com/google.rpc.Help",
            ]);
            expect(failure.cause.details[0].reason).to.equal("RATE_LIMIT_EXCEEDED");
            expect(emu.quotaRefusals).to.equal(1);
        });

        it("is off unless asked for, and refuses a quota that is not a whole number ≥ 1", async () => {
            const plain = await startEmulator({ accessTokens: [TOKEN] });
            try {
                plain.createService(SERVICE, "my-project");
                const replies = await Promise.all(Array.from({ length: 130 }, () =>
                    call("POST", `${plain.url}services/${SERVICE}:getIamPolicy`, { token: TOKEN })));
                expect(replies.filter((r) => r.status !== 200)).to.deep.equal([]);
                expect(plain.quotaRefusals).to.equal(0);
            } finally {
                await plain.close();
            }
            for (const bad of [0, -1, 1.5, Number.NaN]) {
                await startEmulator({ quotaPerMinute: bad }).then(
                    async (e) => {
                        await e.close();
                        throw new Error(`quotaPerMinute ${bad} was accepted`);
                    },
                    (e: unknown) => expect(e).to.be.instanceOf(RangeError),
                );
            }
        });
    });

    describe("conditional role bindings", () => {
        let emu: Emulator;
        let n = 0;
        let service = "";
        const set = (parent: string, payload: unknown): Promise<Reply> =>
            call("POST", `${emu.url}${parent}:setIamPolicy`, { token: TOKEN, body: payload });
        const plain = [
            { role: ROLE, members: ["user:a@example.com"] },
            { role: "roles/servicemanagement.reporter", members: ["user:b@example.com"] },
        ];
        const withCondition = [...plain, { role: ROLE, members: ["user:c@example.com"], condition: WHEN }];

        before(async () => {
            emu = await startEmulator({ accessTokens: [TOKEN] });
        });
        after(() => emu.close());
        beforeEach(() => {
            service = `c${++n}.endpoints.my-project.cloud.goog`;
            emu.createService(service, "my-project");
        });

        for (const kind of ["service", "consumer"] as const) {
            it(`are refused by default on a ${kind} with 400 INVALID_ARGUMENT naming the binding, and nothing is written`, async () => {
                const parent = kind === "service" ? `services/${service}` : `services/${service}/consumers/consumer-project`;
                const seeded = emu.setPolicy(parent, { bindings: plain });
                const r = await set(parent, { policy: { version: 3, etag: seeded.etag, bindings: withCondition } });
                const message = `Conditional role bindings are not supported for this resource (${parent}): remove the condition from the binding.`;
                expect(r.json).to.deep.equal({
                    error: {
                        code: 400,
                        message,
                        status: "INVALID_ARGUMENT",
                        details: [{
                            "@type": "type.googleapis.com/google.rpc.BadRequest",
                            fieldViolations: [{ field: "policy.bindings[2].condition", description: message }],
                        }],
                    },
                });
                expect(r.status).to.equal(400);
                // Policy and etag as they were, read back over the API too.
                expect(emu.getPolicy(parent)).to.deep.equal(seeded);
                const read = await call("POST", `${emu.url}${parent}:getIamPolicy`, { token: TOKEN, body: { options: { requestedPolicyVersion: 3 } } });
                expect(body<Policy>(read)).to.deep.equal(seeded);
                // Whatever else the request says (version 1, proto field names, an empty condition), the condition is what is refused.
                const first = await set(parent, { policy: { version: 1, bindings: [{ role: ROLE, members: ["user:d@example.com"], condition: {} }] } });
                expect(first.status).to.equal(400);
                expect(JSON.stringify(apiError(first).details)).to.contain('"field":"policy.bindings[0].condition"');
                expect(emu.getPolicy(parent)).to.deep.equal(seeded);
                // Without the condition the same write goes through.
                expect((await set(parent, { policy: { version: 3, etag: seeded.etag, bindings: plain.slice(0, 1) } })).status).to.equal(200);
            });
        }

        it("are accepted with allowConditions (option, setBehavior or the admin surface), and reads are as before", async () => {
            const parent = `services/${service}`;
            const consumer = `${parent}/consumers/consumer-project`;
            const allowed = await startEmulator({ accessTokens: [TOKEN], allowConditions: true });
            try {
                allowed.createService(service, "my-project");
                const r = await call("POST", `${allowed.url}${consumer}:setIamPolicy`, { token: TOKEN, body: { policy: { version: 3, bindings: withCondition } } });
                expect(r.status, r.text).to.equal(200);
                expect(body<Policy>(r).bindings).to.deep.equal(withCondition);
            } finally {
                await allowed.close();
            }
            emu.setBehavior({ allowConditions: true });
            try {
                expect((await set(parent, { policy: { version: 3, bindings: withCondition } })).status).to.equal(200);
            } finally {
                emu.setBehavior({ allowConditions: false });
            }
            expect((await set(parent, { policy: { version: 3, bindings: withCondition } })).status).to.equal(400);
            // The admin surface refuses a value of the wrong type, as setBehavior does, rather than dropping it.
            const wrong = await call("POST", `${emu.origin}/__emulator/behavior`, { body: { allowConditions: "yes" } });
            expect(wrong.status, wrong.text).to.equal(400);
            expect((await set(parent, { policy: { version: 3, bindings: withCondition } })).status).to.equal(400);
            const admin = await call("POST", `${emu.origin}/__emulator/behavior`, { body: { allowConditions: true } });
            expect(admin.json).to.include({ allowConditions: true });
            try {
                expect((await set(consumer, { policy: { version: 3, bindings: withCondition } })).status).to.equal(200);
            } finally {
                emu.setBehavior({ allowConditions: false });
            }
            // A seed is not a setIamPolicy call: it places conditional bindings even while they are refused.
            const seeded = `services/${service}/consumers/seeded-project`;
            expect(emu.setPolicy(seeded, { bindings: withCondition }).bindings).to.deep.equal(withCondition);
            // Reading is not refused: a conditional policy already stored reads as before at both versions.
            const v3 = await call("POST", `${emu.url}${seeded}:getIamPolicy`, { token: TOKEN, body: { options: { requestedPolicyVersion: 3 } } });
            expect(body<Policy>(v3).bindings).to.deep.equal(withCondition);
            const v1 = await call("POST", `${emu.url}${seeded}:getIamPolicy`, { token: TOKEN, body: {} });
            expect(body<Policy>(v1).bindings![2].role).to.match(/_withcond_[0-9a-f]{20}$/);
        });
    });
});
