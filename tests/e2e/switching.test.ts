// A Pulumi GCP user switches by renaming the package. Pulumi GCP 8.38.0's own documentation examples for the nine
// items, taken from its packages in the registries (@pulumi/gcp on npm, pulumi_gcp on PyPI), with only the package
// renamed (`@pulumi/gcp` → our npm name, `pulumi_gcp` → `pulumi_cloud`), compile against our TypeScript SDK and
// run under Pulumi's mocks against our Python SDK. The same programs in Go and Java, written with the names and
// signatures Pulumi GCP's Go and Java SDKs document (Go `organizations.LookupIAMPolicy`,
// `endpoints.LookupServiceIamPolicy`, …), with only the import path renamed, compile against ours.
// The upstream examples use an `endpointsService` they never declare; this test declares it, nothing else.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { GO_IMPORT_BASE_PATH, NPM_PACKAGE_NAME } from "../../provider/schema/schema";
import { tempDir } from "../support/temp";
import { env, goVetPrograms, javaCompilePrograms, npmProjectWithSdk, pythonWithWheel, runPythonUnderMocks, typecheck } from "./sdkInstall";
import { e2eNeeds, ok, run, skipUnless } from "./support";

/** The Pulumi GCP release whose names and shapes this package matches. */
const GCP_VERSION = "8.38.0";
/** The nine items, as Pulumi GCP's TypeScript and Python packages lay them out. */
const TS_FILES = ["getServiceIamPolicy", "getServiceConsumersIamPolicy", "serviceIamPolicy", "serviceIamBinding", "serviceIamMember",
    "consumersIamPolicy", "consumersIamBinding", "consumersIamMember"].map((f) => `endpoints/${f}.d.ts`).concat("organizations/getIAMPolicy.d.ts");
const PY_FILES = ["get_service_iam_policy", "get_service_consumers_iam_policy", "service_iam_policy", "service_iam_binding", "service_iam_member",
    "consumers_iam_policy", "consumers_iam_binding", "consumers_iam_member"].map((f) => `pulumi_gcp/endpoints/${f}.py`)
    .concat("pulumi_gcp/organizations/get_iam_policy.py");
const SERVICE = "bookstore.endpoints.example-project.cloud.goog";

/**
 * The distinct fenced code blocks of one language in JSDoc comments (lines ` * …`) or Python docstrings (indented
 * lines), with the comment markers or the docstring's indentation removed.
 */
