// Google Cloud Storage's JSON API, as much as the crash journal needs: list by prefix, read, create (optionally only
// where nothing is: `ifGenerationMatch=0`), delete. The journal's store is synchronous where it must be (what dead
// processes left is read, and taken, before the first resource request is answered), so requests run in a worker
// thread and the caller may wait for their answer (Atomics.wait), or not. Requests of the `log` lane are sent one
// after the other, in the order they were asked for, and once one fails for good the lane sends nothing more: a
// reader never finds a record after one that is missing. Retries (429, 5xx, network) stay within a budget.
//
// Where: STORAGE_EMULATOR_HOST (`host:port`, plain HTTP, as the CLI's gocloud reads it; a URL is taken as it is),
// else storage.googleapis.com.

import { MessageChannel, receiveMessageOnPort, Worker } from "worker_threads";

export interface Answer {
    /** The HTTP status; 0 when no answer came (the reason in `error`). */
    status: number;
    body: string;
    /** The server's clock (its Date header, ms), when it said. */
    date?: number;
    error?: string;
}

interface Request {
    method: "GET" | "POST" | "DELETE";
    url: string;
    headers: Record<string, string>;
    body?: string;
    lane: "log" | "free";
}

// Plain JavaScript, run in the worker: the retry rule is here once, for the waited-for and the later requests.
const WORKER = `
const { parentPort } = require("worker_threads");
const RETRY = new Set([408, 429, 500, 502, 503, 504]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function send(r, deadline) {
    let wait = 100, last = { status: 0, body: "", error: "no time left" };
    for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) return last;
        try {
            const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(left) });
            const date = Date.parse(res.headers.get("date") || "");
            last = { status: res.status, body: await res.text(), ...(Number.isNaN(date) ? {} : { date }) };
            if (!RETRY.has(res.status)) return last;
        } catch (e) {
            const why = (e && e.cause && e.cause.code) || (e && e.name === "TimeoutError" ? "timed out" : String(e && e.message || e));
            last = { status: 0, body: "", error: why };
        }
        if (Date.now() + wait >= deadline) return last;
        await sleep(wait);
        wait = Math.min(wait * 2, 2000);
    }
}
let log = Promise.resolve(), logFailed;
parentPort.on("message", ({ reqs, budgetMs, port, flag }) => {
    const deadline = Date.now() + budgetMs;
    const done = Promise.all(reqs.map((r) => {
        if (r.lane !== "log") return send(r, deadline);
        const p = log.then(async () => {
            if (logFailed) return { status: 0, body: "", error: "an earlier record was not kept (" + logFailed + ")" };
            const a = await send(r, deadline);
            if (a.status === 0 || a.status >= 500 || a.status === 429 || a.status === 401 || a.status === 403) logFailed = a.error || ("HTTP " + a.status);
            return a;
        });
        log = p.then(() => undefined);
        return p;
    }));
    done.then((out) => {
        port.postMessage(out);
        port.close();
        if (flag) { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); }
    });
});
`;

/** One object in a listing. */
export interface Listed {
    name: string;
    generation: string;
    /** When it was last written, by the server's clock (ms). */
    updated: number;
}

/** A bucket, through the JSON API. */
export class Bucket {
    private worker?: Worker;
    private readonly base: string;

