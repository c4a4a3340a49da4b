// Where a stack's crash journal lives (provider/deployment/location.ts) and when a process whose journal is in a
// bucket counts as dead (lease.ts): pure rules, checked here; the e2e tests (tests/e2e/travels.test.ts) run them
// with the real CLI, a GCS emulator and a fresh runner.

import { expect } from "chai";
import * as path from "path";
import { backendName, backendOf, journalLocation, locationOf, projectBackendUrl } from "../../provider/deployment/location";
import { leaseRuns, LEASE_RENEW_MS, LEASE_WINDOW_MS } from "../../provider/deployment/lease";

const HOME = "/home/u";
const CWD = "/work/proj";

function sources(env: NodeJS.ProcessEnv, files: Record<string, string>) {
    return { env, home: HOME, cwd: CWD, read: (f: string) => files[f] };
}

describe("the journal's location: the backend found as the CLI finds it", () => {
    const creds = (current: string) => JSON.stringify({ current, accessTokens: {} });

    it("PULUMI_BACKEND_URL first, then the project's backend.url, then credentials.json's current", () => {
        const files = {
            [path.join(CWD, "Pulumi.yaml")]: "name: p\nruntime: yaml\nbackend:\n  url: gs://from-project/pre\n",
            [path.join(HOME, ".pulumi", "credentials.json")]: creds("gs://from-login"),
        };
        expect(backendOf(sources({ PULUMI_BACKEND_URL: "file:///env" }, files))).to.equal("file:///env");
        expect(backendOf(sources({}, files))).to.equal("gs://from-project/pre");
        expect(backendOf(sources({}, { [path.join(HOME, ".pulumi", "credentials.json")]: creds("gs://from-login") }))).to.equal("gs://from-login");
        expect(backendOf(sources({}, {}))).to.equal("");
    });

    it("credentials.json from PULUMI_CREDENTIALS_PATH, else PULUMI_HOME", () => {
        const files = { "/creds/credentials.json": creds("gs://a"), "/ph/credentials.json": creds("gs://b") };
        expect(backendOf(sources({ PULUMI_CREDENTIALS_PATH: "/creds", PULUMI_HOME: "/ph" }, files))).to.equal("gs://a");
        expect(backendOf(sources({ PULUMI_HOME: "/ph" }, files))).to.equal("gs://b");
    });

    it("backend.url in a project file: the block form, quoted or not, a comment after; none outside the block", () => {
        expect(projectBackendUrl("backend:\n  url: 'gs://b/x' # ours\nruntime: yaml\n")).to.equal("gs://b/x");
        expect(projectBackendUrl("name: p\nbackend:   \n    url: \"file://~\"\n")).to.equal("file://~");
        expect(projectBackendUrl("name: p\nbackend:\n  other: 1\nurl: gs://not-this\n")).to.equal(undefined);
        expect(projectBackendUrl("name: p\nruntime: yaml\n")).to.equal(undefined);
    });

    it("gs:// and file:// are locations, in one spelling; other backends are not", () => {
        expect(locationOf("gs://bkt", HOME, CWD)).to.deep.equal({ kind: "bucket", bucket: "bkt", prefix: "", url: "gs://bkt" });
        expect(locationOf("gs://bkt/a/b/?x=1", HOME, CWD)).to.deep.equal({ kind: "bucket", bucket: "bkt", prefix: "a/b", url: "gs://bkt/a/b" });
        expect(locationOf("file://~", HOME, CWD)).to.deep.equal({ kind: "folder", root: HOME, url: `file://${HOME}` });
        expect(locationOf("file://state", HOME, CWD)).to.deep.include({ root: path.join(CWD, "state") });
        expect(locationOf("file:///srv/state/", HOME, CWD)).to.deep.include({ root: "/srv/state" });
        for (const other of ["https://api.pulumi.com", "s3://b", "azblob://c", "postgres://h/db", ""]) expect(locationOf(other, HOME, CWD)).to.equal(undefined);
        // Two runners that spell one backend apart (a login with a slash, a variable without) key one journal.
        expect(backendName("gs://bkt/", HOME, CWD)).to.equal(backendName("gs://bkt", HOME, CWD));
        expect(backendName("https://api.pulumi.com", HOME, CWD)).to.equal("https://api.pulumi.com");
    });

    it("PULUMI_CLOUD_JOURNAL_URL names the location for any backend; without it a backend with no bucket or folder keeps PULUMI_HOME", () => {
        expect(journalLocation("https://api.pulumi.com", { PULUMI_CLOUD_JOURNAL_URL: "gs://j/ci" }, HOME, CWD)).to.deep.include({ kind: "bucket", bucket: "j", prefix: "ci" });
        expect(journalLocation("s3://b", {}, HOME, CWD)).to.deep.equal({ kind: "home" });
        expect(journalLocation("gs://state", {}, HOME, CWD)).to.deep.include({ kind: "bucket", bucket: "state" });
        expect(journalLocation("file:///srv", {}, HOME, CWD)).to.deep.include({ kind: "folder", root: "/srv" });
        const bad = journalLocation("gs://state", { PULUMI_CLOUD_JOURNAL_URL: "s3://nope" }, HOME, CWD);
        expect(bad.kind).to.equal("home");
        expect(bad.error).to.contain("PULUMI_CLOUD_JOURNAL_URL").and.contain("s3://nope").and.contain("gs://bucket[/prefix]");
    });
});

describe("the lease of a process whose journal is in a bucket", () => {
    const now = 1_000_000;

    it("renewed well under GCS's one write per second per object, the window several renewals long", () => {
        expect(LEASE_RENEW_MS).to.be.at.least(2000);
        expect(LEASE_WINDOW_MS).to.be.at.least(5 * LEASE_RENEW_MS);
    });

    it("runs within the window of its latest write, by the bucket's clock; dead at the window's end", () => {
        expect(leaseRuns({ closed: false, renewed: now - LEASE_WINDOW_MS + 1 }, now)).to.equal(true);
        expect(leaseRuns({ closed: false, renewed: now - LEASE_WINDOW_MS }, now)).to.equal(false);
        expect(leaseRuns({ closed: false, renewed: now - 10 * LEASE_WINDOW_MS }, now)).to.equal(false);
    });

    it("a process that said it ended is dead at once; one never seen to write is dead", () => {
        expect(leaseRuns({ closed: true, renewed: now }, now)).to.equal(false);
        expect(leaseRuns({ closed: false }, now)).to.equal(false);
    });

    it("on this host and PID namespace its PID tells, whatever the lease says", () => {
        expect(leaseRuns({ pid: false, closed: false, renewed: now }, now)).to.equal(false);
        expect(leaseRuns({ pid: true, closed: true, renewed: now - 10 * LEASE_WINDOW_MS }, now)).to.equal(true);
    });
});
