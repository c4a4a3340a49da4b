// Grants written for a resource the engine may never have recorded. A Create or Update is answered once
// Google has accepted its write; if the plugin dies in between (killed, out of memory, the machine gone), the
// engine takes the operation as failed and keeps no trace of it, while the grant is in the policy. So, before
// each write that adds grants, the plugin notes them (for the resource's URN) in a journal on disk, and notes
// when the engine has had the answer. A later plugin process serving the same stack takes over what a dead
// process left unanswered:
//   - it tells the user, on the stack, which grants those are;
//   - an operation of the same resource that the engine records (its Create again, its Update or Read) settles it;
//   - at the end of a deployment that changed something (`pulumi up`, `pulumi destroy`), those the program no
//     longer declares are removed: that stack's program wrote them, and nothing declares them any more.
// The journal lives beside the user's Pulumi data (PULUMI_HOME, default ~/.pulumi), one folder per stack.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { IamFetcher } from "../iam/fetcher";
import { changesBetween, describeGrant, Grant, grantKey, grantsOf, keepGrants } from "../iam/grants";
import { Parent, parentName } from "../iam/names";
import { Policy } from "../iam/policy";
import { Kept, shortUrn } from "./owners";
import { alive, ProcessFiles } from "./processFiles";

/** A write that added grants, not yet known to have reached the engine. */
export interface Unrecorded {
    urn: string;
    parent: Parent;
    grants: Grant[];
}

/** A journal line: a write noted (with a number of this process's), undone (refused, so never applied), or recorded. */
type Line = ({ op: "wrote"; n: number } & Unrecorded) | { op: "undone"; n: number } | { op: "recorded"; urn: string };

/** The journal's root: `$PULUMI_HOME/plugins-state/pulumi-resource-cloud/journal`. */
function journalRoot(env: NodeJS.ProcessEnv = process.env): string {
    const home = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return path.join(home, "plugins-state", "pulumi-resource-cloud", "journal");
}

