// A pass-through HTTP proxy in front of the emulator that keeps the policy of every setIamPolicy request: what
// the plugin asked Google to write, each time, which the policy as stored afterwards no longer shows.

import * as http from "http";
import type { Policy } from "../../emulator";

export interface WriteRecorder {
    /** Base URL to configure as the endpoint (`…/v1/`, as the emulator's). */
    url: string;
    /** The policy of each setIamPolicy request, in the order they were sent. */
    writes: Policy[];
    close(): Promise<void>;
}

/** Starts a proxy forwarding every request to the emulator at `target` (its `url`), recording the writes. */
export async function recordWrites(target: string): Promise<WriteRecorder> {
    const upstream = new URL(target);
    const writes: Policy[] = [];
    const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
            const body = Buffer.concat(chunks);
            if (req.method === "POST" && req.url?.split("?")[0].endsWith(":setIamPolicy")) {
                writes.push((JSON.parse(body.toString()) as { policy: Policy }).policy);
            }
            const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
                headers: { ...req.headers, host: upstream.host } }, (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(res);
            });
            out.on("error", () => res.destroy());
            out.end(body);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    return {
        url: `http://127.0.0.1:${port}${upstream.pathname}`,
        writes,
        close: () => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        }),
    };
}
