// Who declares which grants in this deployment. The engine sends Check for every resource of the program (and
// again, with the new inputs, for one it replaces), so the plugin knows what the program wants before any
// Delete comes. That is what makes two rules possible:
//   - resources that fight over the same grant, role or policy are told so, each on its own resource;
//   - a Delete removes only what no other resource of the deployment (nor the resource's own replacement)
//     still declares: renaming a resource without an alias, replacing it create-first (`--replace`, a changed
//     provider) or dropping one of two resources that declare one grant never takes the grant away.
// Declarations are also written to a folder shared by the plugin processes of the same engine (an explicit
// provider runs in a process of its own), so a Delete sees what the other processes' resources declare.

import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { describeGrant, Grant, grantKey, roleKey } from "../iam/grants";
import { Condition } from "../iam/policy";
import { alive, ProcessFiles } from "./processFiles";

export type Scope = "policy" | "binding" | "member";

/** What one resource declares of one parent's policy. */
export interface Claim {
    /** The parent's name (`services/S` or `services/S/consumers/P`). */
    parent: string;
    scope: Scope;
    /** The grants it declares (a Policy: all of its bindings'; a Binding: its role's members; a Member: one). */
    grants: Grant[];
    /** A Binding's or Member's role and condition. */
    role?: string;
    condition?: Condition;
}

/** What the rest of the deployment still declares on a parent, for a Delete. */
export interface Kept {
    /** The resource (URN) that declares the whole policy, if any. */
    policy?: string;
    /** grantKey → the resource (URN) that declares the grant. */
    grants: Map<string, string>;
}

/** `type::name` of a URN (`urn:pulumi:stack::project::type::name`): what a person recognises. */
export function shortUrn(urn: string): string {
    return urn.split("::").slice(-2).join("::");
}

/** A warning for one resource. */
export interface Notice {
    urn: string;
    message: string;
}

interface Entry {
    urn: string;
    claim: Claim;
}

/** Where the folders of all deployments are: one per user, in the temporary folder. */
function sharedRoot(): string {
    const user = typeof process.getuid === "function" ? String(process.getuid()) : os.userInfo().username;
    return path.join(os.tmpdir(), `pulumi-resource-cloud-${user}`);
}

/**
 * The folder the plugin processes of one engine share: named by the engine's process (the plugins of a
 * deployment are its children) and address.
 */
function sharedFolder(engineAddress: string): string {
    const id = crypto.createHash("sha256").update(engineAddress).digest("hex").slice(0, 12);
    return path.join(sharedRoot(), `${process.ppid}-${id}`);
}

/** Removes the folders of engines that are gone (their plugins were killed before they could clean up). */
function removeStaleFolders(): void {
    for (const name of fs.readdirSync(sharedRoot())) {
        const pid = Number(name.split("-")[0]);
        if (Number.isInteger(pid) && pid > 1 && !alive(pid)) fs.rmSync(path.join(sharedRoot(), name), { recursive: true, force: true });
    }
}

const isEntry = (e: unknown): e is Entry =>
    typeof (e as Entry)?.urn === "string" && typeof (e as Entry).claim?.parent === "string" && Array.isArray((e as Entry).claim.grants);

export class Declarations {
    private readonly byUrn = new Map<string, Claim>();
    private readonly warned = new Set<string>();
    private engineAddress?: string;
    private files?: ProcessFiles<Entry>;

    /**
     * Shares this process's declarations with the other plugin processes of the same engine. Without it (no
     * engine: tests, a debugger) declarations stay in the process. The folder is opened on first use, not at
     * start-up: a deployment that declares nothing never touches it.
     */
    share(engineAddress: string | undefined): void {
        this.engineAddress ??= engineAddress;
    }

    private get shared(): ProcessFiles<Entry> | undefined {
        if (this.files || !this.engineAddress) return this.files;
        this.files = new ProcessFiles<Entry>(sharedFolder(this.engineAddress));
        try {
            removeStaleFolders();
        } catch {
            // clutter in the temporary folder, nothing more
        }
        for (const [urn, claim] of this.byUrn) this.files.append({ urn, claim }); // declared before the engine was known
        return this.files;
    }

