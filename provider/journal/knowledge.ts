// What the journal's files say: their lines, the entries and items they journal, and what is known of them once
// read (Knowledge). Pure: a line learnt is all it knows.

import { Grant, grantKey } from "../iam/grants";
import { Parent, parentName } from "../iam/names";
import { Claim } from "../resources/resource";
import { Peer, Writer } from "./events";

/** A journaled write: the grants it added and removed on one parent, for one resource. */
export interface Entry {
    /** `writer:n`: the same wherever the entry is carried. */
    id: string;
    urn: string;
    parent: Parent;
    /** The provider that wrote it (see Deployment.provider): only its credentials may ask Google about it. */
    provider: string;
    added: Grant[];
    removed: Grant[];
    /** The resource's ID, when the operation knew it (for `--import-pending-creates`). */
    resourceId?: string;
    /** When no attempt of the write can be sent any more (ms since the epoch): see `judgeable`. */
    until?: number;
    /** The etag the write was sent with: Google refuses it once the policy shows another (see `judgeable`). */
    etag?: string;
}

/**
 * How long after its last attempt was sent a write may still be applied by Google (a request in flight when its
 * sender died): until then Google's word on the policy says nothing of that write.
 */
export const IN_FLIGHT_SLACK_MS = 60_000;
/** How long the report at a run's start may take to check what it says against Google. */
export const EARLY_REPORT_MS = 10_000;

export type Sign = "+" | "-";

/**
 * A provider as the journal tells providers apart: its URN and endpoint, except that the default provider's URN
 * carries the plugin's version (`default_8_38_0`), which an upgrade changes while the stack's config, and so the
 * credentials, stay.
 */
export const providerKey = (id: string) => id.replace(/::default_\d+_\d+_\d+[\w.-]*(?=\|)/, "::default");

/** The endpoint part of a provider's id (`urn|endpoint`). */
export const endpointOf = (id: string) => id.slice(id.lastIndexOf("|") + 1);

/** The process that made an entry's write (its items are in flight while it runs), whoever carries the entry now. */
export const writerOf = (entry: Entry) => entry.id.slice(0, entry.id.lastIndexOf(":"));

/** One grant of an entry, as it is settled: `entry|sign|grantKey`. */
export const itemKey = (entry: string, sign: Sign, key: string) => `${entry}|${sign}|${key}`;
/** The entry an item key belongs to. */
export const entryOf = (item: string) => item.slice(0, item.indexOf("|"));

export interface Item {
    key: string;
    entry: Entry;
    sign: Sign;
    grant: Grant;
    /** grantKey(grant), made once. */
    grantKey: string;
}

export type Line =
    | { op: "hello"; writer: Writer; run: string }
    | { op: "declare"; urn: string; claim: Claim }
    /** The provider this process serves (see Deployment.provider). */
    | { op: "serves"; provider: string }
    | ({ op: "wrote"; n: number } & Omit<Entry, "id"> & { id?: string })
    | { op: "undone"; id: string }
    /** Google answered the write of entry `id`: it landed, and cannot land again. */
    | { op: "landed"; id: string }
    /**
     * An operation of `urn` was answered (not a preview); `items` are those it settles once the engine has it.
     * `carried`: copied from a dead process's file, so in no run's hands (see Knowledge.answered).
     */
    | { op: "answered"; urn: string; items: string[]; carried?: true }
    | { op: "settled"; items: string[] }
    /** Items told to the user in `run`. */
    | { op: "said"; run: string; items: string[] }
    /**
     * The engine's state of `urn` holds `claim` (null: the engine dropped it), as of `at` (ms since the epoch): what
     * the stack holds, kept across runs for a Delete in a run that does not Check every resource (see Deployment.kept).
     * `replaced`: dropped by the Delete of a resource replaced in its run (deleteBeforeReplace's first step).
     * `run`: the run that saw it, where the line was carried from another run's file (a carrier's run did not).
     * `may`: taken in from a Diff that may have been a preview's, whose state may be older: the resource may no longer
     * hold what it adds.
     */
    | { op: "holds"; urn: string; claim: Claim | null; at: number; of?: string; replaced?: true; run?: string; may?: true }
    /** A Delete of `urn` began in this run (or, `failed`, ended without deleting it): see Journal.kept. */
    | { op: "deleting"; urn: string; failed?: true }
    | { op: "closed" };

export const runOf = (peer: Peer<Line>): string | undefined => {
    const hello = peer.lines[0];
    return hello?.op === "hello" ? hello.run : undefined;
};

