// Diagnostics: stderr (when asked for with --logtostderr or -v) and the engine's Log RPC once the engine's
// address is known. Stdout is never written: its first line belongs to the port number.

import type * as Grpc from "@grpc/grpc-js";
import type { EngineClient } from "@pulumi/pulumi/proto/engine_grpc_pb";
import type { LogSeverity } from "@pulumi/pulumi/proto/engine_pb";

const enum Severity { DEBUG = 0, INFO = 1, WARNING = 2, ERROR = 3 }

export class Logger {
    private engine?: EngineClient;
    /** The engine's address, until the first message for it connects (see engineClient). */
    private engineAddress?: string;
    /** Log calls sent and not yet answered: a plugin about to exit waits for them (see flush). */
    private readonly inFlight = new Set<Promise<void>>();

    constructor(private readonly verbosity: number, private readonly toStderr: boolean) {}

    /**
     * Sends messages to the engine's Log service (Handshake, Attach, or the address on the command line). The
     * client (the engine's stubs and a gRPC channel) is made when the first message goes there, not here: the
     * engine passes its address to every plugin it starts, and most starts log nothing to it (~8 ms of the start).
     */
    attach(address: string | undefined): void {
        if (!address || this.engineAddress) return;
        this.engineAddress = address;
    }

    /** The engine's Log client, made on first use; undefined without an engine (tests, debugging sessions). */
    private engineClient(): EngineClient | undefined {
        if (!this.engine && this.engineAddress) {
            const grpc = require("@grpc/grpc-js") as typeof Grpc;
            const { EngineClient: Client } = require("@pulumi/pulumi/proto/engine_grpc_pb") as typeof import("@pulumi/pulumi/proto/engine_grpc_pb");
            this.engine = new Client(this.engineAddress, grpc.credentials.createInsecure());
        }
        return this.engine;
    }

    debug(message: string): void {
        this.write(Severity.DEBUG, message, this.verbosity >= 5);
    }

    /** Shown to the user; on the resource `urn` when given (the CLI prints it under that resource). */
    info(message: string, urn?: string): void {
        this.write(Severity.INFO, message, true, urn);
    }

    warn(message: string, urn?: string): void {
        this.write(Severity.WARNING, message, true, urn);
    }

    error(message: string): void {
        this.write(Severity.ERROR, message, true);
    }

    private write(severity: Severity, message: string, toEngine: boolean, urn = ""): void {
        if (this.toStderr || this.verbosity > 0) process.stderr.write(`pulumi-resource-cloud: ${urn ? `${urn}: ` : ""}${message}\n`);
        const engine = toEngine ? this.engineClient() : undefined;
        if (!engine) return;
        const { LogRequest } = require("@pulumi/pulumi/proto/engine_pb") as typeof import("@pulumi/pulumi/proto/engine_pb");
        const request = new LogRequest().setSeverity(severity as number as LogSeverity).setMessage(message).setEphemeral(false).setUrn(urn);
        const sent = new Promise<void>((resolve) => engine.log(request, () => resolve())); // the engine may be gone: a lost diagnostic is no failure
        this.inFlight.add(sent);
        void sent.then(() => this.inFlight.delete(sent));
    }

    /**
     * Waits (at most `ms`) for the log calls under way: a message said at shutdown (what the deployment settled)
     * would otherwise die with the process, before its connection to the engine is even made.
     */
    async flush(ms = 1000): Promise<void> {
        if (this.inFlight.size === 0) return;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.all(this.inFlight), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
        clearTimeout(timer);
    }

    close(): void {
        this.engine?.close();
    }
}
