// The tree is the architecture: provider/ holds only its layers, each folder's README.md says what it owns and
// which layers it may import (the one statement of the rule), and every import — type-only and dynamic ones
// included — keeps to it. The emulator imports nothing from provider/; tests/ and docs/design/layout.md's layers section name
// the same folders.

import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

const ROOT = path.join(__dirname, "..", "..");
const PROVIDER = path.join(ROOT, "provider");
/** Folders of tests/ that are not a layer: what runs across them (the real engine, faults, the tools). */
const ACROSS = ["bench", "e2e", "emulator", "reliability", "scripts", "support"];

interface Layer {
    name: string;
    owns: string;
    mayImport: Set<string>;
}

function layers(): Map<string, Layer> {
    const out = new Map<string, Layer>();
    for (const name of fs.readdirSync(PROVIDER)) {
        if (!fs.statSync(path.join(PROVIDER, name)).isDirectory()) continue;
        const lines = fs.readFileSync(path.join(PROVIDER, name, "README.md"), "utf8").trimEnd().split("\n");
        expect(lines, `provider/${name}/README.md: a title and two lines`).to.have.length(3);
        expect(lines[0]).to.equal(`# provider/${name}`);
        const owns = /^Owns: (.+)$/.exec(lines[1]);
        const may = /^May import: (.+)\.$/.exec(lines[2]);
        if (!owns || !may) throw new Error(`provider/${name}/README.md: the lines are "Owns: …" and "May import: ….", not ${JSON.stringify(lines.slice(1))}`);
        const mayImport = may[1] === "nothing of provider/" ? [] : may[1].split(", ");
        out.set(name, { name, owns: owns[1], mayImport: new Set(mayImport) });
    }
    return out;
}

/** Every module a TypeScript file imports (static, type-only, `export … from`, `import()` and `require()`). */
function importsOf(file: string): string[] {
    return ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

function sources(dir: string): string[] {
    return fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => path.join(dir, f));
}

/** The layer a path is in, or undefined outside provider/. */
function layerOf(file: string): string | undefined {
    const rel = path.relative(PROVIDER, file);
    return rel.startsWith("..") ? undefined : rel.split(path.sep)[0];
}

