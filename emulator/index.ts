// Entry point for in-process use: `const emu = await startEmulator({ accessTokens: ["t"] })`.

import { writeFileAtomic } from "./state";
import { EmulatorServer } from "./server";
import type { Emulator, EmulatorOptions } from "./types";

export type {
    AuthorizedUserFile, Emulator, EmulatorOptions, FaultKind, FaultSettings, IssueTokenOptions, ManagedService, RequestRecord,
    ServiceAccountKey,
} from "./types";

/** Starts an emulator listening on `options.host`:`options.port`; resolves once it accepts connections. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
    const emulator = new EmulatorServer(options);
    await emulator.listen();
    if (options.mintKey) {
        try {
            const key = emulator.mintServiceAccountKey(options.mintEmail ? { clientEmail: options.mintEmail } : {});
            writeFileAtomic(options.mintKey, `${JSON.stringify(key, null, 2)}\n`);
        } catch (e) {
            await emulator.close();
            throw e;
        }
    }
    return emulator;
}
