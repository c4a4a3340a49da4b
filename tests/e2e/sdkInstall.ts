// Installing the SDK packages `npm run sdk` builds (scripts/sdk.sh → dist/sdk) into empty projects, the way the
// README says, for the tests that use them (sdkPackages.test.ts, switching.test.ts). Each package is built at most
// once per test run.

import * as fs from "fs";
import * as path from "path";
import { NPM_PACKAGE_NAME } from "../../provider/schema/schema";
import { tempDir } from "../support/temp";
import { PULUMI_SDK_VERSION, ROOT, VERSION, ok, run } from "./support";

export const DIST = path.join(ROOT, "dist", "sdk");

export const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", ...extra });

const built = new Map<string, Promise<unknown>>();
/** Runs scripts/sdk.sh for one language, once per test run. */
export function buildSdk(language: "nodejs" | "python" | "go" | "java"): Promise<unknown> {
    let p = built.get(language);
    if (!p) {
        p = ok(run("bash", [path.join(ROOT, "scripts", "sdk.sh"), language], { cwd: ROOT, env: env(), timeoutMs: 900_000 }), `scripts/sdk.sh ${language}`);
        built.set(language, p);
    }
    return p;
}

/** An npm project with the SDK tarball, @pulumi/pulumi at the pinned release, typescript and @types/node installed. */
export async function npmProjectWithSdk(name: string): Promise<string> {
    await buildSdk("nodejs");
    const dir = tempDir(name);
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "uses-sdk", private: true }));
    const devPkgs = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies as Record<string, string>;
    await ok(run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error",
        path.join(DIST, `${NPM_PACKAGE_NAME}-${VERSION}.tgz`), `@pulumi/pulumi@${PULUMI_SDK_VERSION}`,
        `typescript@${devPkgs.typescript}`, `@types/node@${devPkgs["@types/node"]}`], { cwd: dir, env: env(), timeoutMs: 600_000 }), "npm install");
    return dir;
}

/** Strict `tsc --noEmit` over `files` (name → source) in an npm project. */
export async function typecheck(dir: string, files: Record<string, string>): Promise<void> {
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "ES2020", module: "commonjs", moduleResolution: "node", types: ["node"] },
        files: Object.keys(files),
    }));
    await ok(run(path.join(dir, "node_modules", ".bin", "tsc"), ["-p", dir], { cwd: dir, env: env() }), "tsc");
}

/** A virtualenv with the SDK wheel and `pulumi` at the pinned release; resolves to its python. */
export async function pythonWithWheel(name: string): Promise<string> {
    await buildSdk("python");
    const dir = tempDir(name);
    const py = path.join(dir, "venv", "bin", "python");
    await ok(run("python3", ["-m", "venv", path.join(dir, "venv")], { cwd: dir, env: env() }), "python3 -m venv");
    await ok(run(py, ["-m", "pip", "install", "--quiet", path.join(DIST, `pulumi_cloud-${VERSION}-py3-none-any.whl`), `pulumi==${PULUMI_SDK_VERSION}`],
        { cwd: dir, env: env(), timeoutMs: 600_000 }), "pip install");
    return py;
}

/**
 * Runs Python programs (one file each, in order) under Pulumi's mocks: resources get their inputs back plus an
 * etag, calls their arguments plus a record; `pulumi.export` is recorded. Resolves to the exported values, the
 * types of the resources registered and the tokens of the functions called.
 */
