// The README's first command: `npm start` runs the main job on the embedded emulator and prints both
// lookups' records for a person to read.

import { expect } from "chai";
import { execFile } from "child_process";
import * as path from "path";

describe("npm start (the main job)", function () {
    this.timeout(60_000);

    it("prints both lookups from the emulator: a role → members table and the raw records", async () => {
        const script = path.join(__dirname, "..", "..", "scripts", "start.js");
        const out = await new Promise<string>((resolve, reject) =>
            execFile(process.execPath, [script], { timeout: 50_000 }, (err, stdout, stderr) =>
                (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout))));
        expect(out).to.match(/== getServiceIamPolicy\(serviceName: "bookstore\.endpoints\.example-project\.cloud\.goog"\)/);
        expect(out).to.contain('"id": "services/bookstore.endpoints.example-project.cloud.goog"');
        expect(out).to.contain('"id": "services/bookstore.endpoints.example-project.cloud.goog/consumers/consumer-project-1"');
        expect(out).to.contain('"consumerProject": "consumer-project-1"');
        expect(out).to.match(/roles\/servicemanagement\.serviceConsumer \[if until-2030\]\s+user:carol@example\.com/);
        expect(out).to.match(/roles\/servicemanagement\.serviceConsumer\s+group:readers@example\.com\n\s+user:alice@example\.com\n\s+user:bob@example\.com/);
        expect(out).not.to.match(/ya29\.demo-/); // the demo token is never printed
    });
});
