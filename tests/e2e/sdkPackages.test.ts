// The installable SDK packages `npm run sdk` builds into dist/sdk (scripts/sdk.sh), each installed into an empty
// project as the README says and used there (sdkInstall.ts):
// - npm: plain Node requires it and runs resources and a lookup under Pulumi's mocks; every TypeScript example in
//   schema.json compiles against it (strict tsc).
// - Python: the wheel builds without a setuptools warning; installed beside `pulumi` from PyPI, every Python
//   example in schema.json runs under Pulumi's mocks.
// - Go: the module builds on its own (its go.sum is complete); fetched through GOPROXY=file://…, every Go example in
//   schema.json builds (go vet) against it.
// - Java: the jar, with com.pulumi:pulumi from Maven Central, compiles every Java example in schema.json.
// Each needs its toolchain (and a registry); without one it skips, saying why (CI: fails).

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { LANGUAGES, Language } from "../../provider/declare/examples";
import { NPM_PACKAGE_NAME } from "../../provider/schema/schema";
import { tempDir } from "../support/temp";
import { goVetPrograms, javaCompilePrograms, npmProjectWithSdk, pythonWithWheel, runPythonUnderMocks, env, typecheck } from "./sdkInstall";
import { ROOT, e2eNeeds, ok, run, skipUnless } from "./support";

const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));
const ITEMS = Object.keys(schema.functions).length + Object.keys(schema.resources).length;

/** Every example program of one language in schema.json's descriptions, each headed by where it came from. */
function examples(language: Language): string[] {
    expect(LANGUAGES).to.include(language);
    const comment = language === "python" || language === "yaml" ? "#" : "//";
    const out: string[] = [];
    for (const items of [schema.functions, schema.resources]) {
        for (const [token, spec] of Object.entries(items as Record<string, { description: string }>)) {
            const fence = new RegExp("```" + language + "\\n([\\s\\S]*?)\\n```", "g");
            for (const m of spec.description.matchAll(fence)) out.push(`${comment} example of ${token}\n${m[1]}\n`);
        }
    }
    expect(out.length, `${language} examples`).to.equal(ITEMS);
    return out;
}

describe("SDK packages (npm run sdk → dist/sdk), installed into empty projects", function () {
    this.timeout(1_200_000);
    this.slow(120_000);

    it("npm: plain Node loads it and runs it under mocks; the TypeScript examples compile against it", async function () {
        skipUnless(this, e2eNeeds("npm"));
        const dir = await npmProjectWithSdk("npm");
        const program = `
const pulumi = require("@pulumi/pulumi");
pulumi.runtime.setMocks({
    newResource: (a) => ({ id: a.name + "-id", state: { ...a.inputs, etag: "BwX" } }),
    call: (a) => ({ ...a.inputs, policyData: JSON.stringify({ bindings: a.inputs.bindings }), id: "1", auditConfigs: [] }),
}, "proj", "stack", false);
const cloud = require(${JSON.stringify(NPM_PACKAGE_NAME)});
const admin = cloud.organizations.getIAMPolicyOutput({ bindings: [{ role: "roles/viewer", members: ["user:jane@example.com"] }] });
const policy = new cloud.endpoints.ServiceIamPolicy("p", { serviceName: "s.endpoints.p.cloud.goog", policyData: admin.policyData });
const got = cloud.endpoints.ServiceIamMember.get("m", "id", { role: "roles/viewer" });
pulumi.all([policy.policyData, policy.etag, got.urn]).apply(([d, e, u]) => console.log(JSON.stringify({ d, e, u })));
`;
        const r = await ok(run("node", ["-e", program], { cwd: dir, env: env() }), "node (plain, no ts-node)");
        const printed = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}");
        expect(JSON.parse(printed.d)).to.deep.equal({ bindings: [{ role: "roles/viewer", members: ["user:jane@example.com"] }] });
        expect(printed.e).to.equal("BwX");
        expect(printed.u).to.match(/::cloud:endpoints\/serviceIamMember:ServiceIamMember::m$/);

        await typecheck(dir, Object.fromEntries(examples("typescript").map((code, i) => [`example${i}.ts`, code])));
    });

    it("Python: the wheel builds without warnings, installs beside pulumi, and the Python examples run under mocks", async function () {
        skipUnless(this, e2eNeeds("python3"));
        // Built verbosely to see setuptools' warnings (pip hides them otherwise).
        const dir = tempDir("python");
        fs.cpSync(path.join(ROOT, "sdk", "python"), path.join(dir, "src"), { recursive: true });
        const verbose = await ok(run("python3", ["-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", path.join(dir, "w"), path.join(dir, "src")],
            { cwd: dir, env: env(), timeoutMs: 600_000 }), "pip wheel -v");
        expect((verbose.stdout + verbose.stderr).split("\n").filter((l) => /Setuptools\w*Warning|cannot be found/.test(l))).to.deep.equal([]);

        const py = await pythonWithWheel("python");
        const { exported, registered } = await runPythonUnderMocks(py, examples("python"));
        expect(registered).to.deep.equal(Object.keys(schema.resources).sort());
        expect(exported).to.have.length(3); // the three lookups' examples export policyData
        expect(exported.map((x) => JSON.parse(String(x)))).to.deep.include({ bindings: [{ role: "roles/servicemanagement.serviceConsumer", members: ["user:jane@example.com"] }] });
    });

    it("Go: the module builds on its own; through GOPROXY=file://…, the Go examples build against it", async function () {
        skipUnless(this, e2eNeeds("go"));
        const alone = tempDir("go-alone");
        fs.cpSync(path.join(ROOT, "sdk", "go"), alone, { recursive: true });
        await ok(run("go", ["build", "./..."], { cwd: alone, env: env({ GOFLAGS: "-mod=readonly" }), timeoutMs: 900_000 }), "go build ./... in sdk/go alone");
        await goVetPrograms("go-examples", examples("go"));
    });

    it("Java: the jar (Maven) compiles the Java examples", async function () {
        skipUnless(this, e2eNeeds("mvn"));
        expect(await javaCompilePrograms("java-examples", examples("java"))).to.have.length(ITEMS);
    });
});