/** `project/stack` of a URN (`urn:pulumi:<stack>::<project>::…`), as a folder name; undefined if not a URN. */
export function stackOf(urn: string): string | undefined {
    const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
    if (!m) return undefined;
    return `${m[2]}--${m[1]}`.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** What a journal file's lines say is still unrecorded, URN by URN. */
function unrecordedIn(lines: readonly unknown[]): Map<string, Unrecorded[]> {
    const wrote = new Map<number, Unrecorded>();
    for (const raw of lines) {
        const line = raw as Line;
        if (line.op === "recorded") for (const [n, e] of wrote) if (e.urn === line.urn) wrote.delete(n);
        if (line.op === "undone") wrote.delete(line.n);
        if (line.op === "wrote" && Array.isArray(line.grants)) wrote.set(line.n, { urn: line.urn, parent: line.parent, grants: line.grants });
    }
    const out = new Map<string, Unrecorded[]>();
    for (const e of wrote.values()) out.set(e.urn, [...(out.get(e.urn) ?? []), e]);
    return out;
}

export class WriteJournal {
    private files?: ProcessFiles<Line>;
    /** Left unrecorded by processes that died: taken over by this one. */
    private readonly orphans = new Map<string, Unrecorded[]>();
    /** Written by this process and not yet answered to the engine. */
    private readonly mine = new Map<string, Unrecorded[]>();
    private told = false;
    private lines = 0;

    constructor(private readonly root = journalRoot()) {}

    /** Learns the stack from a URN the engine sent; the first time, takes over what dead processes left. */
    attach(urn: string): void {
        if (this.files) return;
        const stack = stackOf(urn);
        if (!stack) return;
        const files = (this.files = new ProcessFiles<Line>(path.join(this.root, stack)));
        for (const { pid, file, lines } of files.others()) {
            if (alive(pid)) continue;
            for (const [u, entries] of unrecordedIn(lines)) {
                this.orphans.set(u, [...(this.orphans.get(u) ?? []), ...entries]);
                // Carried in this process's own file from now on, so that they outlive it if it dies too.
                for (const e of entries) files.append({ op: "wrote", n: ++this.lines, ...e });
            }
            if (files.open) fs.rmSync(file, { force: true });
        }
    }

    private append(line: Line): void {
        this.files?.append(line);
    }

    /**
     * Notes, before the write is sent, the grants a write adds for `urn`. Returns the undo for a write the API
     * refused (so it never applied).
     */
    wrote(urn: string, parent: Parent, before: Policy, after: Policy): () => void {
        const entry: Unrecorded = { urn, parent, grants: changesBetween(grantsOf(before.bindings), grantsOf(after.bindings)).added };
        if (entry.grants.length === 0) return () => undefined;
        const n = ++this.lines;
        this.mine.set(entry.urn, [...(this.mine.get(entry.urn) ?? []), entry]);
        this.append({ op: "wrote", n, ...entry });
        return () => {
            const left = (this.mine.get(entry.urn) ?? []).filter((e) => e !== entry);
            if (left.length) this.mine.set(entry.urn, left);
            else this.mine.delete(entry.urn);
            this.append({ op: "undone", n });
        };
    }

    /** The engine has the resource's state (its operation was answered): nothing of it is unrecorded any more. */
    recorded(urn: string): void {
        const mine = this.mine.delete(urn);
        const orphaned = this.orphans.delete(urn);
        if (mine || orphaned) this.append({ op: "recorded", urn });
    }

    /** Once per process, what dead processes left unrecorded, for the user (undefined when nothing). */
    report(): string | undefined {
        if (this.told || this.orphans.size === 0) return undefined;
        this.told = true;
        const lines = [...this.orphans.values()].flat().flatMap((e) =>
            e.grants.map((g) => `  ${describeGrant(g)} on ${parentName(e.parent)} (for ${shortUrn(e.urn)})`));
        return "an earlier run of this provider stopped after writing these grants, before Pulumi recorded them:\n" +
            `${lines.join("\n")}\n` +
            "`pulumi up` records them where the program still declares those resources and removes the others; " +
            "`pulumi destroy` removes them.";
    }

    /**
     * At the end of a deployment that changed something: removes the grants dead processes wrote for resources
     * the program does not declare (`declared`), except those another resource declares (`kept`). Returns
     * what it removed and what it could not, for the user.
     */
    async removeUndeclared(iam: IamFetcher, declared: (urn: string) => boolean, kept: (parent: string) => Kept): Promise<string[]> {
        const notes: string[] = [];
        for (const [urn, entries] of [...this.orphans]) {
            if (declared(urn)) continue;
            try {
                for (const e of entries) {
                    const keys = new Set(e.grants.map(grantKey));
                    const keep = kept(parentName(e.parent)).grants;
                    const drop = (g: Grant) => keys.has(grantKey(g)) && !keep.has(grantKey(g));
                    const present = (p: Policy) => grantsOf(p.bindings).some(drop);
                    await iam.modify(e.parent, (current) => (present(current) ? { ...current, bindings: keepGrants(current, (g) => !drop(g)) } : undefined),
                        { confirm: (p) => !present(p) });
                    notes.push(...e.grants.filter(drop).map((g) => `removed ${describeGrant(g)} from ${parentName(e.parent)}, written for ${urn} ` +
                        "by an earlier run that stopped before Pulumi recorded it; the program no longer declares that resource"));
                }
                this.orphans.delete(urn);
                this.append({ op: "recorded", urn });
            } catch (err) {
                notes.push(`could not remove the grants written for ${urn} by an earlier run that stopped before Pulumi ` +
                    `recorded them (${err instanceof Error ? err.message : String(err)}); the next \`pulumi up\` or \`pulumi destroy\` tries again`);
            }
        }
        return notes;
    }

    /** At exit: an empty journal leaves no file behind. */
    close(): void {
        if (this.mine.size === 0 && this.orphans.size === 0) this.files?.close();
        this.files = undefined;
    }
}