export async function runPythonUnderMocks(py: string, programs: string[]): Promise<{ exported: unknown[]; registered: string[]; calls: string[] }> {
    const dir = tempDir("py-run");
    const runner = [
        "import asyncio, json, sys, pulumi",
        "class Mocks(pulumi.runtime.Mocks):",
        "    def new_resource(self, a):",
        "        return [a.name + '-id', {**a.inputs, 'etag': 'BwX'}]",
        "    def call(self, a):",
        "        return {**a.args, 'policyData': json.dumps({'bindings': a.args.get('bindings', [])}), 'etag': 'BwX', 'id': 'x', 'bindings': [], 'auditConfigs': []}",
        "registered, calls = [], []",
        "class Recording(Mocks):",
        "    def new_resource(self, a):",
        "        registered.append(a.typ)",
        "        return super().new_resource(a)",
        "    def call(self, a):",
        "        calls.append(a.token)",
        "        return super().call(a)",
        "pulumi.runtime.set_mocks(Recording(), preview=False)",
        "exported = []",
        "pulumi.export = lambda name, value: exported.append(value)",
        "for i, path in enumerate(sys.argv[1:]):",
        "    exec(compile(open(path).read(), path, 'exec'), {'__name__': f'program{i}'})",
        "values = asyncio.get_event_loop().run_until_complete(asyncio.gather(*[pulumi.Output.from_input(o).future() for o in exported]))",
        "from pulumi.runtime.stack import wait_for_rpcs",
        "asyncio.get_event_loop().run_until_complete(wait_for_rpcs())",
        "print('EXPORTS', json.dumps(values))",
        "print('REGISTERED', json.dumps(sorted(registered)))",
        "print('CALLS', json.dumps(sorted(calls)))",
    ].join("\n");
    fs.writeFileSync(path.join(dir, "run.py"), runner);
    const files = programs.map((code, i) => {
        const f = path.join(dir, `program${i}.py`);
        fs.writeFileSync(f, code);
        return f;
    });
    const r = await ok(run(py, [path.join(dir, "run.py"), ...files], { cwd: dir, env: env() }), "python programs under mocks");
    const printed = (key: string) => {
        const line = r.stdout.split("\n").find((l) => l.startsWith(`${key} `));
        if (line === undefined) throw new Error(`no ${key} line\n${r.stdout}\n${r.stderr}`);
        return JSON.parse(line.slice(key.length + 1)) as unknown[];
    };
    return { exported: printed("EXPORTS"), registered: printed("REGISTERED") as string[], calls: printed("CALLS") as string[] };
}

/** `go vet` over Go programs (one main package each) in a module that gets the SDK through GOPROXY=file://…. */
export async function goVetPrograms(name: string, programs: string[]): Promise<void> {
    await buildSdk("go");
    const module = fs.readFileSync(path.join(ROOT, "sdk", "go", "go.mod"), "utf8").match(/^module (\S+)$/m)?.[1];
    if (!module) throw new Error("sdk/go/go.mod names no module");
    const dir = tempDir(name);
    const goEnv = env({
        GOPROXY: `file://${path.join(DIST, "goproxy")},${process.env.GOPROXY ?? "https://proxy.golang.org"}`,
        GONOSUMDB: module.split("/")[0],
        GOFLAGS: "-mod=mod",
    });
    await ok(run("go", ["mod", "init", "example.com/uses-sdk"], { cwd: dir, env: goEnv }), "go mod init");
    await ok(run("go", ["get", `${module}@v${VERSION}`, `github.com/pulumi/pulumi/sdk/v3@v${PULUMI_SDK_VERSION}`], { cwd: dir, env: goEnv, timeoutMs: 600_000 }), "go get the SDK");
    programs.forEach((code, i) => {
        fs.mkdirSync(path.join(dir, `program${i}`));
        fs.writeFileSync(path.join(dir, `program${i}`, "main.go"), code);
    });
    await ok(run("go", ["mod", "tidy"], { cwd: dir, env: goEnv, timeoutMs: 600_000 }), "go mod tidy");
    await ok(run("go", ["vet", "./..."], { cwd: dir, env: goEnv, timeoutMs: 900_000 }), "go vet");
}

/**
 * `mvn compile` of Java programs (`package generated_program; public class App …`, one each, renamed App0, App1, …)
 * against the SDK jar and com.pulumi:pulumi. Resolves to the compiled class files' names.
 */
export async function javaCompilePrograms(name: string, programs: string[]): Promise<string[]> {
    await buildSdk("java");
    const dir = tempDir(name);
    const pom = fs.readFileSync(path.join(ROOT, "tests", "e2e", "programs", "java", "pom.xml"), "utf8")
        .replace("<dependencies>", `<dependencies>
        <dependency>
            <groupId>com.pulumi</groupId>
            <artifactId>cloud</artifactId>
            <version>${VERSION}</version>
            <scope>system</scope>
            <systemPath>${path.join(DIST, `cloud-${VERSION}.jar`)}</systemPath>
        </dependency>`);
    fs.writeFileSync(path.join(dir, "pom.xml"), pom);
    const src = path.join(dir, "src", "main", "java", "generated_program");
    fs.mkdirSync(src, { recursive: true });
    programs.forEach((code, i) => fs.writeFileSync(path.join(src, `App${i}.java`), code.replace(/\bApp\b/g, `App${i}`)));
    await ok(run("mvn", ["-B", "-q", "-Dstyle.color=never", "compile"], { cwd: dir, env: env(), timeoutMs: 900_000 }), "mvn compile");
    return fs.readdirSync(path.join(dir, "target", "classes", "generated_program")).filter((f) => /^App\d+\.class$/.test(f));
}
