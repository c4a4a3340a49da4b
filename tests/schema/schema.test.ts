// schema.json is derived from the definitions: it must match them byte for byte, be a valid Pulumi
// package schema, and declare exactly what the server dispatches.
//
// The Pulumi package metaschema beside this file is pkg/codegen/schema/pulumi.json of the Pulumi module pinned
// in tools/pulumi/go.mod (Apache-2.0), kept in the repository so that `npm test` needs nothing else; once
// `npm run tools` has downloaded that module, a test checks the copy is byte-equal to it.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import Ajv2020 from "ajv/dist/2020";
import { configProperties } from "../../provider/protocol/config";
import { functions } from "../../provider/functions";
import { schemaText } from "../../provider/schema/schema";
import { skipUnless, toolsMissing } from "../e2e/support";

const root = path.join(__dirname, "..", "..", "..");
const METASCHEMA = path.join(root, "tests", "schema", "pulumi-package-metaschema.json");
const committed = fs.readFileSync(path.join(root, "schema.json"), "utf8");
const schema = JSON.parse(committed);

describe("schema.json", () => {
    it("is exactly what the definitions produce (run `npm run schema` after changing them)", () => {
        expect(committed).to.equal(schemaText());
    });

    it("validates against the Pulumi package metaschema", () => {
        const meta = JSON.parse(fs.readFileSync(METASCHEMA, "utf8"));
        const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
        const validate = ajv.compile(meta);
        const ok = validate(schema);
        expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).to.deep.equal([]);
        expect(ok).to.equal(true);
        // The metaschema must also be able to say no.
        expect(validate({ ...schema, name: "not a name!" })).to.equal(false);
    });

    it("validates against the metaschema of the pinned Pulumi release (its copy is byte-equal to the module's)", function () {
        skipUnless(this, toolsMissing(["pulumi"]));
        // The module's directory in the Go module cache; GOPROXY=off: never a download from here.
        const dir = execFileSync("go", ["list", "-m", "-f", "{{.Dir}}", "github.com/pulumi/pulumi/pkg/v3"], {
            cwd: path.join(root, "tools", "pulumi"),
            env: { ...process.env, GOFLAGS: "-mod=readonly", GOPROXY: "off" },
            encoding: "utf8",
        }).trim();
        expect(dir, "github.com/pulumi/pulumi/pkg/v3 is in the Go module cache").to.match(/pkg\/v3@v\d/);
        expect(fs.readFileSync(METASCHEMA, "utf8")).to.equal(fs.readFileSync(path.join(dir, "codegen", "schema", "pulumi.json"), "utf8"));
    });

    it("declares the two lookups with the records users know", () => {
        const svc = schema.functions["cloud:endpoints/getServiceIamPolicy:getServiceIamPolicy"];
        expect(svc.inputs.required).to.deep.equal(["serviceName"]);
        expect(Object.keys(svc.outputs.properties).sort()).to.deep.equal(["auditConfigs", "bindings", "etag", "id", "policyData", "serviceName"]);
        expect(svc.outputs.properties.policyData.description).to.match(/^\(Required only by `cloud\.endpoints\.ServiceIamPolicy`\)/);
        expect(svc.outputs.properties.bindings.items.$ref).to.equal("#/types/cloud:organizations/getIAMPolicyBinding:getIAMPolicyBinding");
        const con = schema.functions["cloud:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy"];
        expect(con.inputs.required).to.deep.equal(["consumerProject", "serviceName"]);
        expect(con.outputs.properties.policyData.description).to.contain("cloud.endpoints.ConsumersIamPolicy");
        expect(con.outputs.properties.consumerProject).to.deep.equal({ type: "string" });
        for (const f of functions) expect(schema.functions[f.token].description.startsWith(`${f.description}\n\n`), f.token).to.equal(true);
    });

    it("declares every config key, with secrets marked", () => {
        expect(Object.keys(schema.config.variables)).to.deep.equal(Object.keys(configProperties));
        // The provider's inputs carry the secret flag; stack config getters cannot, so the variables say it in words.
        for (const key of ["credentials", "accessToken"]) {
            expect(schema.provider.inputProperties[key].secret, key).to.equal(true);
            expect(schema.config.variables[key]).not.to.have.property("secret");
            expect(schema.config.variables[key].description).to.contain(`pulumi config set --secret cloud:${key}`);
        }
        expect(schema.config.variables.userProjectOverride.type).to.equal("boolean");
        expect(schema.config.variables.scopes).to.deep.include({ type: "array", items: { type: "string" } });
        expect(Object.keys(schema.provider.inputProperties)).to.deep.equal(Object.keys(schema.config.variables));
    });

    it("names `batching`'s object type as Pulumi GCP does: ProviderBatching for the provider, config.Batching for stack config", () => {
        expect(schema.provider.inputProperties.batching.$ref).to.equal("#/types/cloud:index/ProviderBatching:ProviderBatching");
        expect(schema.config.variables.batching.$ref).to.equal("#/types/cloud:config/batching:batching");
        const provider = schema.types["cloud:index/ProviderBatching:ProviderBatching"];
        expect(schema.types["cloud:config/batching:batching"]).to.deep.equal(provider);
        expect(provider.properties.enableBatching.type).to.equal("boolean");
        expect(provider.properties.sendAfter.type).to.equal("string");
    });

    it("declares every referenced type", () => {
        const refs = [...committed.matchAll(/"\$ref": "#\/types\/([^"]+)"/g)].map((m) => m[1]);
        expect(refs.length).to.be.greaterThan(0);
        for (const r of refs) expect(schema.types, r).to.have.property(r);
    });
});