describe("layers", () => {
    it("provider/ holds only its layers, each with its header", () => {
        const loose = fs.readdirSync(PROVIDER).filter((n) => !fs.statSync(path.join(PROVIDER, n)).isDirectory());
        expect(loose, "files directly in provider/").to.deep.equal([]);
        expect([...layers().keys()]).to.include.members(["protocol", "deployment", "resources", "functions", "iam"]);
    });

    it("say which layers are below which: a strict order, each layer importing every one below it", () => {
        const all = layers();
        for (const l of all.values()) {
            for (const m of l.mayImport) {
                expect(all.has(m), `provider/${l.name} may import "${m}", which is no layer`).to.equal(true);
                expect(all.get(m)!.mayImport.has(l.name), `provider/${l.name} and provider/${m} may import each other`).to.equal(false);
                // Transitive: what a lower layer may import, this one may too, so the layers stack.
                for (const below of all.get(m)!.mayImport) {
                    expect(l.mayImport.has(below), `provider/${l.name} may import ${m}, which may import ${below}`).to.equal(true);
                }
            }
            expect(l.mayImport.has(l.name), `provider/${l.name} lists itself`).to.equal(false);
        }
    });

    it("every import in provider/ runs within its layer or down to one the header allows", () => {
        const all = layers();
        const wrong: string[] = [];
        for (const file of sources(PROVIDER)) {
            const from = layerOf(file)!;
            for (const spec of importsOf(file).filter((s) => s.startsWith("."))) {
                const target = path.resolve(path.dirname(file), spec);
                const to = layerOf(target);
                const ok = to === undefined ? target === path.join(ROOT, "package.json") : to === from || all.get(from)!.mayImport.has(to);
                if (!ok) wrong.push(`${path.relative(ROOT, file)} imports "${spec}"`);
            }
        }
        expect(wrong).to.deep.equal([]);
    });

    it("the emulator imports nothing from provider/", () => {
        const wrong = sources(path.join(ROOT, "emulator")).flatMap((file) => importsOf(file)
            .filter((spec) => spec.startsWith(".") && layerOf(path.resolve(path.dirname(file), spec)) !== undefined)
            .map((spec) => `${path.relative(ROOT, file)} imports "${spec}"`));
        expect(wrong).to.deep.equal([]);
    });

    it("tests/ mirror the layers", () => {
        const all = layers();
        const folders = fs.readdirSync(path.join(ROOT, "tests")).filter((n) => fs.statSync(path.join(ROOT, "tests", n)).isDirectory());
        expect(folders.filter((f) => !all.has(f) && !ACROSS.includes(f)), "test folders named after no layer").to.deep.equal([]);
    });

    it("the layout design note's layers section names every layer, and nothing that is not one", () => {
        const note = fs.readFileSync(path.join(ROOT, "docs", "design", "layout.md"), "utf8");
        const section = /\n## Layers\n([\s\S]*?)(?:\n## |$)/.exec(note);
        if (!section) throw new Error("docs/design/layout.md has no ## Layers section");
        const named = new Set([...section[1].matchAll(/provider\/([a-z]+)\//g)].map((m) => m[1]));
        expect([...named].sort()).to.deep.equal([...layers().keys()].sort());
    });
});

describe("the journal's decision core", () => {
    const JOURNAL = path.join(PROVIDER, "journal");
    /** A file's imports but its type-only ones, which are erased from the code that runs. */
    const runtimeImports = (file: string) => {
        const typeOnly = new Set([...fs.readFileSync(file, "utf8").matchAll(/^import type [^;]*? from "([^"]+)";/gm)].map((m) => m[1]));
        return importsOf(file).filter((s) => !typeOnly.has(s));
    };
    /** Every file of provider/ a journal file reaches through its imports (type-only ones included). */
    function reached(): string[] {
        const seen = new Set<string>();
        const visit = (file: string) => {
            if (seen.has(file)) return;
            seen.add(file);
            for (const spec of runtimeImports(file).filter((s) => s.startsWith("."))) {
                const target = path.resolve(path.dirname(file), spec);
                const ts = fs.existsSync(`${target}.ts`) ? `${target}.ts` : path.join(target, "index.ts");
                if (layerOf(ts) !== undefined && fs.existsSync(ts)) visit(ts);
            }
        };
        for (const f of sources(JOURNAL)) visit(f);
        return [...seen];
    }

    it("imports no Node module, nor anything outside provider/, in any file it reaches", () => {
        const wrong = reached().flatMap((file) => runtimeImports(file).filter((s) => !s.startsWith(".")).map((s) => `${path.relative(ROOT, file)} imports "${s}"`));
        expect(wrong).to.deep.equal([]);
    });

    it("waits for nothing: no step is async, awaits or makes a promise (the shell does the waiting)", () => {
        const banned = /\b(async|await|Promise|then\()/;
        const wrong = sources(JOURNAL).flatMap((file) => fs.readFileSync(file, "utf8").split("\n")
            .map((line, i) => ({ line: line.replace(/\/\/.*$/, ""), i }))
            .filter(({ line }) => !/^\s*\*/.test(line) && !/^\s*\/\*\*/.test(line) && banned.test(line))
            .map(({ i }) => `${path.relative(ROOT, file)}:${i + 1}`));
        expect(wrong).to.deep.equal([]);
    });

    it("reads no clock, randomness, timer or process of its own: the shell tells it the time and the storage", () => {
        const banned = /\b(Date\.now|new Date|Math\.random|setTimeout|setInterval|setImmediate|process\.|require\()/;
        const wrong = sources(JOURNAL).flatMap((file) => fs.readFileSync(file, "utf8").split("\n")
            .map((line, i) => ({ line: line.replace(/\/\/.*$/, ""), i }))
            .filter(({ line }) => !/^\s*\*/.test(line) && banned.test(line))
            .map(({ i }) => `${path.relative(ROOT, file)}:${i + 1}`));
        expect(wrong).to.deep.equal([]);
    });
});
