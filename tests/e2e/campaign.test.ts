// The randomized fault campaign (campaign.ts), a handful of trials: each seed's trials are replayable with
// `npm run campaign -- --seed S --trials N`, which runs hundreds.

import { expect } from "chai";
import * as crypto from "crypto";
import { Emulator, startEmulator } from "../../emulator";
import { trial, TrialResult } from "./campaign";
import { PulumiSandbox, skipUnless, toolsMissing } from "./support";

describe("e2e: randomized fault campaign (real CLI and YAML host)", function () {
    this.timeout(600_000);
    this.slow(120_000);
    const token = `e2e-campaign-${crypto.randomBytes(12).toString("hex")}`;
    let emu: Emulator;
    let sb: PulumiSandbox;

    before(async function () {
        skipUnless(this, toolsMissing(["pulumi", "pulumi-language-yaml"]));
        emu = await startEmulator({ accessTokens: [token] });
        sb = await PulumiSandbox.create("campaign");
    });
    after(async () => {
        await emu?.close();
        sb?.dispose();
    });

    // One seed, CAMPAIGN_SEED or a fixed one (the faults' timing still varies from run to run); `npm run campaign`
    // explores new seeds at length.
    const seed = Number(process.env.CAMPAIGN_SEED ?? 457283);
    it(`4 trials of seed ${seed}: no declared grant lost, nothing foreign removed, nothing left unnamed, no false alarm, every trial converged`, async () => {
        const results: TrialResult[] = [];
        for (let i = 0; i < 4; i++) results.push(await trial({ sb, emu, token, say: (l) => process.stdout.write(`      ${l}\n`) }, seed, i));
        const problems = results.flatMap((r) => r.problems.map((p) => `seed ${r.seed} trial ${r.trial} (${r.fault}): ${p}`));
        expect(problems, `replay: npm run campaign -- --seed ${seed} --trials 4`).to.deep.equal([]);
    });
});
