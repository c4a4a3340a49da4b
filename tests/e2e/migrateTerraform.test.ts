// Coming from Terraform (the guide docs/migrate-from-terraform.md, which the README links), with the real `pulumi`
// CLI and YAML host, the plugin installed from its tarball, Terraform itself where it is on PATH, against the
// emulator. The emulator holds the grants the fixture state's resources made, as the google provider writes them
// (tests/migrate/terraformState.ts), and grants no resource declares. The guide's commands run as written: the
// state pulled, `migrate-from-terraform` through `pulumi plugin run` (its printed text is the guide's, and it sends
// nothing), `pulumi import --file` (no setIamPolicy), the checks with the program `pulumi import` wrote (refresh,
// preview and up change nothing, no setIamPolicy), the `terraform state rm` line the migration printed; then `pulumi
// destroy` removes exactly the declared grants and leaves the others. Each bad input is refused through the real CLI,
// writing nothing.

import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Binding, Emulator, startEmulator } from "../../emulator";
import { canonicalBindings } from "../../provider/iam/policy";
import { appliedPolicies, iamInstances, loadState, TFSTATE } from "../migrate/terraformState";
import { onPath, PulumiSandbox, ROOT, RunResult, SERVICE, skipUnless, toolsMissing, yaml } from "./support";

const GUIDE = fs.readFileSync(path.join(ROOT, "docs", "migrate-from-terraform.md"), "utf8");
/** The guide's fenced blocks of one language, in order. */
const blocks = (lang: string) => [...GUIDE.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]);

/** The services the fixture's grants are on. */
const SERVICES = [SERVICE, "inventory.endpoints.example-project.cloud.goog"];
const ROLE = "roles/servicemanagement.serviceConsumer";
/** Grants no resource of the state declares, on the parents of its Bindings and Members (in roles no Binding owns). */
const OUTSIDE: Record<string, Binding[]> = {
    [`services/${SERVICE}`]: [{ role: ROLE, members: ["user:other@example.com"] }, { role: "roles/servicemanagement.quotaViewer", members: ["user:quota@example.com"] }],
    [`services/${SERVICE}/consumers/consumer-project-1`]: [{ role: ROLE, members: ["user:outsider@example.com"] }],
};

/** Bindings merged by role and condition, as Google keeps them, in canonical order. */
function merged(bindings: Binding[]): Binding[] {
    const out = new Map<string, Binding>();
    for (const b of bindings) {
        const key = JSON.stringify([b.role, b.condition ?? null]);
        out.set(key, { ...b, members: [...new Set([...(out.get(key)?.members ?? []), ...b.members])].sort() });
    }
    return canonicalBindings([...out.values()]);
}