export const closedIn = (peer: Peer<Line>): boolean => peer.lines.some((l) => l.op === "closed");

/** What the folder's files say, read so far: every entry, what is settled and said, and what is in a run's hands. */
/** What a resource's state held when last seen (a `holds` line), and whose line that was. */
export interface Held {
    urn: string;
    claim: Claim | null;
    at: number;
    writer: string;
    run?: string;
    /** Dropped by the Delete of a resource replaced in its run. */
    replaced?: true;
    /** Taken in from a Diff that may have been a preview's (the `holds` line's `may`). */
    may?: true;
}

export class Knowledge {
    readonly entries = new Map<string, Entry>();
    /** urn (parent name) -> its entries' ids: what an operation of one resource (a write) looks at. */
    private readonly byUrn = new Map<string, Set<string>>();
    private readonly byParent = new Map<string, Set<string>>();
    /** Entry id -> its items, keyed once. */
    private readonly items = new Map<string, Item[]>();
    /** parent name -> grantKey -> the items of that grant there: what one resource's grants look up. */
    private readonly byGrant = new Map<string, Map<string, Item[]>>();
    /** Entry id -> the id of the writer's file it is in (the writer whose liveness decides whether it is in flight). */
    readonly holder = new Map<string, string>();
    readonly settled = new Set<string>();
    /** Entries whose write Google answered (see the `landed` line). */
    readonly landed = new Set<string>();
    /** run -> items said in it. */
    readonly said = new Map<string, Set<string>>();
    /** run -> items an answered operation of it will settle once delivered. */
    readonly inHand = new Map<string, Set<string>>();
    /** Items of any operation answered in any run: the engine may hold them (its next word on them decides). */
    readonly answered = new Set<string>();
    /** run -> the resources a Delete of that run began on, and those whose Delete failed (they stay in the stack). */
    readonly deleting = new Map<string, Set<string>>();
    readonly failedDeletes = new Map<string, Set<string>>();
    /**
     * holdKey(urn, identity) -> what the engine's state of that resource last held, as far as any run of this stack saw
     * (the latest `holds`). One URN may name two resources at once: a replaced one awaiting its Delete, and its
     * replacement; they are told apart by their identity (what their IDs name: see `identityOf`). `writer`, `run`:
     * whose file the latest line is in, and its run (see Journal.state: a preview beside an update).
     */
    readonly holds = new Map<string, Held>();
    /** parent name -> grantKey -> the holdKeys whose latest held claim holds that grant. */
    private readonly heldGrants = new Map<string, Map<string, Set<string>>>();

