// A loopback HTTP proxy in front of the emulator whose test decides, request by request, what the network does
// to it: pass it on, let it reach Google but lose the answer (a 504 from a front end, or no answer at all), or
// lose it before it arrives. What Google did with a request is then the emulator's state, not a guess.

import { EventEmitter } from "events";
import * as http from "http";

/** What becomes of one request. */
export type Fate =
    /** Forwarded, and the emulator's answer returned. */
    | "pass"
    /** Forwarded (it applies), then answered 504 as a front end does when the backend was slow to answer. */
    | "land-then-504"
    /** Forwarded (it applies), and never answered: the connection stays open until the client gives up. */
    | "land-then-hang"
    /** Never forwarded, never answered. */
    | "hang";

/** One request the proxy received: `verb` is `getIamPolicy` or `setIamPolicy` (the part after the colon). */
export interface Seen {
    verb: string;
    /** Its fate, once `decide` gave it. */
    fate?: Fate;
    /** The status the client got; undefined while none was sent. */
    status?: number;
}

export interface FaultProxy {
    /** The API's base URL through the proxy (`…/v1/`). */
    url: string;
    /** Every request so far, in arrival order. */
    seen: Seen[];
    /** Resolves with the first request (seen already, or once it is) that `pred` holds for; checked on every change. */
    until(pred: (s: Seen, index: number) => boolean): Promise<Seen>;
    close(): Promise<void>;
}

/** The fate of request `s`, the `index`th of `seen` (every request so far, `s` last). */
export type Decide = (s: Seen, index: number, seen: readonly Seen[]) => Fate | Promise<Fate>;

/**
 * Starts a proxy to the emulator at `target` (its `url`). `decide` gives each request its fate; it may take its
 * time (a request is held until it resolves). Admin paths (`/__emulator/…`) and the token endpoint pass.
 */
export async function faultProxy(target: string, decide: Decide): Promise<FaultProxy> {
    const upstream = new URL(target);
    const seen: Seen[] = [];
    const events = new EventEmitter();
    events.setMaxListeners(0);
    const forward = (req: http.IncomingMessage, body: Buffer, answer: (status: number, headers: http.IncomingHttpHeaders, body: Buffer) => void) => {
        const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
            headers: { ...req.headers, host: upstream.host } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => answer(res.statusCode ?? 502, res.headers, Buffer.concat(chunks)));
        });
        out.on("error", () => answer(502, {}, Buffer.from("{}")));
        out.end(body);
    };
    const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
            const body = Buffer.concat(chunks);
            const verb = req.url?.split("?")[0].match(/:(\w+)$/)?.[1];
            if (!verb) {
                forward(req, body, (status, headers, text) => res.writeHead(status, headers).end(text));
                return;
            }
            const s: Seen = { verb };
            const index = seen.push(s) - 1;
            events.emit("change");
            const reply = (status: number, headers: http.IncomingHttpHeaders, text: Buffer) => {
                res.writeHead(status, headers).end(text, () => {
                    s.status = status;
                    events.emit("change");
                });
            };
            void Promise.resolve(decide(s, index, seen)).then((fate) => {
                s.fate = fate;
                events.emit("change");
                if (fate === "pass") forward(req, body, reply);
                else if (fate === "land-then-504") {
                    forward(req, body, () => reply(504, { "content-type": "application/json" },
                        Buffer.from(JSON.stringify({ error: { code: 504, message: "Deadline exceeded", status: "DEADLINE_EXCEEDED" } }))));
                } else if (fate === "land-then-hang") forward(req, body, () => undefined);
            });
        });
    });
    const until = (pred: (s: Seen, index: number) => boolean) => new Promise<Seen>((resolve) => {
        const check = () => {
            const hit = seen.find(pred);
            if (!hit) return;
            events.off("change", check);
            resolve(hit);
        };
        events.on("change", check);
        check();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error(`the proxy listens at ${address}, not a TCP port`);
    return {
        url: `http://127.0.0.1:${address.port}${upstream.pathname}`,
        seen,
        until,
        close: () => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        }),
    };
}
