// A pass-through HTTP proxy in front of the emulator that keeps the policy of every setIamPolicy request: what
// the plugin asked Google to write, each time, which the policy as stored afterwards no longer shows; and, on
// Linux, which processes sent them (to tell one plugin process of a deployment from another).

import * as fs from "fs";
import * as http from "http";
import type { Policy } from "../../emulator";

export interface WriteRecorder {
    /** Base URL to configure as the endpoint (`…/v1/`, as the emulator's). */
    url: string;
    /** The policy of each setIamPolicy request, in the order they were sent. */
    writes: Policy[];
    /** The PIDs of the processes that sent them, with `{ senders: true }` (Linux; empty elsewhere). */
    writers: Set<number>;
    close(): Promise<void>;
}

/** Starts a proxy forwarding every request to the emulator at `target` (its `url`), recording the writes. */
export async function recordWrites(target: string, opts: { senders?: boolean } = {}): Promise<WriteRecorder> {
    const upstream = new URL(target);
    const writes: Policy[] = [];
    const writers = new Set<number>();
    const server = http.createServer((req, res) => {
        // Finding the sender scans every process's file descriptors: only for the tests that ask who wrote.
        const sender = opts.senders && req.url?.includes(":setIamPolicy") ? pidOfLocalPort(req.socket.remotePort ?? 0) : undefined;
        if (sender !== undefined) writers.add(sender);
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
        writers,
        close: () => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        }),
    };
}

/** The PID of the process that owns the local TCP port `port` (Linux: /proc/net/tcp and each process's fds). */
function pidOfLocalPort(port: number): number | undefined {
    const hex = port.toString(16).toUpperCase().padStart(4, "0");
    const inodes = new Set<string>();
    for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
        let text = "";
        try {
            text = fs.readFileSync(table, "utf8");
        } catch {
            continue;
        }
        for (const line of text.split("\n").slice(1)) {
            const cols = line.trim().split(/\s+/);
            if (cols[1]?.endsWith(`:${hex}`)) inodes.add(cols[9]);
        }
    }
    for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue;
        try {
            for (const fd of fs.readdirSync(`/proc/${entry}/fd`)) {
                const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${entry}/fd/${fd}`));
                if (m && inodes.has(m[1])) return Number(entry);
            }
        } catch {
            // gone, or not ours to read
        }
    }
    return undefined;
}