function codeBlocks(text: string, language: string): string[] {
    const out = new Set<string>();
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
        const open = lines[i].match(new RegExp("^(\\s*)(\\* ?)?```" + language + "\\s*$"));
        if (!open) continue;
        const unwrap = open[2] !== undefined ? (l: string) => l.replace(/^\s*\* ?/, "") : (l: string) => l.slice(open[1].length);
        const body: string[] = [];
        for (i++; i < lines.length && !/^\s*(\* ?)?```\s*$/.test(lines[i]); i++) body.push(unwrap(lines[i]));
        out.add(body.join("\n"));
    }
    return [...out];
}

describe(`Switching from Pulumi GCP ${GCP_VERSION}: its examples, package renamed, against our SDKs`, function () {
    this.timeout(1_200_000);
    this.slow(120_000);

    it("TypeScript: the examples in @pulumi/gcp's declarations compile against ours (strict tsc)", async function () {
        skipUnless(this, e2eNeeds("npm"));
        const fetched = tempDir("gcp-npm");
        await ok(run("npm", ["pack", `@pulumi/gcp@${GCP_VERSION}`, "--silent", "--pack-destination", fetched], { cwd: fetched, env: env(), timeoutMs: 600_000 }), "npm pack @pulumi/gcp");
        execFileSync("tar", ["xzf", path.join(fetched, `pulumi-gcp-${GCP_VERSION}.tgz`), "-C", fetched, ...TS_FILES.map((f) => `package/${f}`)]);
        const programs = TS_FILES.flatMap((f) => codeBlocks(fs.readFileSync(path.join(fetched, "package", f), "utf8"), "typescript"));
        expect(programs.length, "upstream TypeScript examples").to.be.at.least(4);
        for (const p of programs) expect(p).to.contain('from "@pulumi/gcp"');

        const dir = await npmProjectWithSdk("switch-ts");
        await typecheck(dir, Object.fromEntries(programs.map((p, i) => [`upstream${i}.ts`,
            `${p.replace('from "@pulumi/gcp"', `from ${JSON.stringify(NPM_PACKAGE_NAME)}`)}\n` +
            "declare const endpointsService: { serviceName: string };\n"])));
    });

    it("Python: the examples in pulumi_gcp's docstrings run under Pulumi's mocks against ours", async function () {
        skipUnless(this, e2eNeeds("python3"));
        const fetched = tempDir("gcp-pypi");
        await ok(run("python3", ["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", `pulumi_gcp==${GCP_VERSION}`, "-d", fetched],
            { cwd: fetched, env: env(), timeoutMs: 600_000 }), "pip download pulumi_gcp");
        const wheel = fs.readdirSync(fetched).find((f) => f.endsWith(".whl"));
        expect(wheel, "pulumi_gcp wheel").to.be.a("string");
        const texts = execFileSync("python3", ["-c", [
            "import json, sys, zipfile",
            "z = zipfile.ZipFile(sys.argv[1])",
            "print(json.dumps([z.read(n).decode() for n in sys.argv[2:]]))",
        ].join("\n"), path.join(fetched, wheel!), ...PY_FILES], { encoding: "utf8", maxBuffer: 64 << 20 });
        const programs = [...new Set((JSON.parse(texts) as string[]).flatMap((t) => codeBlocks(t, "python")))];
        expect(programs.length, "upstream Python examples").to.be.at.least(4);
        for (const p of programs) expect(p).to.contain("import pulumi_gcp as gcp");

        const py = await pythonWithWheel("switch-py");
        const { registered, calls } = await runPythonUnderMocks(py, programs.map((p) =>
            `endpoints_service = {"serviceName": ${JSON.stringify(SERVICE)}}\n${p.replace("import pulumi_gcp as gcp", "import pulumi_cloud as gcp")}\n`));
        expect(registered).to.include.members(["cloud:endpoints/serviceIamPolicy:ServiceIamPolicy",
            "cloud:endpoints/serviceIamBinding:ServiceIamBinding", "cloud:endpoints/serviceIamMember:ServiceIamMember"]);
        expect(calls).to.include.members(["cloud:organizations/getIAMPolicy:getIAMPolicy", "cloud:endpoints/getServiceIamPolicy:getServiceIamPolicy"]);
    });

    // The same programs in Go and Java, in Pulumi GCP's names (its Go import path and Java package renamed only).
    // Pulumi GCP's Go docs pass the undeclared variable as `pulumi.Any(endpointsService.ServiceName)`, which does not
    // compile against Pulumi GCP's SDK either (an AnyOutput is no StringInput); with the variable declared as a
    // string, the programs pass it as `pulumi.String(…)`.
    const GCP_GO = "github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp";
    const goProgram = (body: string, mods: string[]) => `package main

import (
${mods.map((m) => `\t"${GCP_GO}/${m}"`).join("\n")}
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Declared by the test: Pulumi GCP's examples use it without declaring it.
var endpointsService = struct{ ServiceName string }{ServiceName: ${JSON.stringify(SERVICE)}}

func main() {
\tpulumi.Run(func(ctx *pulumi.Context) error {
${body}
\t\treturn nil
\t})
}
`;
    const GO_PROGRAMS = [
        goProgram(`\t\tadmin, err := organizations.LookupIAMPolicy(ctx, &organizations.LookupIAMPolicyArgs{
\t\t\tBindings: []organizations.GetIAMPolicyBinding{
\t\t\t\t{
\t\t\t\t\tRole:    "roles/viewer",
\t\t\t\t\tMembers: []string{"user:jane@example.com"},
\t\t\t\t},
\t\t\t},
\t\t}, nil)
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\t_, err = endpoints.NewServiceIamPolicy(ctx, "policy", &endpoints.ServiceIamPolicyArgs{
\t\t\tServiceName: pulumi.String(endpointsService.ServiceName),
\t\t\tPolicyData:  pulumi.String(admin.PolicyData),
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}`, ["endpoints", "organizations"]),
        goProgram(`\t\t_, err := endpoints.NewServiceIamBinding(ctx, "binding", &endpoints.ServiceIamBindingArgs{
\t\t\tServiceName: pulumi.String(endpointsService.ServiceName),
\t\t\tRole:        pulumi.String("roles/viewer"),
\t\t\tMembers: pulumi.StringArray{
\t\t\t\tpulumi.String("user:jane@example.com"),
\t\t\t},
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}`, ["endpoints"]),
        goProgram(`\t\t_, err := endpoints.NewServiceIamMember(ctx, "member", &endpoints.ServiceIamMemberArgs{
\t\t\tServiceName: pulumi.String(endpointsService.ServiceName),
\t\t\tRole:        pulumi.String("roles/viewer"),
\t\t\tMember:      pulumi.String("user:jane@example.com"),
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}`, ["endpoints"]),
        goProgram(`\t\t_, err := endpoints.LookupServiceIamPolicy(ctx, &endpoints.LookupServiceIamPolicyArgs{
\t\t\tServiceName: endpointsService.ServiceName,
\t\t}, nil)
\t\tif err != nil {
\t\t\treturn err
\t\t}`, ["endpoints"]),
    ];

    it("Go: Pulumi GCP's Go programs (LookupIAMPolicy, LookupServiceIamPolicy, New…) build against ours", async function () {
        skipUnless(this, e2eNeeds("go"));
        const ours = GO_IMPORT_BASE_PATH;
        await goVetPrograms("switch-go", GO_PROGRAMS.map((p) => p.split(GCP_GO).join(ours)));
    });

    const javaProgram = (imports: string[], body: string) => `package generated_program;

import com.pulumi.Context;
import com.pulumi.Pulumi;
${imports.map((i) => `import com.pulumi.gcp.${i};`).join("\n")}

public class App {
    /** Declared by the test: Pulumi GCP's examples use it without declaring it. */
    static final class EndpointsService {
        String serviceName() { return ${JSON.stringify(SERVICE)}; }
    }
    static final EndpointsService endpointsService = new EndpointsService();

    public static void main(String[] args) {
        Pulumi.run(App::stack);
    }

    public static void stack(Context ctx) {
${body}
    }
}
`;
    const JAVA_PROGRAMS = [
        javaProgram(["organizations.OrganizationsFunctions", "organizations.inputs.GetIAMPolicyArgs", "organizations.inputs.GetIAMPolicyBindingArgs",
            "endpoints.ServiceIamPolicy", "endpoints.ServiceIamPolicyArgs"], `        final var admin = OrganizationsFunctions.getIAMPolicy(GetIAMPolicyArgs.builder()
            .bindings(GetIAMPolicyBindingArgs.builder()
                .role("roles/viewer")
                .members("user:jane@example.com")
                .build())
            .build());

        var policy = new ServiceIamPolicy("policy", ServiceIamPolicyArgs.builder()
            .serviceName(endpointsService.serviceName())
            .policyData(admin.applyValue(getIAMPolicyResult -> getIAMPolicyResult.policyData()))
            .build());`),
        javaProgram(["endpoints.ServiceIamBinding", "endpoints.ServiceIamBindingArgs"], `        var binding = new ServiceIamBinding("binding", ServiceIamBindingArgs.builder()
            .serviceName(endpointsService.serviceName())
            .role("roles/viewer")
            .members("user:jane@example.com")
            .build());`),
        javaProgram(["endpoints.ServiceIamMember", "endpoints.ServiceIamMemberArgs"], `        var member = new ServiceIamMember("member", ServiceIamMemberArgs.builder()
            .serviceName(endpointsService.serviceName())
            .role("roles/viewer")
            .member("user:jane@example.com")
            .build());`),
        javaProgram(["endpoints.EndpointsFunctions", "endpoints.inputs.GetServiceIamPolicyArgs"], `        final var policy = EndpointsFunctions.getServiceIamPolicy(GetServiceIamPolicyArgs.builder()
            .serviceName(endpointsService.serviceName())
            .build());`),
    ];

    it("Java: Pulumi GCP's Java programs (OrganizationsFunctions.getIAMPolicy, EndpointsFunctions, builders) compile against ours", async function () {
        skipUnless(this, e2eNeeds("mvn"));
        const classes = await javaCompilePrograms("switch-java", JAVA_PROGRAMS.map((p) => p.split("com.pulumi.gcp.").join("com.pulumi.cloud.")));
        expect(classes).to.have.length(JAVA_PROGRAMS.length);
    });
});
