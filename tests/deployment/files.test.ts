// Which run of its CLI process a plugin serves (provider/deployment/files.ts, laterRunOfCli): the marker a recording
// command's first run leaves, seen by its later runs, and removed once that CLI no longer runs.

import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { laterRunOfCli } from "../../provider/deployment/files";
import { tempDir } from "../support/temp";

const markers = (folder: string) => fs.readdirSync(folder).filter((n) => n.startsWith("cli-")).sort();

describe("a CLI process's runs in a stack's folder", () => {
    it("its first run is told first (also to that run's other processes), a later run later; one marker, no copy left", () => {
        const folder = tempDir("cli-runs");
        expect(laterRunOfCli(folder, "preview")).to.equal(false);
        expect(laterRunOfCli(folder, "preview"), "another process of the first run").to.equal(false);
        expect(laterRunOfCli(folder, "update")).to.equal(true);
        expect(markers(folder)).to.have.length(1);
        expect(markers(folder)[0]).to.match(/^cli-[0-9a-f]{16}\.run$/);
    });

    it("the marker of a CLI that no longer runs is removed by the next run to reach the folder; a live one's stays", function () {
        if (process.platform !== "linux") this.skip(); // a start time tells a reused PID apart only where /proc does
        const folder = tempDir("cli-runs");
        expect(laterRunOfCli(folder, "mine")).to.equal(false);
        // A plugin whose parent (a shell standing in for a CLI) ends right after: that CLI's marker is left behind.
        const files = path.join(__dirname, "../../provider/deployment/files.js");
        execFileSync("sh", ["-c", `"${process.execPath}" -e 'require(process.argv[1]).laterRunOfCli(process.argv[2], "gone")' "${files}" "${folder}"; true`]);
        expect(markers(folder)).to.have.length(2);
        expect(laterRunOfCli(folder, "mine"), "this CLI's first run still").to.equal(false);
        expect(markers(folder), "the dead CLI's marker removed, this one's kept").to.have.length(1);
        expect(laterRunOfCli(folder, "next")).to.equal(true);
    });
});
