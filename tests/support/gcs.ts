// A GCS emulator for tests: fake-gcs-server (built by scripts/tools.sh) on a free loopback port, in memory, and a
// loopback proxy in front of it that answers every request with a fault (a refused, failing or missing bucket).

import { ChildProcess, spawn } from "child_process";
import * as http from "http";
import * as net from "net";
import * as path from "path";

export const FAKE_GCS = "fake-gcs-server-v1.56.1";

export interface FakeGcs {
    /** `host:port`, as STORAGE_EMULATOR_HOST takes it. */
    host: string;
    createBucket(name: string): Promise<void>;
    /** The names of the objects under `prefix`. */
    list(bucket: string, prefix: string): Promise<string[]>;
    close(): Promise<void>;
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => {
            const port = (s.address() as net.AddressInfo).port;
            s.close(() => resolve(port));
        });
    });
}

export async function startFakeGcs(bin: string): Promise<FakeGcs> {
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const child: ChildProcess = spawn(path.join(bin, FAKE_GCS), ["-scheme", "http", "-host", "127.0.0.1", "-port", String(port),
        "-backend", "memory", "-public-host", host, "-log-level", "error"], { stdio: "ignore" });
    const base = `http://${host}/storage/v1`;
    for (const deadline = Date.now() + 20_000; ;) {
        try {
            if ((await fetch(`${base}/b?project=test`)).ok) break;
        } catch {
            // not listening yet
        }
        if (Date.now() > deadline || child.exitCode !== null) throw new Error("fake-gcs-server did not start");
        await new Promise((r) => setTimeout(r, 100));
    }
    return {
        host,
        async createBucket(name) {
            const r = await fetch(`${base}/b?project=test`, { method: "POST", body: JSON.stringify({ name }), headers: { "content-type": "application/json" } });
            if (!r.ok) throw new Error(`creating bucket ${name}: HTTP ${r.status}`);
        },
        async list(bucket, prefix) {
            const r = await fetch(`${base}/b/${bucket}/o?${new URLSearchParams({ prefix })}`);
            return (((await r.json()) as { items?: { name: string }[] }).items ?? []).map((o) => o.name);
        },
        close: () => new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
        }),
    };
}

/** A loopback server that answers every request with `status` (and Google's error body), counting them. */
export async function faultyGcs(status: number): Promise<{ host: string; requests: () => number; close(): Promise<void> }> {
    let n = 0;
    const server = http.createServer((req, res) => {
        n++;
        req.resume();
        const message = status === 403 ? "caller does not have storage.objects.list access" : status === 503 ? "backend unavailable" : "no";
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: status, message } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    return { host: `127.0.0.1:${port}`, requests: () => n, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback proxy in front of `target` (`host:port`) that holds each request `delayMs` before passing it on: GCS's latency. */
export async function slowGcs(target: string, delayMs: number): Promise<{ host: string; requests: () => number; close(): Promise<void> }> {
    let n = 0;
    const [targetHost, targetPort] = target.split(":");
    const server = http.createServer((req, res) => {
        n++;
        const body: Buffer[] = [];
        req.on("data", (d: Buffer) => body.push(d));
        req.on("end", () => setTimeout(() => {
            const out = http.request({ host: targetHost, port: Number(targetPort), method: req.method, path: req.url, headers: req.headers }, (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(res);
            });
            out.on("error", () => res.destroy());
            out.end(Buffer.concat(body));
        }, delayMs));
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    return {
        host: `127.0.0.1:${port}`, requests: () => n,
        close: () => new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        }),
    };
}
