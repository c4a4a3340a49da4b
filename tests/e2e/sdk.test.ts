// The SDKs in sdk/, generated from schema.json by `npm run gen-sdk` (scripts/gen-sdk.sh) and committed:
// - they match what the generators make from schema.json now (regenerated into a temp dir and compared);
// - they have the names users are promised, per language;
// - they compile: nodejs (tsc), go (go build, go vet against github.com/pulumi/pulumi/sdk/v3), python (pip install
//   beside `pulumi` from PyPI, imported), java (Maven against com.pulumi:pulumi). .NET: names only.
// Checks that need the tools, a toolchain or a registry skip themselves, saying why, where those are missing.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NPM_PACKAGE_NAME } from "../../provider/schema/schema";
import { PLUGIN_DOWNLOAD_URL } from "../../provider/package/version";
import {
    PULUMI_SDK_VERSION, ROOT, compiledNodeSdk, copyTree, e2eNeeds, ok, pythonWithSdk, run, skipUnless,
} from "./support";

const SDK = path.join(ROOT, "sdk");
const LANGUAGES = ["nodejs", "python", "go", "java", "dotnet", "yaml"];
const read = (...p: string[]) => fs.readFileSync(path.join(SDK, ...p), "utf8");

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
    const out: string[] = [];
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) walk(p);
            else out.push(path.relative(dir, p));
        }
    };
    walk(dir);
    return out.sort();
}

