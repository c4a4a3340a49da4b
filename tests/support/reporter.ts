// Mocha's spec reporter, closing with the plain line CI reads: "N passed, M failed" (with `--reporter-option
// label=X`, "X: N passed, M failed").
import Mocha from "mocha";
import { stripVTControlCharacters } from "util";

class Reporter extends Mocha.reporters.Spec {
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
        super(runner, options);
        // Colour only on a terminal: mocha colours its text, and its ✔ and ✖ symbols, whenever CI is set, even
        // when its output is a pipe into a log. NO_COLOR turns it off; MOCHA_COLORS (mocha's own switch) keeps it.
        if (process.env.MOCHA_COLORS === undefined && (!process.stdout.isTTY || process.env.NO_COLOR !== undefined)) {
            const { Base } = Mocha.reporters;
            Base.useColors = false;
            Base.symbols.ok = stripVTControlCharacters(Base.symbols.ok);
            Base.symbols.err = stripVTControlCharacters(Base.symbols.err);
        }
        // `npm test` runs two sets (the tests, then the e2e tests, one at a time): the second's line says which.
        const label = (options?.reporterOptions as { label?: string } | undefined)?.label;
        runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
            const s = runner.stats!;
            process.stdout.write(`\n${label ? `${label}: ` : ""}${s.passes} passed, ${s.failures} failed${s.pending ? `, ${s.pending} skipped` : ""}\n`);
        });
    }
}

export = Reporter;
