// Bad lookup arguments: each gives an Invoke failure naming the property and the rule, and no request
// reaches the API (the emulator records every request it receives).

import { expect } from "chai";
import { PropertyMap, Value } from "../../provider/declare/properties";
import { CONSUMERS_FN, SERVICE_FN, useStack } from "../support/plugin";

const TOKEN = "ya29.inputs-test-token";
const SERVICE = "myapi.endpoints.my-project.cloud.goog";

const badServiceNames: [string, Value][] = [
    ["empty", ""],
    ["number", 42],
    ["boolean", true],
    ["list", ["a.example.com"]],
    ["object", { name: "a.example.com" }],
    ["dot-dot path", "a/../b"],
    ["slash", "a.example.com/b"],
    ["encoded slash", "a.example.com%2Fb"],
    ["encoded NUL", "a.example.com%00"],
    ["question mark", "a.example.com?x=1"],
    ["hash", "a.example.com#frag"],
    ["space", "a example.com"],
    ["leading space", " a.example.com"],
    ["trailing newline", "a.example.com\n"],
    ["tab", "a.example\t.com"],
    ["upper case", "MyApi.example.com"],
    ["underscore", "my_api.example.com"],
    ["label starts with digit", "1api.example.com"],
    ["label ends with dash", "api-.example.com"],
    ["empty label", "api..example.com"],
    ["trailing dot", "api.example.com."],
    ["label of 64", `${"a".repeat(64)}.example.com`],
    ["oversized (254)", `${`${"a".repeat(62)}.`.repeat(4)}ab`],
    ["10 KB", "a".repeat(10 * 1024)],
    ["unicode confusable (Cyrillic a)", "\u0430pi.example.com"],
    ["fullwidth dot", "api\uff0eexample.com"],
    ["only prefix", "services/"],
    ["double prefix", "services/services/a.example.com"],
    ["colon", "api.example.com:getIamPolicy"],
    ["percent", "api%2e.example.com"],
];

const badProjects: [string, Value][] = [
    ["empty", ""],
    ["number", 123456],
    ["too short", "abcde"],
    ["too long", "a".repeat(31)],
    ["starts with digit", "1project"],
    ["ends with hyphen", "project-"],
    ["upper case", "MyProject"],
    ["slash", "my-project/x"],
    ["dot-dot", "../my-project"],
    ["encoded slash", "my-project%2Fx"],
    ["question mark", "my-project?"],
    ["hash", "my-project#"],
    ["space", "my project"],
    ["projects/ prefix", "projects/my-project"],
    ["bad domain", "-example.com:my-project"],
    ["domain without project", "example.com:"],
    ["10 KB", "a".repeat(10 * 1024)],
    ["null byte", "my-project\u0000"],
];

describe("lookup argument checking", function () {
    const stack = useStack(TOKEN, [SERVICE]);

    async function expectFailure(tok: string, args: PropertyMap, property: string, rule: RegExp): Promise<void> {
        const res = await stack.plugin.invoke(tok, args);
        expect(res.return, "no result for bad input").to.equal(undefined);
        const f = res.failures.find((x) => x.property === property);
        expect(f, `a failure for ${property} in ${JSON.stringify(res.failures)}`).not.to.equal(undefined);
        expect(f!.reason).to.match(rule);
        expect(f!.reason).to.contain(`\`${property}\``);
    }

    for (const [what, value] of badServiceNames) {
        it(`refuses serviceName: ${what}`, () =>
            expectFailure(SERVICE_FN, { serviceName: value }, "serviceName", /service name|must be a string/));
    }
    for (const [what, value] of badProjects) {
        it(`refuses consumerProject: ${what}`, () =>
            expectFailure(CONSUMERS_FN, { serviceName: SERVICE, consumerProject: value }, "consumerProject", /project ID|must be a string/));
    }
    it("refuses a missing serviceName, saying it is required", () =>
        expectFailure(SERVICE_FN, {}, "serviceName", /is required/));
    it("refuses a missing consumerProject, saying it is required", () =>
        expectFailure(CONSUMERS_FN, { serviceName: SERVICE }, "consumerProject", /is required/));
    it("refuses an unknown argument, listing the known ones", () =>
        expectFailure(SERVICE_FN, { serviceName: SERVICE, project: "x" }, "project", /not a known property.*`serviceName`/));

    it("sent no request for any of them", () => {
        expect(stack.emu.requests).to.deep.equal([]);
    });

    it("accepts the valid forms", async () => {
        for (const serviceName of [SERVICE, `services/${SERVICE}`]) {
            const res = await stack.plugin.invoke(SERVICE_FN, { serviceName });
            expect(res.failures).to.deep.equal([]);
        }
        for (const consumerProject of ["my-project", "example.com:my-project", "a23456", `a${"b".repeat(28)}c`]) {
            const res = await stack.plugin.invoke(CONSUMERS_FN, { serviceName: SERVICE, consumerProject });
            expect(res.failures, consumerProject).to.deep.equal([]);
        }
    });
});