    learn(line: Line, writer: string, run: string | undefined): void {
        switch (line.op) {
            case "wrote": {
                const id = line.id ?? `${writer}:${line.n}`;
                // A journal of the previous release noted only the grants a write added (`grants`).
                const legacy = (line as { grants?: unknown }).grants;
                const added = Array.isArray(line.added) ? line.added : Array.isArray(legacy) ? legacy as Grant[] : undefined;
                if (!added) return;
                const entry: Entry = { id, urn: line.urn, parent: line.parent, provider: line.provider ?? "", added,
                    removed: Array.isArray(line.removed) ? line.removed : [], ...(line.resourceId ? { resourceId: line.resourceId } : {}), ...(typeof line.until === "number" ? { until: line.until } : {}),
                    ...(typeof line.etag === "string" && line.etag !== "" ? { etag: line.etag } : {}) };
                setOf(this.byUrn, line.urn).add(id);
                setOf(this.byParent, parentName(line.parent)).add(id);
                this.entries.set(id, entry);
                this.items.set(id, [...entry.added.map((grant) => ({ sign: "+" as const, grant })), ...entry.removed.map((grant) => ({ sign: "-" as const, grant }))]
                    .map(({ sign, grant }) => {
                        const key = grantKey(grant);
                        return { key: itemKey(id, sign, key), entry, sign, grant, grantKey: key };
                    }));
                let grants = this.byGrant.get(parentName(line.parent));
                if (!grants) this.byGrant.set(parentName(line.parent), (grants = new Map()));
                for (const i of this.items.get(id) ?? []) {
                    const had = grants.get(i.grantKey);
                    if (had) had.push(i);
                    else grants.set(i.grantKey, [i]);
                }
                this.holder.set(id, writer);
                return;
            }
            case "undone":
                this.entries.delete(line.id);
                this.items.delete(line.id);
                return;
            case "settled":
                for (const i of line.items) this.settled.add(i);
                return;
            case "deleting":
                if (run === undefined) return;
                if (line.failed) {
                    this.deleting.get(run)?.delete(line.urn);
                    setOf(this.failedDeletes, run).add(line.urn);
                } else {
                    setOf(this.deleting, run).add(line.urn);
                }
                return;
            case "said":
                for (const i of line.items) setOf(this.said, line.run).add(i);
                return;
            case "landed":
                this.landed.add(line.id);
                return;
            case "answered":
                for (const i of line.items) this.answered.add(i);
                if (run !== undefined && !line.carried) for (const i of line.items) setOf(this.inHand, run).add(i);
                return;
            case "holds": {
                // A line of the previous release that drops a resource names no identity: every one of its URN goes.
                const keys = line.claim ? [holdKey(line.urn, identityOf(line.claim))] : line.of !== undefined ? [holdKey(line.urn, line.of)]
                    : [...this.holds].filter(([, h]) => h.urn === line.urn).map(([k]) => k);
                for (const key of keys) {
                    const was = this.holds.get(key);
                    if (was && was.at > line.at) continue;
                    if (was?.claim) for (const g of was.claim.grants) this.heldGrants.get(was.claim.parent)?.get(grantKey(g))?.delete(key);
                    const seenIn = line.run ?? run;
                    this.holds.set(key, { urn: line.urn, claim: line.claim, at: line.at, writer, ...(seenIn !== undefined ? { run: seenIn } : {}), ...(line.replaced ? { replaced: true as const } : {}),
                        ...(line.may ? { may: true as const } : {}) });
                    if (line.claim) {
                        let grants = this.heldGrants.get(line.claim.parent);
                        if (!grants) this.heldGrants.set(line.claim.parent, (grants = new Map()));
                        for (const g of line.claim.grants) setOf(grants, grantKey(g)).add(key);
                    }
                }
                return;
            }
        }
    }

    /** The item of key `key`, if its entry is known. */
    item(key: string): Item | undefined {
        return this.items.get(entryOf(key))?.find((i) => i.key === key);
    }

    /** The URNs whose state, as last seen, holds grant `key` on `parent`. */
    heldBy(parent: string, key: string): Iterable<string> {
        return new Set([...(this.heldGrants.get(parent)?.get(key) ?? [])].map((k) => this.holds.get(k)!.urn));
    }

    /** Whether `urn` holds grant `key` on `parent` only as a Diff that may have been a preview's saw it (Held.may). */
    mayHold(parent: string, key: string, urn: string): boolean {
        const holds = [...(this.heldGrants.get(parent)?.get(key) ?? [])].map((k) => this.holds.get(k)!).filter((h) => h.urn === urn);
        return holds.length > 0 && holds.every((h) => h.may === true);
    }

    /** What the resource `urn` of identity `identity` held when last seen, if any run saw it. */
    heldAs(urn: string, identity: string): Held | undefined {
        return this.holds.get(holdKey(urn, identity));
    }

    /** The open items of one grant on a parent. */
    openOf(parent: string, key: string): Item[] {
        return (this.byGrant.get(parent)?.get(key) ?? []).filter((i) => !this.settled.has(i.key) && this.items.has(i.entry.id));
    }

    /** The open items of every entry, of `urn`'s (by: "urn"), or of a parent's (by: "parent"). */
    open(key?: string, by: "urn" | "parent" = "urn"): Item[] {
        const ids = key === undefined ? this.entries.keys() : (by === "urn" ? this.byUrn : this.byParent).get(key) ?? [];
        const out: Item[] = [];
        for (const id of ids) for (const i of this.items.get(id) ?? []) if (!this.settled.has(i.key)) out.push(i);
        return out;
    }
}
/**
 * What tells two resources of one URN apart (a replaced one and its replacement): what their import IDs name — a
 * Member's parent and grant, a Binding's parent and role, a Policy's parent. An update never changes it; only a
 * replacement does (or `--replace`, which keeps it).
 */
export function identityOf(c: Claim): string {
    return `${c.parent}\n${c.scope}\n${c.scope === "member" && c.grants[0] ? grantKey(c.grants[0]) : `${c.role ?? ""}\n${JSON.stringify(c.condition ?? null)}`}`;
}
const holdKey = (urn: string, identity: string) => `${urn}\n${identity}`;

export function setOf<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
    let s = map.get(key);
    if (!s) map.set(key, (s = new Set()));
    return s;
}

