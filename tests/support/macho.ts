// An ad-hoc-signed macOS executable, checked as macOS would before running it, written apart from the signer
// (scripts/macho.ts) so that a mistake there is not repeated here: this reads the Mach-O's load commands, finds
// the code signature, and recomputes every page hash and the requirements' hash from the file's final bytes.

import { createHash } from "crypto";

/** What a checked executable holds. */
export interface SignedMachO {
    cpu: "x86_64" | "arm64";
    identifier: string;
    /** Bytes of the NODE_SEA segment's __NODE_SEA_BLOB section (Node's single executable application). */
    seaBlobBytes: number;
    /** The file offset of the signature, and how many 4096-byte pages its CodeDirectory hashes. */
    signatureOffset: number;
    pages: number;
}

const CPUS: Record<number, SignedMachO["cpu"]> = { 0x01000007: "x86_64", 0x0100000c: "arm64" };

function name16(file: Buffer, at: number): string {
    return file.toString("latin1", at, at + 16).replace(/\0.*$/s, "");
}

/** Throws, naming what is wrong, unless `file` is a thin 64-bit executable with a valid ad-hoc signature. */
export function checkAdhocSignedMachO(file: Buffer): SignedMachO {
    const fail = (why: string): never => {
        throw new Error(`not a validly ad-hoc-signed Mach-O executable: ${why}`);
    };
    if (file.readUInt32LE(0) !== 0xfeedfacf) fail("no 64-bit Mach-O magic");
    const cpu = CPUS[file.readUInt32LE(4)] ?? fail(`CPU type 0x${file.readUInt32LE(4).toString(16)}`);
    if (file.readUInt32LE(12) !== 2) fail("not MH_EXECUTE");
    const segs = new Map<string, { fileoff: number; filesize: number; vmsize: number; sections: Map<string, { offset: number; size: number }> }>();
    let sig: { dataoff: number; datasize: number } | undefined;
    let lc = 32;
    const end = 32 + file.readUInt32LE(20);
    for (let n = file.readUInt32LE(16); n > 0; n--) {
        const [cmd, size] = [file.readUInt32LE(lc), file.readUInt32LE(lc + 4)];
        if (cmd === 0x19) {
            const sections = new Map<string, { offset: number; size: number }>();
            for (let i = 0, s = lc + 72; i < file.readUInt32LE(lc + 64); i++, s += 80) {
                sections.set(name16(file, s), { offset: file.readUInt32LE(s + 48), size: Number(file.readBigUInt64LE(s + 40)) });
            }
            segs.set(name16(file, lc + 8), {
                vmsize: Number(file.readBigUInt64LE(lc + 32)), fileoff: Number(file.readBigUInt64LE(lc + 40)), filesize: Number(file.readBigUInt64LE(lc + 48)), sections,
            });
        }
        if (cmd === 0x1d) sig = sig ? fail("two LC_CODE_SIGNATURE commands") : { dataoff: file.readUInt32LE(lc + 8), datasize: file.readUInt32LE(lc + 12) };
        lc += size;
    }
    if (lc !== end) fail("load commands do not add up to sizeofcmds");
    if (!sig) return fail("no LC_CODE_SIGNATURE");
    const { dataoff, datasize } = sig;
    if (dataoff % 16 !== 0) fail(`signature offset ${dataoff} is not 16-byte aligned`);
    if (dataoff + datasize !== file.length) fail("the signature does not end the file");
    const linkedit = segs.get("__LINKEDIT") ?? fail("no __LINKEDIT");
    const text = segs.get("__TEXT") ?? fail("no __TEXT");
    if (!(linkedit.fileoff <= dataoff && linkedit.fileoff + linkedit.filesize >= dataoff + datasize)) fail("__LINKEDIT's filesize does not cover the signature");
    if (linkedit.vmsize < linkedit.filesize) fail("__LINKEDIT's vmsize is smaller than its filesize");
    const sea = segs.get("NODE_SEA")?.sections.get("__NODE_SEA_BLOB") ?? fail("no NODE_SEA segment with a __NODE_SEA_BLOB section");

    const be = (at: number) => file.readUInt32BE(at);
    if (be(dataoff) !== 0xfade0cc0) fail("the signature is not an embedded-signature SuperBlob");
    if (be(dataoff + 4) > datasize) fail("the SuperBlob is longer than LC_CODE_SIGNATURE's datasize");
    const slots = new Map<number, number>();
    for (let i = 0; i < be(dataoff + 8); i++) slots.set(be(dataoff + 12 + 8 * i), dataoff + be(dataoff + 16 + 8 * i));
    const cd = slots.get(0) ?? fail("no CodeDirectory in slot 0");
    if (be(cd) !== 0xfade0c02) fail("slot 0 is not a CodeDirectory");
    if (be(cd + 8) < 0x20400) fail(`CodeDirectory version 0x${be(cd + 8).toString(16)} has no executable-segment fields`);
    if ((be(cd + 12) & 0x2) === 0) fail("the CodeDirectory is not flagged ad hoc");
    const [hashOff, identOff, nSpecial, nCode, codeLimit] = [be(cd + 16), be(cd + 20), be(cd + 24), be(cd + 28), be(cd + 32)];
    if (file[cd + 36] !== 32 || file[cd + 37] !== 2 || file[cd + 39] !== 12) fail("the CodeDirectory is not SHA-256 over 4 KiB pages");
    if (codeLimit !== dataoff) fail(`codeLimit ${codeLimit} is not the signature's offset ${dataoff}`);
    if (nCode !== Math.ceil(dataoff / 4096)) fail(`${nCode} page hashes for ${dataoff} bytes`);
    if (Number(file.readBigUInt64BE(cd + 64)) !== text.fileoff || Number(file.readBigUInt64BE(cd + 72)) !== text.filesize) fail("execSeg base/limit are not __TEXT's");
    const hash = (from: number, to: number) => createHash("sha256").update(file.subarray(from, to)).digest();
    for (let page = 0; page < nCode; page++) {
        const from = page * 4096;
        if (!hash(from, Math.min(from + 4096, codeLimit)).equals(file.subarray(cd + hashOff + 32 * page, cd + hashOff + 32 * (page + 1)))) fail(`page ${page} does not match its hash`);
    }
    // Special slots, hashed just before the page hashes: slot n at hashOff - 32n; present blobs must match.
    for (let slot = 1; slot <= nSpecial; slot++) {
        const want = file.subarray(cd + hashOff - 32 * slot, cd + hashOff - 32 * (slot - 1));
        const at = slots.get(slot);
        if (at === undefined) {
            if (!want.equals(Buffer.alloc(32))) fail(`special slot ${slot} has a hash but no blob`);
        } else if (!hash(at, at + be(at + 4)).equals(want)) fail(`special slot ${slot}'s blob does not match its hash`);
    }
    if (slots.has(2) && (be(slots.get(2)!) !== 0xfade0c01)) fail("slot 2 is not a requirements blob");
    const cms = slots.get(0x10000);
    if (cms !== undefined && be(cms + 4) !== 8) fail("slot 0x10000 holds a CMS signature: not ad hoc");
    const identifier = file.toString("latin1", cd + identOff, file.indexOf(0, cd + identOff));
    return { cpu, identifier, seaBlobBytes: sea.size, signatureOffset: dataoff, pages: nCode };
}