    /** The other processes' declarations (the last line per URN wins). */
    private peers(): Entry[] {
        const out = new Map<string, Entry>();
        for (const { lines } of this.shared?.others() ?? []) for (const e of lines) if (isEntry(e)) out.set(e.urn, e);
        return [...out.values()];
    }

    /**
     * Records what `urn` declares (from Check); returns, once per pair, a warning for each of two resources
     * that fight over a grant, a role or the whole policy.
     */
    declare(urn: string, claim: Claim): Notice[] {
        const shared = this.shared; // opening it writes what byUrn holds so far
        this.byUrn.set(urn, claim);
        shared?.append({ urn, claim });
        const notices: Notice[] = [];
        for (const [other, theirs] of this.byUrn) {
            if (other === urn || theirs.parent !== claim.parent) continue;
            const conflict = conflictOf(claim, theirs);
            if (!conflict) continue;
            const pair = [urn, other].sort().join("\n") + `\n${conflict.kind}`;
            if (this.warned.has(pair)) continue;
            this.warned.add(pair);
            notices.push({ urn, message: conflict.message(other) }, { urn: other, message: conflict.message(urn) });
        }
        return notices;
    }

    /** Whether the program of this deployment declares `urn` (it was checked). */
    has(urn: string): boolean {
        return this.byUrn.has(urn);
    }

    /**
     * What the deployment declares on `parent`, in this process and its peers: each resource's current declaration
     * from Check. A resource being deleted counts only if the program still declares it (then it is its own
     * replacement); its old state is not a declaration.
     */
    kept(parent: string): Kept {
        const kept: Kept = { grants: new Map() };
        const entries = [...this.peers(), ...[...this.byUrn].map(([urn, claim]) => ({ urn, claim }))];
        for (const { urn, claim } of entries) {
            if (claim.parent !== parent) continue;
            if (claim.scope === "policy") kept.policy = urn;
            for (const g of claim.grants) kept.grants.set(grantKey(g), urn);
        }
        return kept;
    }

    /** Removes this process's shared file (the folder too, once empty). */
    close(): void {
        this.files?.close();
    }
}

/** How two claims on one parent conflict, if they do, with the warning for one side naming the other. */
function conflictOf(mine: Claim, theirs: Claim): { kind: string; message(other: string): string } | undefined {
    const parent = mine.parent;
    if (mine.scope === "policy" || theirs.scope === "policy") {
        return {
            kind: "policy",
            message: (other) => `${shortUrn(other)} also manages the IAM policy of ${parent}. A Policy resource owns the ` +
                "whole policy, so every update of it removes the other's grants and every refresh shows them again. " +
                "Manage one parent either with its Policy resource or with Bindings and Members, not both.",
        };
    }
    const sameRole = roleKey(mine.role ?? "", mine.condition) === roleKey(theirs.role ?? "", theirs.condition);
    if (!sameRole) return undefined;
    const role = `${mine.role}${mine.condition ? ` [if ${JSON.stringify(mine.condition.title)}]` : ""}`;
    if (mine.scope === "binding" && theirs.scope === "binding") {
        return {
            kind: "binding",
            message: (other) => `${shortUrn(other)} also sets the members of ${role} on ${parent}: each Binding is ` +
                "authoritative for its role, so every update of one removes the other's members. Keep one Binding per role.",
        };
    }
    if (mine.scope !== theirs.scope) {
        return {
            kind: "binding-member",
            message: (other) => `${shortUrn(other)} and this resource both manage ${role} on ${parent}: the Binding sets ` +
                "the role's members exactly, so it removes the Member's grant on every update and the Member adds it back " +
                "on the next; `pulumi up --refresh` flip-flops. List the member in the Binding, or use Members only for this role.",
        };
    }
    const mineKeys = new Set(mine.grants.map(grantKey));
    const shared = theirs.grants.find((g) => mineKeys.has(grantKey(g)));
    if (!shared) return undefined;
    return {
        kind: "grant",
        message: (other) => `${shortUrn(other)} declares the same grant (${describeGrant(shared)} on ${parent}; IAM ` +
            "compares emails without regard to case): remove one of the two resources. While both are declared, " +
            "deleting one leaves the grant in place for the other.",
    };
}
