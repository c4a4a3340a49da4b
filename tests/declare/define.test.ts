// The typed values a declaration describes: what handlers are given is derived from the declared properties.
// Types are gone by the time a test runs, so the types are asked of the TypeScript checker, over the real
// declarations (provider/declare/define.ts, provider/resources/grant.ts): a wrong type fails the test, not only the build.

import { expect } from "chai";
import * as path from "path";
import * as ts from "typescript";
import { resources } from "../../provider/resources";

const ROOT = path.join(__dirname, "..", "..", "..");

type Props = Record<string, { optional: boolean; type: string }>;

/**
 * Type-checks `sources` (modules in tests/declare/, by file name) in one program; returns, for each, every property
 * of the type alias `V` it declares: whether it is optional, and its type without `undefined`. Each must type-check.
 */
function propertiesOf(sources: Record<string, string>): Record<string, Props> {
    const files = new Map(Object.entries(sources).map(([name, text]) => [path.join(ROOT, "tests", "declare", name), text]));
    const options: ts.CompilerOptions = {
        strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10,
        lib: ["lib.es2022.d.ts"], types: ["node"], noEmit: true, skipLibCheck: true,
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    host.getSourceFile = (name, version, onError, create) => {
        const text = files.get(path.resolve(name));
        return text === undefined ? getSourceFile(name, version, onError, create) : ts.createSourceFile(name, text, version);
    };
    host.fileExists = (name) => files.has(path.resolve(name)) || fileExists(name);
    const program = ts.createProgram([...files.keys()], options, host);
    const checker = program.getTypeChecker();
    const out: Record<string, Props> = {};
    for (const [file, name] of [...files.keys()].map((f) => [f, path.basename(f)])) {
        const sf = program.getSourceFile(file)!;
        const problems = ts.getPreEmitDiagnostics(program, sf).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
        expect(problems, `${name}'s type errors`).to.deep.equal([]);
        const alias = sf.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === "V");
        if (!alias) throw new Error(`${name} declares no type V`);
        const props: Props = {};
        for (const p of checker.getPropertiesOfType(checker.getTypeAtLocation(alias.name))) {
            props[p.name] = {
                optional: (p.flags & ts.SymbolFlags.Optional) !== 0,
                type: checker.typeToString(checker.getNonNullableType(checker.getTypeOfSymbol(p))),
            };
        }
        out[name] = props;
    }
    return out;
}

describe("declared values", function () {
    let declared: Record<string, Props>;
    before(function () {
        this.timeout(60_000); // the checker loads the declarations and Node's types
        declared = propertiesOf({
            "conditional.ts": `
                import { property, types, Values } from "../../provider/declare/define";
                const declare = (kind: "service" | "consumer") => {
                    const name = property(types.string, "x", { required: true });
                    return { ...(kind === "consumer" ? { consumerProject: name } : {}), note: property(types.string, "y"), serviceName: name,
                        count: property(types.integer, "z", { required: true }), tags: property(types.array(types.string), "t") };
                };
                export type V = Values<ReturnType<typeof declare>>;`,
            "grant.ts": `
                import { Values } from "../../provider/declare/define";
                import { grantProperties } from "../../provider/resources/grant";
                export type V = Values<ReturnType<typeof grantProperties>>;`,
        });
    });

    it("types a property declared for one kind of parent only as optional, the others as declared", () => {
        expect(declared["conditional.ts"]).to.deep.equal({
            consumerProject: { optional: true, type: "string" },
            note: { optional: true, type: "string" },
            serviceName: { optional: false, type: "string" },
            count: { optional: false, type: "number" },
            tags: { optional: true, type: "string[]" },
        });
    });

    it("the inputs a Binding and a Member share: consumerProject (consumer resources only) and condition optional, role and serviceName required", () => {
        const grant = declared["grant.ts"];
        expect(Object.fromEntries(Object.entries(grant).map(([k, v]) => [k, v.optional]))).to.deep.equal({
            condition: true, consumerProject: true, role: false, serviceName: false,
        });
        expect([grant.consumerProject.type, grant.role.type, grant.serviceName.type]).to.deep.equal(["string", "string", "string"]);
    });

    it("declares consumerProject, required, on exactly the consumer resources", () => {
        for (const r of resources) {
            const consumer = r.token.includes("/consumersIam");
            expect(r.inputs.consumerProject?.required, r.token).to.equal(consumer ? true : undefined);
        }
    });
});
