// What the CLI's command line says of a run (provider/process/command.ts): a preview is told only where it is certain.

import { expect } from "chai";
import { runCommandOf } from "../../provider/process/command";

describe("the CLI's command line", () => {
    // argv → preview, previews first, partial, refreshing, targets/excludes.
    const cases: [string[], boolean | undefined, boolean?, boolean?, boolean?, { targets?: string[]; excludes?: string[] }?][] = [
        [["/usr/local/bin/pulumi", "preview", "--refresh"], true, false, false, true],
        [["pulumi", "preview", "-r"], true, false, false, true],
        [["pulumi", "pre"], true, false],
        [["pulumi", "refresh", "--preview-only", "--yes"], true, false, false, true],
        [["pulumi", "import", "cloud:endpoints/serviceIamMember:ServiceIamMember", "m", "id", "--preview-only"], true, false],
        // Without --skip-preview the engine previews first (and the user may answer no).
        [["pulumi", "--cwd", "dir", "up", "--refresh", "--yes"], false, true, false, true],
        [["pulumi", "refresh"], false, true, false, true],
        [["pulumi", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"], false, false, false, true],
        [["pulumi", "refresh", "-fy"], false, false, false, true],
        [["pulumi", "up", "-f", "--yes"], false, false],
        // import's -f is its --file, not --skip-preview.
        [["pulumi", "import", "-f", "resources.json", "--yes"], false, true],
        [["pulumi", "import", "--file", "resources.json", "--yes", "--skip-preview"], false, false],
        [["pulumi", "destroy", "--target", "urn"], false, true, true, false, { targets: ["urn"] }],
        [["pulumi", "up", "-t=urn", "--yes", "--target", "urn2"], false, true, true, false, { targets: ["urn", "urn2"] }],
        [["pulumi", "up", "--exclude", "urn", "--skip-preview"], false, false, true, false, { excludes: ["urn"] }],
        [["C:\\Program Files\\Pulumi\\bin\\pulumi.exe", "up"], false, true],
        // A stack named like a command does not make the run one: the first command word counts.
        [["pulumi", "up", "--stack", "preview"], false, true],
        // Not the CLI (a test harness, a debugger attaching): unknown.
        [["node", "mocha"], undefined],
        [["pulumi", "stack", "ls"], undefined],
        [[], undefined],
    ];
    for (const [argv, preview, previewsFirst, partial, refresh, which] of cases) {
        it(`${JSON.stringify(argv)} → ${preview === undefined ? "unknown" : preview ? "a preview" : "recorded"}${previewsFirst ? ", previewed first" : ""}${partial ? ", partial" : ""}${refresh ? ", refreshing" : ""}`, () => {
            expect(runCommandOf(argv)).to.deep.equal(preview === undefined ? {} : { preview, previewsFirst: previewsFirst ?? false, partial: partial ?? false, refresh: refresh ?? false, ...which });
        });
    }
});
