// A folder where each plugin process keeps one append-only file of JSON lines, `<pid>.jsonl`, and reads the
// others': how the plugin processes of one deployment share what their resources declare (owners.ts), and how
// a later process takes over what a dead one wrote (journal.ts). Best effort by design: a folder that cannot
// be written only narrows what the processes know of each other, so every failure leaves the process on its own.

import * as fs from "fs";
import * as path from "path";

/** Whether a process is running (one we may not signal counts as running). */
export function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (e) {
        return (e as NodeJS.ErrnoException).code === "EPERM";
    }
}

export class ProcessFiles<T> {
    private file?: string;

    /** Opens this process's file in `folder` (made if missing, readable by the user only). */
    constructor(readonly folder: string) {
        try {
            fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
            this.file = path.join(folder, `${process.pid}.jsonl`);
        } catch {
            this.file = undefined;
        }
    }

    /** Whether this process's file can be written. */
    get open(): boolean {
        return this.file !== undefined;
    }

    append(value: T): void {
        if (!this.file) return;
        try {
            fs.appendFileSync(this.file, `${JSON.stringify(value)}\n`, { mode: 0o600 });
        } catch {
            this.file = undefined;
        }
    }

    /** The other processes' files, with their process IDs and the lines that parse (a line being written does not). */
    others(): { pid: number; file: string; lines: unknown[] }[] {
        let names: string[];
        try {
            names = fs.readdirSync(this.folder);
        } catch {
            return [];
        }
        const out: { pid: number; file: string; lines: unknown[] }[] = [];
        for (const name of names) {
            const pid = Number(name.replace(/\.jsonl$/, ""));
            if (!name.endsWith(".jsonl") || !Number.isInteger(pid) || pid === process.pid) continue;
            const file = path.join(this.folder, name);
            let text: string;
            try {
                text = fs.readFileSync(file, "utf8");
            } catch {
                continue; // that process just removed it
            }
            const lines: unknown[] = [];
            for (const raw of text.split("\n")) {
                try {
                    lines.push(JSON.parse(raw));
                } catch {
                    // empty, or cut short
                }
            }
            out.push({ pid, file, lines });
        }
        return out;
    }

    /** Removes this process's file, and the folder once no other process has one there. */
    close(): void {
        if (!this.file) return;
        try {
            fs.rmSync(this.file, { force: true });
            fs.rmdirSync(this.folder);
        } catch {
            // another process still has a file there
        }
        this.file = undefined;
    }
}
