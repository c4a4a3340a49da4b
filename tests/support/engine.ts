// A stand-in for the engine's Log service: what the plugin tells the user arrives here.

import * as grpc from "@grpc/grpc-js";
import { EngineService } from "@pulumi/pulumi/proto/engine_grpc_pb";
import { LogRequest, LogSeverity } from "@pulumi/pulumi/proto/engine_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { expect } from "chai";
import { MEMBER, Plugin } from "./plugin";

/** One message the plugin logged. */
export interface EngineLog {
    severity: LogSeverity;
    message: string;
    /** The resource the message is about ("" for none). */
    urn: string;
}

/** A stand-in for the engine's Log service, recording every message. */
export interface Engine {
    /** Where it listens: the address the engine passes a plugin on its command line. */
    readonly address: string;
    /**
     * Listens on a new address from now on, as the next `pulumi` command's engine would: the plugin processes of one
     * engine run share what their resources declare, those of the next run do not.
     */
    nextRun(): Promise<string>;
    /** Every message, in the order it arrived. */
    logs: EngineLog[];
    /** The texts of `logs`. */
    readonly messages: string[];
    /** The warnings logged on the resource named `name` (the last part of its URN). */
    warningsOn(name: string): string[];
    close(): void;
}

export async function startEngine(): Promise<Engine> {
    const logs: EngineLog[] = [];
    const server = new grpc.Server();
    server.addService(EngineService, {
        log: (call: grpc.ServerUnaryCall<LogRequest, Empty>, cb: grpc.sendUnaryData<Empty>) => {
            logs.push({ severity: call.request.getSeverity(), message: call.request.getMessage(), urn: call.request.getUrn() });
            cb(null, new Empty());
        },
    });
    const bind = () => new Promise<string>((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(`127.0.0.1:${p}`))));
    let address = await bind();
    return {
        get address() {
            return address;
        },
        nextRun: async () => (address = await bind()),
        logs,
        get messages() {
            return logs.map((l) => l.message);
        },
        warningsOn: (name) => logs.filter((l) => l.severity === LogSeverity.WARNING && l.urn.endsWith(`::${name}`)).map((l) => l.message),
        close: () => server.forceShutdown(),
    };
}

/**
 * Polls `pred` (every 20 ms) until it holds or `timeoutMs` has passed; resolves with its last value. For what
 * arrives beside an answer rather than in it (the plugin's log calls): the check that follows says what was missing.
 */
export async function until(pred: () => boolean, timeoutMs = 5000): Promise<boolean> {
    for (const deadline = Date.now() + timeoutMs; !pred() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    return pred();
}

/**
 * The warnings on `name` once every log call `plugin` made so far has arrived. Log calls travel beside the answers,
 * over one connection, in order: the Check of a conditional Member (on `serviceName`) draws a warning on it (the
 * conditional-binding warning), and once that warning is here, any sent before it is too. For checks that
 * something was not said.
 */
export async function warningsSoFar(plugin: Plugin, engine: Engine, serviceName: string, name: string): Promise<string[]> {
    const marker = `marker-${engine.logs.length}`;
    const condition = { title: "marker", expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")" };
    await plugin.check(MEMBER, { serviceName, role: "roles/servicemanagement.admin", member: "user:marker@example.com", condition }, {}, marker);
    expect(await until(() => engine.warningsOn(marker).length > 0), "the marker's warning arrived").to.equal(true);
    return engine.warningsOn(name);
}
