// A stand-in for the engine's Log service: what the plugin tells the user arrives here.

import * as grpc from "@grpc/grpc-js";
import { EngineService } from "@pulumi/pulumi/proto/engine_grpc_pb";
import { LogRequest } from "@pulumi/pulumi/proto/engine_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";

/** A stand-in for the engine's Log service, recording every message. */
export interface EngineLog {
    severity: number;
    message: string;
    /** The resource the message is about ("" for none). */
    urn: string;
}

export async function startEngine(): Promise<{ address: string; messages: string[]; logs: EngineLog[]; close(): void }> {
    const messages: string[] = [];
    const logs: EngineLog[] = [];
    const server = new grpc.Server();
    server.addService(EngineService, {
        log: (call: grpc.ServerUnaryCall<LogRequest, Empty>, cb: grpc.sendUnaryData<Empty>) => {
            messages.push(call.request.getMessage());
            logs.push({ severity: call.request.getSeverity(), message: call.request.getMessage(), urn: call.request.getUrn() });
            cb(null, new Empty());
        },
    });
    const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    return { address: `127.0.0.1:${port}`, messages, logs, close: () => server.forceShutdown() };
}

