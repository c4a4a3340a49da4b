// Mocha's spec reporter, closing with the plain line CI reads: "N passed, M failed".
import Mocha from "mocha";

class Reporter extends Mocha.reporters.Spec {
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
        super(runner, options);
        runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
            const s = runner.stats!;
            process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${s.pending ? `, ${s.pending} skipped` : ""}\n`);
        });
    }
}

export = Reporter;
