// scripts/macho.ts: the ad-hoc signature the macOS executables get after injection, checked by an independent
// verifier (tests/support/macho.ts) on a small synthetic executable; and the check that a pinned Node binary is
// the Node.js Foundation's signed build, on the real binaries (fetched once by `npm run dist`'s cache).

import { expect } from "chai";
import { createHash } from "crypto";
import { adhocSign, checkNodeFoundationSignature, parseMachO, signatureBlobs } from "../../scripts/macho";
import { nodeBinary } from "../../scripts/dist";
import { PLATFORMS, platformKey } from "../../scripts/platforms";
import { checkAdhocSignedMachO } from "../support/macho";

/** A load command LC_SEGMENT_64 with its sections (name, file offset, size). */
function segment(name: string, vmaddr: number, fileoff: number, filesize: number, sections: [string, number, number][] = []): Buffer {
    const cmd = Buffer.alloc(72 + 80 * sections.length);
    cmd.writeUInt32LE(0x19, 0);
    cmd.writeUInt32LE(cmd.length, 4);
    cmd.write(name, 8, "latin1");
    cmd.writeBigUInt64LE(BigInt(vmaddr), 24);
    cmd.writeBigUInt64LE(BigInt(Math.ceil(filesize / 0x4000) * 0x4000), 32);
    cmd.writeBigUInt64LE(BigInt(fileoff), 40);
    cmd.writeBigUInt64LE(BigInt(filesize), 48);
    cmd.writeUInt32LE(sections.length, 64);
    sections.forEach(([sect, offset, size], i) => {
        const s = 72 + 80 * i;
        cmd.write(sect, s, "latin1");
        cmd.write(name, s + 16, "latin1");
        cmd.writeBigUInt64LE(BigInt(vmaddr + offset - fileoff), s + 32);
        cmd.writeBigUInt64LE(BigInt(size), s + 40);
        cmd.writeUInt32LE(offset, s + 48);
    });
    return cmd;
}

/** An unsigned arm64 executable as postject leaves one: __TEXT, NODE_SEA, then __LINKEDIT ending the file. */
function unsignedExecutable(linkeditBytes = 0x123): Buffer {
    const base = 0x100000000;
    const cmds = Buffer.concat([
        segment("__TEXT", base, 0, 0x4000, [["__text", 0x1000, 0x200]]),
        segment("NODE_SEA", base + 0x4000, 0x4000, 0x1800, [["__NODE_SEA_BLOB", 0x4000, 0x1800]]),
        segment("__LINKEDIT", base + 0x8000, 0x8000, linkeditBytes),
    ]);
    const file = Buffer.alloc(0x8000 + linkeditBytes);
    for (let i = 0; i < file.length; i++) file[i] = (i * 7919) & 0xff;
    file.fill(0, 0, 0x1000);
    file.writeUInt32LE(0xfeedfacf, 0);
    file.writeUInt32LE(0x0100000c, 4);
    file.writeUInt32LE(2, 12); // MH_EXECUTE
    file.writeUInt32LE(3, 16);
    file.writeUInt32LE(cmds.length, 20);
    cmds.copy(file, 32);
    return file;
}

describe("scripts/macho.ts: ad-hoc signing", () => {
    it("signs an unsigned executable so that an independent check of every page hash passes", () => {
        const signed = adhocSign(unsignedExecutable(), "pulumi-resource-cloud");
        expect(checkAdhocSignedMachO(signed)).to.deep.equal({
            cpu: "arm64", identifier: "pulumi-resource-cloud", seaBlobBytes: 0x1800, signatureOffset: 0x8130, pages: 9,
        });
    });

    it("is deterministic, and any changed byte before the signature breaks it", () => {
        const signed = adhocSign(unsignedExecutable(), "x");
        expect(adhocSign(unsignedExecutable(), "x").equals(signed)).to.equal(true);
        for (const at of [16, 0x1500, 0x4000, 0x8122]) {
            const changed = Buffer.from(signed);
            changed[at] ^= 1;
            expect(() => checkAdhocSignedMachO(changed), `byte ${at}`).to.throw(/does not match its hash|load commands|not MH_EXECUTE/);
        }
    });

    it("aligns the signature to 16 bytes and grows __LINKEDIT over it, whatever the file's length", () => {
        for (const bytes of [0x100, 0x101, 0x10f]) {
            const signed = adhocSign(unsignedExecutable(bytes), "x");
            const m = parseMachO(signed);
            expect(m.signature!.dataoff % 16).to.equal(0);
            expect(m.segments.at(-1)!.fileoff + m.segments.at(-1)!.filesize).to.equal(signed.length);
            checkAdhocSignedMachO(signed);
        }
    });

    it("refuses a signed executable, and one with no room for the new load command", () => {
        const signed = adhocSign(unsignedExecutable(), "x");
        expect(() => adhocSign(signed, "x")).to.throw(/already signed/);
        const crowded = unsignedExecutable();
        crowded.writeUInt32LE(0x1000 - 32 - 8, 20); // load commands reaching the first section's contents
        expect(() => adhocSign(crowded, "x")).to.throw(/runs past|no room/);
    });
});

describe("scripts/macho.ts: the Node.js Foundation's signature on the pinned macOS Node binaries", function () {
    this.timeout(600_000); // the first run fetches the packages (about 45 MB each) from the npm registry
    const darwin = PLATFORMS.filter((p) => p.os === "darwin");
    const binaries = new Map<string, Buffer>();
    before(() => {
        for (const p of darwin) binaries.set(platformKey(p), nodeBinary(p, p.node!));
    });

    it("accepts each: Developer ID Application: Node.js Foundation (HX7739G8FX), chained to Apple Root CA, over exactly its bytes", () => {
        for (const [key, binary] of binaries) expect(() => checkNodeFoundationSignature(binary), key).not.to.throw();
    });

    it("refuses a changed byte of code, a changed CMS signature, and an ad-hoc signature", () => {
        const binary = Buffer.from(binaries.get("darwin-arm64")!);
        binary[0x5000] ^= 1;
        expect(() => checkNodeFoundationSignature(binary)).to.throw(/page 5 \(offset 20480\) does not match its hash/);
        binary[0x5000] ^= 1;

        // The signer's RSA signature: the first 256-byte OCTET STRING after the signed attributes, which hold the
        // CodeDirectory's hash (a timestamp's signature follows, unsigned).
        const cd = signatureBlobs(binary, parseMachO(binary)).get(0)!;
        const digest = binary.indexOf(createHash("sha256").update(cd).digest(), binary.indexOf(cd) + cd.length);
        const sigAt = binary.indexOf(Buffer.from([0x04, 0x82, 0x01, 0x00]), digest) + 4 + 100;
        binary[sigAt] ^= 1;
        expect(() => checkNodeFoundationSignature(binary)).to.throw(/does not verify with the signer's certificate/);

        expect(() => checkNodeFoundationSignature(adhocSign(unsignedExecutable(), "node"))).to.throw(/team is none/);
    });
});
