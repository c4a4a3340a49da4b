// The installable SDK packages `npm run sdk` builds into dist/sdk (scripts/sdk.sh), each installed into an empty
// project as the README says and used there:
// - npm: installed with npm beside @pulumi/pulumi; plain Node requires it and runs resources and a lookup under
//   Pulumi's mocks; every TypeScript example in schema.json compiles against it (strict tsc).
// - Python: the wheel builds without a setuptools warning, installs beside `pulumi` from PyPI, and every Python
//   example in schema.json runs under Pulumi's mocks.
// - Go: the module builds on its own (its go.sum is complete); fetched through GOPROXY=file://…/goproxy, every Go
//   example in schema.json builds against it.
// - Java: the jar, with com.pulumi:pulumi from Maven Central, compiles every Java example in schema.json.
// Each needs its toolchain (and a registry); without one it skips, saying why (CI: fails).

import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { LANGUAGES, Language } from "../../provider/examples";
import { NPM_PACKAGE_NAME } from "../../provider/schema";
import { PULUMI_SDK_VERSION, ROOT, VERSION, ok, onPath, run, skipUnless } from "./support";

const DIST = path.join(ROOT, "dist", "sdk");
const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));

/** Every example program of one language in schema.json's descriptions, with where it came from. */
function examples(language: Language): { from: string; code: string }[] {
    expect(LANGUAGES).to.include(language);
    const out: { from: string; code: string }[] = [];
    for (const [kind, items] of [["functions", schema.functions], ["resources", schema.resources]] as const) {
        for (const [token, spec] of Object.entries(items as Record<string, { description: string }>)) {
            const fence = new RegExp("```" + language + "\\n([\\s\\S]*?)\\n```", "g");
            for (const m of spec.description.matchAll(fence)) out.push({ from: `${kind} ${token}`, code: m[1] });
        }
    }
    expect(out.length, `${language} examples`).to.equal(Object.keys(schema.functions).length + Object.keys(schema.resources).length);
    return out;
}