describe("e2e: coming from Terraform (the guide) with the real engine", function () {
    this.timeout(900_000);
    this.slow(120_000);

    const token = `e2e-terraform-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;
    const setIamPolicies = () => emu.requests.filter((q) => q.method === "POST" && q.path.endsWith(":setIamPolicy"));
    // Terraform with no CLI configuration of the machine's.
    const bash = (script: string, dir: string, fails = false): Promise<RunResult> =>
        sb.script(script, dir, { env: { TF_CLI_CONFIG_FILE: "", TF_IN_AUTOMATION: "1" }, fails });

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token], allowConditions: true });
        for (const s of SERVICES) emu.createService(s, "example-project");
        sb = await PulumiSandbox.create("terraform");
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    it("the guide has its five command blocks and four printed texts", () => {
        expect(blocks("sh")).to.have.length(5);
        expect(blocks("text")).to.have.length(4);
    });

    it("the guide's commands move every grant: nothing written until destroy, which removes exactly the declared grants", async () => {
        const [pull, migrate, importCmd, check, stateRm] = blocks("sh");
        const [migrated, imported, unchanged, removed] = blocks("text");
        const terraform = onPath("terraform", sb.env.PATH);
        if (!terraform) process.stdout.write("      (terraform is not on PATH: the state is copied, and `terraform state rm` is not run)\n");

        // Google holds what Terraform applied, and grants nobody declares.
        const applied = appliedPolicies(loadState());
        for (const [parent, bindings] of applied) emu.setPolicy(parent, { bindings: merged([...bindings, ...(OUTSIDE[parent] ?? [])]) });
        const before = new Map([...applied.keys()].map((p) => [p, emu.getPolicy(p).bindings ?? []]));

        // The Terraform configuration's folder is the Pulumi project's, its local state the fixture.
        const dir = sb.project("moved", { "Pulumi.yaml": "name: moved\nruntime: yaml\n", "terraform.tfstate": fs.readFileSync(TFSTATE, "utf8") });
        await sb.initStack(dir, emu.url, token);
        if (terraform) await bash(pull, dir);
        else fs.copyFileSync(TFSTATE, path.join(dir, "terraform-state.json"));
        expect(JSON.parse(fs.readFileSync(path.join(dir, "terraform-state.json"), "utf8")).version).to.equal(4);

        // The migration: the guide's text is what it prints; it sends nothing to Google.
        emu.resetRequests();
        const said = (await bash(migrate, dir)).stderr;
        expect(emu.requests, "the migration sends nothing").to.deep.equal([]);
        const from = said.indexOf("pulumi-resource-cloud migrate-from-terraform: wrote");
        expect(said.slice(from, from + migrated.length), "the guide shows what the command prints").to.equal(migrated);
        const file = JSON.parse(fs.readFileSync(path.join(dir, "import.json"), "utf8")) as { resources: { terraformAddress: string }[] };
        expect(file.resources.map((r) => r.terraformAddress).sort()).to.deep.equal(iamInstances(loadState()).map((i) => i.address).sort());
        const printedRm = said.split("\n").map((l) => l.trim()).find((l) => l.startsWith("terraform state rm "));
        expect(printedRm, "the guide's `terraform state rm` is the one printed").to.equal(stateRm.trim());

        // The import reads, and writes nothing.
        const imp = await bash(importCmd, dir);
        expect(imp.stdout, imp.stdout).to.contain(imported.trimEnd());
        expect(setIamPolicies(), imp.stdout).to.deep.equal([]);

        // The program: the code `pulumi import` wrote, added to it; the checks change nothing, write nothing.
        const code = fs.readFileSync(path.join(dir, "imported.yaml"), "utf8");
        fs.appendFileSync(path.join(dir, "Pulumi.yaml"), code);
        emu.resetRequests();
        const checked = await bash(check, dir);
        for (const line of unchanged.trim().split("\n")) expect(checked.stdout, checked.stdout).to.contain(line.trim());
        expect(setIamPolicies(), checked.stdout).to.deep.equal([]);
        for (const [p, bindings] of before) expect(merged(emu.getPolicy(p).bindings ?? []), p).to.deep.equal(merged(bindings));

        // Terraform lets go of the moved addresses, and keeps the rest.
        if (terraform) {
            const rm = await bash(stateRm, dir);
            expect(rm.stdout).to.contain(removed.trim());
            const left = (await bash("terraform state list", dir)).stdout.trim().split("\n").sort();
            expect(left).to.deep.equal([
                "data.google_endpoints_service_iam_policy.current", "google_endpoints_service.api", "google_project_iam_member.ci",
                "module.tenants[\"acme\"].data.google_endpoints_service_iam_policy.current",
            ]);
        }

        // Destroy removes what the resources declare: the Policies' parents emptied, the outside grants kept.
        await sb.pulumi(["destroy", "--yes"], dir);
        for (const parent of applied.keys()) expect(merged(emu.getPolicy(parent).bindings ?? []), parent).to.deep.equal(merged(OUTSIDE[parent] ?? []));
    });

    it("--provider: the imports on an explicit cloud provider of the stack, the program's code naming it; nothing to change, nothing written", async () => {
        for (const [parent, bindings] of appliedPolicies(loadState())) emu.setPolicy(parent, { bindings: merged([...bindings, ...(OUTSIDE[parent] ?? [])]) });
        // No stack config: only the explicit provider reaches the emulator.
        const program = `name: explicit\nruntime: yaml\nresources:\n${yaml.resource("prod", "pulumi:providers:cloud", { serviceManagementCustomEndpoint: emu.url, accessToken: token })}`;
        const dir = sb.project("explicit", { "Pulumi.yaml": program, "terraform-state.json": fs.readFileSync(TFSTATE, "utf8") });
        await sb.pulumi(["stack", "init", "dev"], dir);
        await sb.pulumi(["up", "--yes"], dir);
        const urn = "urn:pulumi:dev::explicit::pulumi:providers:cloud::prod";
        await bash(`pulumi plugin run --kind resource cloud@8.38.0 -- migrate-from-terraform --in terraform-state.json --out import.json --provider prod=${urn}`, dir);
        emu.resetRequests();
        const imp = await sb.pulumi(["import", "--file", "import.json", "--yes", "--protect=false", "--out", "imported.yaml"], dir);
        expect(imp.stdout).to.contain("= 10 imported");
        expect(setIamPolicies()).to.deep.equal([]);
        const code = fs.readFileSync(path.join(dir, "imported.yaml"), "utf8");
        expect(code).to.contain("provider: ${prod}");
        // The code's resources join the program's.
        fs.appendFileSync(path.join(dir, "Pulumi.yaml"), code.replace(/^resources:\n/, ""));
        await sb.pulumi(["preview", "--expect-no-changes"], dir);
        const state = JSON.parse((await sb.pulumi(["stack", "export"], dir)).stdout) as { deployment: { resources: { type: string; provider?: string }[] } };
        const imported = state.deployment.resources.filter((r) => r.type.startsWith("cloud:endpoints/"));
        expect(imported).to.have.length(10);
        for (const r of imported) expect(r.provider).to.match(new RegExp(`^${urn.replace(/[$]/g, "\\$&")}::`));
        expect(setIamPolicies()).to.deep.equal([]);
        await sb.pulumi(["destroy", "--yes"], dir);
    });

    it("each bad input is refused through `pulumi plugin run`: exit non-zero, the file and the address named, nothing written", async () => {
        const dir = sb.project("bad", { "Pulumi.yaml": "name: bad\nruntime: yaml\n" });
        const put = (name: string, value: unknown) => fs.writeFileSync(path.join(dir, name), typeof value === "string" ? value : JSON.stringify(value));
        const state = loadState();
        put("pulumi-export.json", { version: 3, deployment: { resources: [] } });
        put("old.tfstate", { version: 3, terraform_version: "0.11.14", serial: 1, lineage: "x", modules: [] });
        put("none.tfstate", { ...state, resources: state.resources.filter((r) => !r.type.includes("_iam_") || r.mode === "data") });
        const broken = loadState();
        delete broken.resources.find((r) => r.name === "bob")!.instances[0].attributes.member;
        put("broken.tfstate", broken);
        put("garbage.tfstate", "not json");
        const cases: [string, string][] = [
            ["missing.tfstate", "cannot read missing.tfstate: no such file"],
            ["garbage.tfstate", "garbage.tfstate is not a Terraform state: not JSON"],
            ["pulumi-export.json", "pulumi-export.json is not a Terraform state"],
            ["old.tfstate", "old.tfstate is a Terraform state of format version 3; this command reads version 4"],
            ["none.tfstate", "none.tfstate holds no instance of google_endpoints_service_iam_policy"],
            ["broken.tfstate", "broken.tfstate: google_endpoints_service_iam_member.bob: `member` is missing"],
        ];
        emu.resetRequests();
        for (const [input, why] of cases) {
            const r = await bash(`pulumi plugin run --kind resource cloud@8.38.0 -- migrate-from-terraform --in ${input} --out import.json`, dir, true);
            expect(r.code, input).to.not.equal(0);
            expect(r.stderr, input).to.contain(why).and.contain("nothing was written");
            expect(fs.existsSync(path.join(dir, "import.json")), input).to.equal(false);
        }
        expect(emu.requests).to.deep.equal([]);
    });
});
