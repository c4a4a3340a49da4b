// The Java program of tests/e2e/programs/java-run (runtime: java): both lookups and one ServiceIamMember through the
// Java SDK jar `npm run sdk` builds, compiled and run by pulumi-language-java (Maven) under the real engine,
// configured by stack config (endpoint, secret token), against the emulator; then destroyed.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Emulator, startEmulator } from "../../emulator";
import { DIST, buildSdk } from "./sdkInstall";
import { CONSUMER, PulumiSandbox, ROOT, SERVICE, VERSION, assertNeverInClear, copyTree, onPath, skipUnless, stackOutputs, toolsMissing } from "./support";

const SERVICE_PARENT = `services/${SERVICE}`;
const CONSUMER_PARENT = `services/${SERVICE}/consumers/${CONSUMER}`;
const ROLE = "roles/servicemanagement.serviceConsumer";
const MEMBER = "user:java@example.com";
const SEEDED = [
    { role: ROLE, members: ["group:readers@example.com", "user:alice@example.com"] },
    { role: "roles/viewer", members: ["user:bob@example.com"] },
];

describe("e2e: Java program (runtime: java, Maven, the SDK jar) with the real engine", function () {
    this.timeout(1_200_000);
    this.slow(120_000);

    const token = `e2e-java-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    let dir: string;
    const membersOf = (role: string) => (emu.getPolicy(SERVICE_PARENT).bindings ?? []).filter((b) => b.role === role).flatMap((b) => b.members).sort();

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-java"]) ?? (onPath("mvn") ? undefined : "mvn is not on PATH"));
        await buildSdk("java");
        emu = await startEmulator({ accessTokens: [token] });
        emu.createService(SERVICE, "example-project");
        emu.setPolicy(SERVICE_PARENT, { bindings: SEEDED });
        emu.setPolicy(CONSUMER_PARENT, { bindings: [{ role: "roles/viewer", members: ["user:carol@example.com"] }] });
        sb = await PulumiSandbox.create("java");
        dir = sb.project("java", { "Pulumi.yaml": "name: endpoints-java\nruntime: java\n" });
        copyTree(path.join(ROOT, "tests", "e2e", "programs", "java-run"), dir);
        fs.mkdirSync(path.join(dir, "lib"));
        fs.copyFileSync(path.join(DIST, `cloud-${VERSION}.jar`), path.join(dir, "lib", "cloud.jar"));
        await sb.initStack(dir, emu.url, token);
        for (const [k, v] of [["service", SERVICE], ["consumer", CONSUMER], ["member", MEMBER]]) await sb.pulumi(["config", "set", k, v], dir);
    });

    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("up: both lookups export what the API holds, and the member is granted", async () => {
        await sb.pulumi(["up", "--yes", "--skip-preview"], dir);
        const out = await stackOutputs(sb, dir);
        const policy = emu.getPolicy(SERVICE_PARENT);
        expect(out.serviceId).to.equal(SERVICE_PARENT);
        expect(JSON.parse(out.servicePolicyData as string)).to.deep.equal({ bindings: SEEDED });
        expect(out.consumers).to.deep.equal(SEEDED[0].members);
        expect(out.consumerId).to.equal(CONSUMER_PARENT);
        expect(out.grantId).to.equal(`${SERVICE_PARENT} ${ROLE} ${MEMBER}`);
        expect(out.grantEtag).to.equal(policy.etag);
        expect(membersOf(ROLE)).to.deep.equal([...SEEDED[0].members, MEMBER].sort());
        expect(membersOf("roles/viewer")).to.deep.equal(SEEDED[1].members);
    });

    it("destroy: the member is removed, everything else stays; the token is never in clear", async () => {
        await sb.pulumi(["destroy", "--yes", "--skip-preview"], dir);
        expect(membersOf(ROLE)).to.deep.equal(SEEDED[0].members);
        expect(membersOf("roles/viewer")).to.deep.equal(SEEDED[1].members);
        assertNeverInClear(sb, token, [fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8")]);
    });
});
