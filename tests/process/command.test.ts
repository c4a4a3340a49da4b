// What the CLI's command line says of a run (provider/process/command.ts): a preview is told only where it is certain.

import { expect } from "chai";
import { runCommandOf } from "../../provider/process/command";

describe("the CLI's command line", () => {
    const cases: [string[], boolean | undefined, boolean?, boolean?, { targets?: string[]; excludes?: string[] }?][] = [
        [["/usr/local/bin/pulumi", "preview", "--refresh"], true, false, true],
        [["pulumi", "preview", "-r"], true, false, true],
        [["pulumi", "pre"], true],
        [["pulumi", "refresh", "--preview-only", "--yes"], true, false, true],
        [["pulumi", "import", "cloud:endpoints/serviceIamMember:ServiceIamMember", "m", "id", "--preview-only"], true],
        [["pulumi", "--cwd", "dir", "up", "--refresh", "--yes"], false, false, true],
        [["pulumi", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"], false, false, true],
        [["pulumi", "destroy", "--target", "urn"], false, true, false, { targets: ["urn"] }],
        [["pulumi", "up", "-t=urn", "--yes", "--target", "urn2"], false, true, false, { targets: ["urn", "urn2"] }],
        [["pulumi", "up", "--exclude", "urn"], false, true, false, { excludes: ["urn"] }],
        [["C:\\Program Files\\Pulumi\\bin\\pulumi.exe", "up"], false],
        // A stack named like a command does not make the run one: the first command word counts.
        [["pulumi", "up", "--stack", "preview"], false],
        // Not the CLI (a test harness, a debugger attaching): unknown.
        [["node", "mocha"], undefined],
        [["pulumi", "stack", "ls"], undefined],
        [[], undefined],
    ];
    for (const [argv, preview, partial, refresh, which] of cases) {
        it(`${JSON.stringify(argv)} → ${preview === undefined ? "unknown" : preview ? "a preview" : "recorded"}${partial ? ", partial" : ""}${refresh ? ", refreshing" : ""}`, () => {
            expect(runCommandOf(argv)).to.deep.equal(preview === undefined ? {} : { preview, partial: partial ?? false, refresh: refresh ?? false, ...which });
        });
    }
});