    /** `authorization`: the Authorization header's value now, if any (an emulator needs none). */
    constructor(readonly bucket: string, env: NodeJS.ProcessEnv, private readonly authorization: () => string | undefined,
        readonly budgetMs: number) {
        const host = env.STORAGE_EMULATOR_HOST;
        this.base = host ? (/^https?:\/\//.test(host) ? host.replace(/\/+$/, "") : `http://${host}`) : "https://storage.googleapis.com";
    }

    private post(reqs: Request[], budgetMs: number, flag?: Int32Array) {
        if (!this.worker) {
            this.worker = new Worker(WORKER, { eval: true });
            this.worker.unref();
        }
        const { port1, port2 } = new MessageChannel();
        this.worker.postMessage({ reqs, budgetMs, port: port2, flag }, [port2]);
        return port1;
    }

    /** Sends `reqs` (at once, but the log lane's in order) and waits for their answers. */
    now(reqs: Request[], budgetMs = this.budgetMs): Answer[] {
        if (reqs.length === 0) return [];
        const flag = new Int32Array(new SharedArrayBuffer(4));
        const port = this.post(reqs, budgetMs, flag);
        Atomics.wait(flag, 0, 0, budgetMs + 2000);
        const got = receiveMessageOnPort(port);
        port.close();
        return (got?.message as Answer[] | undefined) ?? reqs.map(() => ({ status: 0, body: "", error: "no answer in time" }));
    }

    /** Sends `reqs`; resolves with their answers. */
    later(reqs: Request[], budgetMs = this.budgetMs): Promise<Answer[]> {
        if (reqs.length === 0) return Promise.resolve([]);
        const port = this.post(reqs, budgetMs);
        return new Promise((resolve) => port.once("message", (m: Answer[]) => {
            port.close();
            resolve(m);
        }));
    }

    private headers(extra: Record<string, string> = {}): Record<string, string> {
        const auth = this.authorization();
        return { ...(auth ? { authorization: auth } : {}), ...extra };
    }

    private object(name: string): string {
        return `${this.base}/storage/v1/b/${encodeURIComponent(this.bucket)}/o/${encodeURIComponent(name)}`;
    }

    /** `lane: "log"`: listed once every write asked for before it is answered. */
    list(prefix: string, lane: Request["lane"] = "free", pageToken?: string): Request {
        const q = new URLSearchParams({ prefix, ...(pageToken ? { pageToken } : {}) });
        return { method: "GET", url: `${this.base}/storage/v1/b/${encodeURIComponent(this.bucket)}/o?${q}`, headers: this.headers(), lane };
    }

    read(name: string): Request {
        return { method: "GET", url: `${this.object(name)}?alt=media`, headers: this.headers(), lane: "free" };
    }

    /** Writes `name`; `onlyNew`: only where no object of that name is (else 412). */
    write(name: string, body: string, { onlyNew = false } = {}): Request {
        const q = new URLSearchParams({ uploadType: "media", name, ...(onlyNew ? { ifGenerationMatch: "0" } : {}) });
        return {
            method: "POST", url: `${this.base}/upload/storage/v1/b/${encodeURIComponent(this.bucket)}/o?${q}`,
            headers: this.headers({ "content-type": "application/x-ndjson" }), body, lane: "log",
        };
    }

    remove(name: string, lane: Request["lane"] = "log"): Request {
        return { method: "DELETE", url: this.object(name), headers: this.headers(), lane };
    }

    /** Every object under `prefix`, with the server's clock as it answered, waiting for it; throws with the reason it cannot. */
    listAll(prefix: string, lane: Request["lane"] = "free", budgetMs = this.budgetMs): { items: Listed[]; date?: number } {
        const pages = this.pages(prefix);
        for (let step = pages.next(); ; step = pages.next(this.now([this.list(prefix, lane, step.value)], budgetMs)[0])) {
            if (step.done) return step.value;
        }
    }

    /** listAll, not waiting. */
    async listAllLater(prefix: string): Promise<{ items: Listed[]; date?: number }> {
        const pages = this.pages(prefix);
        for (let step = pages.next(); ; step = pages.next((await this.later([this.list(prefix, "free", step.value)]))[0])) {
            if (step.done) return step.value;
        }
    }

    /** A listing's pages, read however the caller sends them: yields each page's token (undefined first), takes its answer. */
    private *pages(prefix: string): Generator<string | undefined, { items: Listed[]; date?: number }, Answer> {
        const items: Listed[] = [];
        let token: string | undefined;
        let date: number | undefined;
        do {
            const a = yield token;
            const page = this.expect(a, 200) as { items?: { name: string; generation: string; updated: string }[]; nextPageToken?: string };
            date = a.date ?? date;
            for (const o of page.items ?? []) items.push({ name: o.name, generation: String(o.generation), updated: Date.parse(o.updated) });
            token = page.nextPageToken;
        } while (token);
        return { items, date };
    }

    /** The answer's JSON when its status is `ok`; else throws with what went wrong, for a person. */
    expect(a: Answer, ok: number): unknown {
        if (a.status !== ok) throw new Error(this.why(a));
        try {
            return JSON.parse(a.body || "{}");
        } catch {
            throw new Error(`gs://${this.bucket} answered what is not JSON`);
        }
    }

    /** What went wrong with a request, for a person (Google's message, never a header). */
    why(a: Answer): string {
        if (a.status === 0) return `no answer from ${this.base} (${a.error ?? "unknown"})`;
        let message = "";
        try {
            message = (JSON.parse(a.body) as { error?: { message?: string } }).error?.message ?? "";
        } catch {
            message = a.body.slice(0, 200);
        }
        const what = a.status === 404 ? "not found (does the bucket exist?)" : a.status === 403 ? "permission denied" : a.status === 401 ? "not authenticated" : `HTTP ${a.status}`;
        return `${what}${message ? `: ${message.trim()}` : ""}`;
    }
}