describe("SDKs generated from schema.json", function () {
    this.timeout(900_000);
    this.slow(60_000);

    describe("the names users are promised", () => {
        it("TypeScript: getServiceIamPolicy / getServiceIamPolicyOutput, and the consumers pair", () => {
            const s = read("nodejs", "endpoints", "getServiceIamPolicy.ts");
            expect(s).to.match(/export function getServiceIamPolicy\(args: GetServiceIamPolicyArgs, opts\?: pulumi\.InvokeOptions\): Promise<GetServiceIamPolicyResult>/);
            expect(s).to.match(/export function getServiceIamPolicyOutput\(args: GetServiceIamPolicyOutputArgs, opts\?: pulumi\.InvokeOutputOptions\): pulumi\.Output<GetServiceIamPolicyResult>/);
            const c = read("nodejs", "endpoints", "getServiceConsumersIamPolicy.ts");
            expect(c).to.match(/export function getServiceConsumersIamPolicy\(/);
            expect(c).to.match(/export function getServiceConsumersIamPolicyOutput\(/);
            const pkg = JSON.parse(read("nodejs", "package.json"));
            expect(pkg).to.deep.include({ name: NPM_PACKAGE_NAME, main: "bin/index.js", types: "bin/index.d.ts" });
        });

        it("Python: get_service_iam_policy(service_name=…) / get_service_iam_policy_output", () => {
            const s = read("python", "pulumi_cloud", "endpoints", "get_service_iam_policy.py");
            expect(s).to.match(/^def get_service_iam_policy\(service_name: /m);
            expect(s).to.match(/^def get_service_iam_policy_output\(service_name: /m);
            const c = read("python", "pulumi_cloud", "endpoints", "get_service_consumers_iam_policy.py");
            expect(c).to.match(/^def get_service_consumers_iam_policy\(consumer_project: [^\n]*\n\s*service_name: /m);
            expect(c).to.match(/^def get_service_consumers_iam_policy_output\(/m);
        });

        it("Go: LookupServiceIamPolicy(+Output), because a ServiceIamPolicy resource exists; GetServiceConsumersIamPolicy(+Output)", () => {
            const s = read("go", "cloud", "endpoints", "getServiceIamPolicy.go");
            expect(s).to.match(/^func LookupServiceIamPolicy\(ctx \*pulumi\.Context, args \*LookupServiceIamPolicyArgs, opts \.\.\.pulumi\.InvokeOption\) \(\*LookupServiceIamPolicyResult, error\)/m);
            expect(s).to.match(/^func LookupServiceIamPolicyOutput\(ctx \*pulumi\.Context, args LookupServiceIamPolicyOutputArgs, opts \.\.\.pulumi\.InvokeOption\) LookupServiceIamPolicyResultOutput/m);
            const c = read("go", "cloud", "endpoints", "getServiceConsumersIamPolicy.go");
            expect(c).to.match(/^func GetServiceConsumersIamPolicy\(ctx \*pulumi\.Context, args \*GetServiceConsumersIamPolicyArgs/m);
            expect(c).to.match(/^func GetServiceConsumersIamPolicyOutput\(ctx \*pulumi\.Context, args GetServiceConsumersIamPolicyOutputArgs/m);
            expect(read("go", "go.mod")).to.match(/^module example\.com\/pulumi-cloud\/sdk\/go\/v8$/m);
        });

        it("C#: GetServiceIamPolicy.InvokeAsync / Invoke, in namespace Pulumi.Cloud.Endpoints", () => {
            const s = read("dotnet", "Endpoints", "GetServiceIamPolicy.cs");
            expect(s).to.match(/namespace Pulumi\.Cloud\.Endpoints/);
            expect(s).to.match(/public static class GetServiceIamPolicy\b/);
            expect(s).to.match(/public static Task<GetServiceIamPolicyResult> InvokeAsync\(GetServiceIamPolicyArgs args, InvokeOptions\? options = null\)/);
            expect(s).to.match(/public static Output<GetServiceIamPolicyResult> Invoke\(GetServiceIamPolicyInvokeArgs args, InvokeOptions\? options = null\)/);
            const c = read("dotnet", "Endpoints", "GetServiceConsumersIamPolicy.cs");
            expect(c).to.match(/public static Task<GetServiceConsumersIamPolicyResult> InvokeAsync\(/);
            expect(c).to.match(/public static Output<GetServiceConsumersIamPolicyResult> Invoke\(/);
            expect(read("dotnet", "Pulumi.Cloud.csproj")).to.match(/<Version>8\.38\.0<\/Version>/);
        });

        it("Java: getServiceIamPolicy returns an Output, getServiceIamPolicyPlain a CompletableFuture", () => {
            const s = read("java", "src", "main", "java", "com", "pulumi", "cloud", "endpoints", "EndpointsFunctions.java");
            expect(s).to.match(/public static Output<GetServiceIamPolicyResult> getServiceIamPolicy\(GetServiceIamPolicyArgs args\)/);
            expect(s).to.match(/public static CompletableFuture<GetServiceIamPolicyResult> getServiceIamPolicyPlain\(GetServiceIamPolicyPlainArgs args\)/);
            expect(s).to.match(/public static Output<GetServiceConsumersIamPolicyResult> getServiceConsumersIamPolicy\(/);
            expect(s).to.match(/public static CompletableFuture<GetServiceConsumersIamPolicyResult> getServiceConsumersIamPolicyPlain\(/);
        });

        it("Resource.get takes the state (XState) in every language", () => {
            for (const r of ["ServiceIamPolicy", "ServiceIamBinding", "ServiceIamMember", "ConsumersIamPolicy", "ConsumersIamBinding", "ConsumersIamMember"]) {
                const lower = r[0].toLowerCase() + r.slice(1);
                const snake = r.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
                expect(read("nodejs", "endpoints", `${lower}.ts`), r).to.match(new RegExp(`public static get\\(name: string, id: pulumi\\.Input<pulumi\\.ID>, state\\?: ${r}State, opts`));
                expect(read("nodejs", "endpoints", `${lower}.ts`), r).to.match(new RegExp(`export interface ${r}State \\{\\n(.*\\n)*?    etag\\?: pulumi\\.Input<string( \\| undefined)?>;`));
                expect(read("python", "pulumi_cloud", "endpoints", `${snake}.py`), r).to.match(/^ {4}def get\(resource_name: str,\n\s+id: pulumi\.Input\[str\],\n\s+opts: Optional\[pulumi\.ResourceOptions\] = None,\n(\s+\w+: pulumi\.Input\[Optional\[[^\n]*\n)+/m);
                const go = read("go", "cloud", "endpoints", `${lower}.go`);
                expect(go, r).to.match(new RegExp(`^type ${r}State struct \\{\\n(.*\\n)*?\\tEtag pulumi\\.StringPtrInput`, "m"));
                expect(go, r).to.match(new RegExp(`^type ${r}Array \\[\\]${r}Input$`, "m"));
                expect(go, r).to.match(new RegExp(`^type ${r}Map map\\[string\\]${r}Input$`, "m"));
                expect(read("dotnet", "Endpoints", `${r}.cs`), r).to.contain(`public static ${r} Get(string name, Input<string> id, ${r}State? state = null`);
                expect(read("java", "src", "main", "java", "com", "pulumi", "cloud", "endpoints", `${r}.java`), r)
                    .to.match(new RegExp(`public static ${r} get\\(java\\.lang\\.String name, Output<java\\.lang\\.String> id, @Nullable ${r}State state`));
            }
        });

        it("Pulumi GCP's names: Go LookupIAMPolicy, Python …Args/…Result, C# …InputArgs/…Args/…Result", () => {
            const alias = read("go", "cloud", "organizations", "lookupIAMPolicy.go");
            for (const want of [
                /^func LookupIAMPolicy\(ctx \*pulumi\.Context, args \*LookupIAMPolicyArgs, opts \.\.\.pulumi\.InvokeOption\) \(\*LookupIAMPolicyResult, error\)/m,
                /^func LookupIAMPolicyOutput\(ctx \*pulumi\.Context, args LookupIAMPolicyOutputArgs, opts \.\.\.pulumi\.InvokeOption\) LookupIAMPolicyResultOutput/m,
                /^type LookupIAMPolicyArgs = GetIAMPolicyArgs$/m, /^type LookupIAMPolicyResult = GetIAMPolicyResult$/m,
                /^type LookupIAMPolicyOutputArgs = GetIAMPolicyOutputArgs$/m, /^type LookupIAMPolicyResultOutput = GetIAMPolicyResultOutput$/m,
            ]) expect(alias).to.match(want);
            const pyIn = read("python", "pulumi_cloud", "organizations", "_inputs.py");
            const pyOut = read("python", "pulumi_cloud", "organizations", "outputs.py");
            for (const t of ["GetIAMPolicyBinding", "GetIAMPolicyAuditConfig", "GetIAMPolicyAuditConfigAuditLogConfig", "GetIAMPolicyBindingCondition"]) {
                expect(pyIn, t).to.match(new RegExp(`^class ${t}Args:`, "m")).and.match(new RegExp(`^class ${t}ArgsDict\\(TypedDict\\):`, "m"));
                expect(pyOut, t).to.match(new RegExp(`^class ${t}Result\\(dict\\):`, "m"));
                expect(read("dotnet", "Organizations", "Inputs", `${t}Args.cs`), t).to.contain(`public sealed class ${t}InputArgs : global::Pulumi.ResourceArgs`);
                expect(read("dotnet", "Organizations", "Inputs", `${t}.cs`), t).to.contain(`public sealed class ${t}Args : global::Pulumi.InvokeArgs`);
                expect(read("dotnet", "Organizations", "Outputs", `${t}Result.cs`), t).to.contain(`public sealed class ${t}Result`);
            }
        });

        it("go.mod requires the pinned pulumi sdk (InvokeOutput) and go.sum is there", () => {
            expect(read("go", "go.mod")).to.match(new RegExp(`^\\s*github\\.com/pulumi/pulumi/sdk/v3 v${PULUMI_SDK_VERSION.replace(/\./g, "\\.")}$`, "m"));
            expect(read("go", "go.mod")).to.match(/^\s*github\.com\/blang\/semver v/m);
            expect(read("go", "go.sum")).to.contain(`github.com/pulumi/pulumi/sdk/v3 v${PULUMI_SDK_VERSION} h1:`);
        });

        it("docs: examples in every language, the import section with full tokens, no empty headings", () => {
            expect(read("nodejs", "endpoints", "serviceIamBinding.ts")).to.contain("new cloud.endpoints.ServiceIamBinding(\"binding\"")
                .and.contain("$ pulumi import cloud:endpoints/serviceIamBinding:ServiceIamBinding binding");
            expect(read("python", "pulumi_cloud", "endpoints", "service_iam_binding.py")).to.contain("cloud.endpoints.ServiceIamBinding(\"binding\",");
            expect(read("go", "cloud", "endpoints", "serviceIamBinding.go")).to.contain("endpoints.NewServiceIamBinding(ctx, \"binding\"");
            expect(read("dotnet", "Endpoints", "ServiceIamBinding.cs")).to.contain("new Cloud.Endpoints.ServiceIamBinding(\"binding\"");
            expect(read("java", "src", "main", "java", "com", "pulumi", "cloud", "endpoints", "ServiceIamBinding.java")).to.contain("new ServiceIamBinding(\"binding\", ServiceIamBindingArgs.builder()");
            // Each SDK keeps its own language's example under the heading (no empty `## example` left behind).
            expect(read("nodejs", "endpoints", "getServiceIamPolicy.ts")).to.match(/## Example Usage\n \* ### Read the policy\n \*\n \* ```typescript\n/);
            expect(read("python", "pulumi_cloud", "endpoints", "get_service_iam_policy.py")).to.match(/## Example Usage\n\s+### Read the policy\n\s+```python\n/);
            expect(read("nodejs", "endpoints", "consumersIamMember.ts"))
                .to.contain("$ pulumi import cloud:endpoints/consumersIamMember:ConsumersIamMember member \"bookstore.endpoints.example-project.cloud.goog/consumer-project-1 roles/servicemanagement.serviceConsumer user:jane@example.com\"");
        });

        it("every SDK names plugin cloud 8.38.0", () => {
            for (const f of [["go", "cloud", "pulumi-plugin.json"], ["python", "pulumi_cloud", "pulumi-plugin.json"], ["dotnet", "pulumi-plugin.json"]]) {
                expect(JSON.parse(read(...f)), f.join("/")).to.deep.include({ resource: true, name: "cloud", version: "8.38.0" });
            }
            expect(JSON.parse(read("nodejs", "package.json"))).to.deep.include({ version: "8.38.0" });
        });

        it("every SDK tells the engine where to download the plugin (the schema's pluginDownloadURL)", () => {
            expect(PLUGIN_DOWNLOAD_URL).to.match(/^github:\/\/api\.github\.com\/[^/]+\/pulumi-resource-cloud$/);
            expect(JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8")).pluginDownloadURL).to.equal(PLUGIN_DOWNLOAD_URL);
            for (const f of [["go", "cloud", "pulumi-plugin.json"], ["python", "pulumi_cloud", "pulumi-plugin.json"], ["dotnet", "pulumi-plugin.json"]]) {
                expect(JSON.parse(read(...f)).server, f.join("/")).to.equal(PLUGIN_DOWNLOAD_URL);
            }
            expect(JSON.parse(read("nodejs", "package.json")).pulumi.server).to.equal(PLUGIN_DOWNLOAD_URL);
            expect(read("java", "build.gradle")).to.contain(`server "${PLUGIN_DOWNLOAD_URL}"`);
            // Every resource and the provider pass it with their options, for programs run without a language host.
            expect(read("nodejs", "utilities.ts")).to.contain(`pluginDownloadURL: "${PLUGIN_DOWNLOAD_URL}"`);
            expect(read("yaml", "cloud-8.38.0.yaml")).to.contain(`downloadUrl: ${PLUGIN_DOWNLOAD_URL}`);
        });
    });

    describe("sdk/ is what `npm run gen-sdk` makes from schema.json", () => {
        let out: string;
        before(function () {
            skipUnless(this, e2eNeeds("python3", ["pulumi", "cloud-codegen", "pulumi-language-java", "pulumi-language-dotnet"]));
            out = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-gen-sdk-"));
            execFileSync("bash", [path.join(ROOT, "scripts", "gen-sdk.sh"), out], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
        });
        after(() => {
            if (out) fs.rmSync(out, { recursive: true, force: true });
        });

        for (const lang of LANGUAGES) {
            it(`sdk/${lang}`, () => {
                const want = files(path.join(out, lang));
                const have = files(path.join(SDK, lang));
                const hint = "sdk/ drifted from schema.json: run `npm run gen-sdk` and commit sdk/";
                expect(have, `${hint} (files)`).to.deep.equal(want);
                const differ = want.filter((f) => !fs.readFileSync(path.join(out, lang, f)).equals(fs.readFileSync(path.join(SDK, lang, f))));
                expect(differ, `${hint} (contents)`).to.deep.equal([]);
            });
        }
    });

    describe("they compile", () => {
        it("nodejs: tsc with the SDK's own tsconfig", async () => {
            const dir = await compiledNodeSdk();
            for (const f of ["index.js", "index.d.ts", "endpoints/getServiceIamPolicy.js", "package.json"]) {
                expect(fs.existsSync(path.join(dir, "bin", f)), f).to.equal(true);
            }
            // Plain Node loads it by its package.json (main), and it knows its version (read from bin/package.json).
            const probe = `const c = require(${JSON.stringify(dir)}); console.log(typeof c.endpoints.getServiceIamPolicy, c.endpoints.ServiceIamMember.__pulumiType)`;
            const r = await ok(run("node", ["-e", probe], { cwd: ROOT, env: process.env }), "node require(sdk)");
            expect(r.stdout.trim()).to.equal("function cloud:endpoints/serviceIamMember:ServiceIamMember");
        });

        it("go: go build and go vet, against github.com/pulumi/pulumi/sdk/v3 at the pinned version", async function () {
            skipUnless(this, e2eNeeds("go"));
            const mod = path.join(ROOT, "tests", "e2e", "programs", "go");
            const pkgs = ["example.com/pulumi-cloud/sdk/go/v8/...", "."];
            const env = { ...process.env, GOFLAGS: "-mod=readonly" };
            await ok(run("go", ["build", ...pkgs], { cwd: mod, env, timeoutMs: 900_000 }), "go build sdk/go");
            await ok(run("go", ["vet", ...pkgs], { cwd: mod, env, timeoutMs: 900_000 }), "go vet sdk/go");
            const sdkVersion = execFileSync("go", ["list", "-m", "-f", "{{.Version}}", "github.com/pulumi/pulumi/sdk/v3"], { cwd: mod, env, encoding: "utf8" }).trim();
            expect(sdkVersion).to.equal(`v${PULUMI_SDK_VERSION}`);
        });

        it("python: pip install beside pulumi from PyPI, then import", async function () {
            skipUnless(this, e2eNeeds("python3"));
            const py = await pythonWithSdk();
            const check = [
                "import inspect, pulumi, pulumi_cloud",
                "from pulumi_cloud import endpoints, organizations",
                "assert list(inspect.signature(endpoints.get_service_iam_policy).parameters) == ['service_name', 'opts']",
                "assert 'service_name' in inspect.signature(endpoints.get_service_iam_policy_output).parameters",
                "assert {'service_name', 'consumer_project'} <= set(inspect.signature(endpoints.get_service_consumers_iam_policy).parameters)",
                "assert callable(endpoints.get_service_consumers_iam_policy_output) and callable(organizations.get_iam_policy)",
                "assert issubclass(endpoints.ServiceIamPolicy, pulumi.CustomResource) and issubclass(pulumi_cloud.Provider, pulumi.ProviderResource)",
                "print(pulumi_cloud.__name__)",
            ].join("\n");
            const r = await ok(run(py, ["-c", check], { cwd: os.tmpdir(), env: process.env }), "python import pulumi_cloud");
            expect(r.stdout.trim()).to.equal("pulumi_cloud");
        });

        it("java: mvn compile against com.pulumi:pulumi, with a file using the promised names", async function () {
            skipUnless(this, e2eNeeds("mvn"));
            const stage = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-sdk-java-"));
            try {
                copyTree(path.join(ROOT, "tests", "e2e", "programs", "java"), stage);
                copyTree(path.join(SDK, "java", "src", "main", "java"), path.join(stage, "src", "main", "java"));
                await ok(run("mvn", ["-B", "-q", "compile"], { cwd: stage, env: process.env, timeoutMs: 900_000 }), "mvn compile sdk/java");
                expect(fs.existsSync(path.join(stage, "target", "classes", "com", "pulumi", "cloud", "endpoints", "EndpointsFunctions.class"))).to.equal(true);
                expect(fs.existsSync(path.join(stage, "target", "classes", "e2e", "Names.class"))).to.equal(true);
            } finally {
                fs.rmSync(stage, { recursive: true, force: true });
            }
        });
    });
});