function tempDir(name: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cloud-sdk-${name}-`));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    return dir;
}

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", ...extra });

describe("SDK packages (npm run sdk → dist/sdk), installed into empty projects", function () {
    this.timeout(1_200_000);
    this.slow(120_000);

    const build = (language: string) => ok(run("bash", [path.join(ROOT, "scripts", "sdk.sh"), language], { cwd: ROOT, env: env(), timeoutMs: 900_000 }), `scripts/sdk.sh ${language}`);

    it("npm: plain Node loads it and runs it under mocks; the TypeScript examples compile against it", async function () {
        skipUnless(this, onPath("npm") ? undefined : "npm is not on PATH");
        await build("nodejs");
        const tgz = path.join(DIST, `${NPM_PACKAGE_NAME}-${VERSION}.tgz`);
        const dir = tempDir("npm");
        fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "uses-sdk", private: true }));
        const devPkgs = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies as Record<string, string>;
        await ok(run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tgz, `@pulumi/pulumi@${PULUMI_SDK_VERSION}`,
            `typescript@${devPkgs.typescript}`, `@types/node@${devPkgs["@types/node"]}`], { cwd: dir, env: env(), timeoutMs: 600_000 }), "npm install");

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
        const printed = JSON.parse(r.stdout.trim().split("\n").pop()!);
        expect(JSON.parse(printed.d)).to.deep.equal({ bindings: [{ role: "roles/viewer", members: ["user:jane@example.com"] }] });
        expect(printed.e).to.equal("BwX");
        expect(printed.u).to.match(/::cloud:endpoints\/serviceIamMember:ServiceIamMember::m$/);

        const ex = examples("typescript");
        ex.forEach((e, i) => fs.writeFileSync(path.join(dir, `example${i}.ts`), `// ${e.from}\n${e.code}\n`));
        fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({
            compilerOptions: { strict: true, noEmit: true, target: "ES2020", module: "commonjs", moduleResolution: "node", types: ["node"] },
            include: ["example*.ts"],
        }));
        await ok(run(path.join(dir, "node_modules", ".bin", "tsc"), ["-p", dir], { cwd: dir, env: env() }), "tsc (TypeScript examples)");
    });

    it("Python: the wheel builds without warnings, installs beside pulumi, and the Python examples run under mocks", async function () {
        skipUnless(this, onPath("python3") ? undefined : "python3 is not on PATH");
        // Built verbosely to see setuptools' warnings (pip hides them otherwise).
        const dir = tempDir("python");
        fs.cpSync(path.join(ROOT, "sdk", "python"), path.join(dir, "src"), { recursive: true });
        const verbose = await ok(run("python3", ["-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", path.join(dir, "w"), path.join(dir, "src")],
            { cwd: dir, env: env(), timeoutMs: 600_000 }), "pip wheel -v");
        expect((verbose.stdout + verbose.stderr).split("\n").filter((l) => /Setuptools\w*Warning|cannot be found/.test(l))).to.deep.equal([]);
        await build("python");
        const wheel = path.join(DIST, `pulumi_cloud-${VERSION}-py3-none-any.whl`);
        expect(fs.existsSync(wheel), wheel).to.equal(true);

        const py = path.join(dir, "venv", "bin", "python");
        await ok(run("python3", ["-m", "venv", path.join(dir, "venv")], { cwd: dir, env: env() }), "python3 -m venv");
        await ok(run(py, ["-m", "pip", "install", "--quiet", wheel, `pulumi==${PULUMI_SDK_VERSION}`], { cwd: dir, env: env(), timeoutMs: 600_000 }), "pip install");
        const ex = examples("python");
        const runner = [
            "import json, sys, pulumi",
            "class Mocks(pulumi.runtime.Mocks):",
            "    def new_resource(self, a):",
            "        return [a.name + '-id', {**a.inputs, 'etag': 'BwX'}]",
            "    def call(self, a):",
            "        return {**a.args, 'policyData': json.dumps({'bindings': a.args.get('bindings', [])}), 'etag': 'BwX', 'id': 'x', 'bindings': [], 'auditConfigs': []}",
            "pulumi.runtime.set_mocks(Mocks(), preview=False)",
            "exported = []",
            "pulumi.export = lambda name, value: exported.append(value)",
            "for i, path in enumerate(sys.argv[1:]):",
            "    exec(compile(open(path).read(), path, 'exec'), {'__name__': f'example{i}'})",
            "import asyncio",
            "values = asyncio.get_event_loop().run_until_complete(asyncio.gather(*[o.future() for o in exported]))",
            "print('EXPORTS', json.dumps(values))",
        ].join("\n");
        fs.writeFileSync(path.join(dir, "run_examples.py"), runner);
        const files = ex.map((e, i) => {
            const f = path.join(dir, `example${i}.py`);
            fs.writeFileSync(f, `# ${e.from}\n${e.code}\n`);
            return f;
        });
        const r = await ok(run(py, [path.join(dir, "run_examples.py"), ...files], { cwd: dir, env: env() }), "python examples under mocks");
        const line = r.stdout.split("\n").find((l) => l.startsWith("EXPORTS "));
        expect(line, r.stdout + r.stderr).to.be.a("string");
        const values = JSON.parse(line!.slice("EXPORTS ".length)) as string[];
        expect(values.length).to.equal(3); // the three lookups' examples export policyData
    });

    it("Go: the module builds on its own; through GOPROXY=file://…, the Go examples build against it", async function () {
        skipUnless(this, onPath("go") ? undefined : "go is not on PATH");
        const alone = tempDir("go-alone");
        fs.cpSync(path.join(ROOT, "sdk", "go"), alone, { recursive: true });
        await ok(run("go", ["build", "./..."], { cwd: alone, env: env({ GOFLAGS: "-mod=readonly" }), timeoutMs: 900_000 }), "go build ./... in sdk/go alone");

        await build("go");
        const module = fs.readFileSync(path.join(ROOT, "sdk", "go", "go.mod"), "utf8").match(/^module (\S+)$/m)![1];
        const dir = tempDir("go-use");
        const proxy = path.join(DIST, "goproxy");
        const goEnv = env({ GOPROXY: `file://${proxy},${process.env.GOPROXY ?? "https://proxy.golang.org"}`, GONOSUMDB: module.split("/")[0], GOFLAGS: "-mod=mod" });
        await ok(run("go", ["mod", "init", "example.com/uses-sdk"], { cwd: dir, env: goEnv }), "go mod init");
        await ok(run("go", ["get", `${module}@v${VERSION}`, `github.com/pulumi/pulumi/sdk/v3@v${PULUMI_SDK_VERSION}`], { cwd: dir, env: goEnv, timeoutMs: 600_000 }), "go get the SDK");
        examples("go").forEach((e, i) => {
            fs.mkdirSync(path.join(dir, `example${i}`));
            fs.writeFileSync(path.join(dir, `example${i}`, "main.go"), `// ${e.from}\n${e.code}\n`);
        });
        await ok(run("go", ["mod", "tidy"], { cwd: dir, env: goEnv, timeoutMs: 600_000 }), "go mod tidy");
        await ok(run("go", ["vet", "./..."], { cwd: dir, env: goEnv, timeoutMs: 900_000 }), "go vet (Go examples)");
    });

    it("Java: the jar (Maven) compiles the Java examples", async function () {
        skipUnless(this, onPath("mvn") ? undefined : "mvn is not on PATH");
        await build("java");
        const jar = path.join(DIST, `cloud-${VERSION}.jar`);
        const dir = tempDir("java");
        const pom = fs.readFileSync(path.join(ROOT, "tests", "e2e", "programs", "java", "pom.xml"), "utf8")
            .replace("<dependencies>", `<dependencies>
        <dependency>
            <groupId>com.pulumi</groupId>
            <artifactId>cloud</artifactId>
            <version>${VERSION}</version>
            <scope>system</scope>
            <systemPath>${jar}</systemPath>
        </dependency>`);
        fs.writeFileSync(path.join(dir, "pom.xml"), pom);
        const src = path.join(dir, "src", "main", "java", "generated_program");
        fs.mkdirSync(src, { recursive: true });
        examples("java").forEach((e, i) => fs.writeFileSync(path.join(src, `App${i}.java`),
            `// ${e.from}\n${e.code.replace(/\bApp\b/g, `App${i}`)}\n`));
        await ok(run("mvn", ["-B", "-q", "-Dstyle.color=never", "compile"], { cwd: dir, env: env(), timeoutMs: 900_000 }), "mvn compile (Java examples)");
        expect(fs.readdirSync(path.join(dir, "target", "classes", "generated_program")).filter((f) => /^App\d+\.class$/.test(f)))
            .to.have.length(Object.keys(schema.functions).length + Object.keys(schema.resources).length);
    });
});
