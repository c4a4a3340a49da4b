// What the CLI's command line says of a run (provider/process/command.ts): a preview is told only where it is certain.

import { expect } from "chai";
import { runCommandOf } from "../../provider/process/command";

describe("the CLI's command line", () => {
    // A recording command without --skip-preview previews first: `previewsFirst` (a run of it may be that preview).
    const first = { previewsFirst: true };
    const cases: [string[], boolean | undefined, boolean?, boolean?, { targets?: string[]; excludes?: string[]; previewsFirst?: boolean }?][] = [
        [["/usr/local/bin/pulumi", "preview", "--refresh"], true, false, true],
        [["pulumi", "preview", "-r"], true, false, true],
        [["pulumi", "pre"], true],
        [["pulumi", "refresh", "--preview-only", "--yes"], true, false, true],
        // An import sends the resources it imports, none of the others: partial.
        [["pulumi", "import", "cloud:endpoints/serviceIamMember:ServiceIamMember", "m", "id", "--preview-only"], true, true],
        [["pulumi", "import", "--yes", "cloud:endpoints/serviceIamMember:ServiceIamMember", "m", "id"], false, true, false, first],
        [["pulumi", "--cwd", "dir", "up", "--refresh", "--yes"], false, false, true, first],
        [["pulumi", "up", "--yes", "-f"], false],
        [["pulumi", "destroy", "--yes", "--skip-preview"], false],
        [["pulumi", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"], false, false, true],
        [["pulumi", "destroy", "--target", "urn"], false, true, false, { targets: ["urn"], ...first }],
        [["pulumi", "up", "-t=urn", "--yes", "--target", "urn2"], false, true, false, { targets: ["urn", "urn2"], ...first }],
        [["pulumi", "up", "--exclude", "urn"], false, true, false, { excludes: ["urn"], ...first }],
        [["C:\\Program Files\\Pulumi\\bin\\pulumi.exe", "up"], false, false, false, first],
        // A stack named like a command does not make the run one: the first command word counts.
        [["pulumi", "up", "--stack", "preview"], false, false, false, first],
        // Not the CLI (a test harness, a debugger attaching): unknown.
        [["node", "mocha"], undefined],
        [["pulumi", "stack", "ls"], undefined],
        [[], undefined],
    ];
    for (const [argv, preview, partial, refresh, which] of cases) {
        it(`${JSON.stringify(argv)} → ${preview === undefined ? "unknown" : preview ? "a preview" : "recorded"}${which?.previewsFirst ? " after its preview" : ""}${partial ? ", partial" : ""}${refresh ? ", refreshing" : ""}`, () => {
            expect(runCommandOf(argv)).to.deep.equal(preview === undefined ? {} : { preview, previewsFirst: false, partial: partial ?? false, refresh: refresh ?? false, ...which });
        });
    }
});
