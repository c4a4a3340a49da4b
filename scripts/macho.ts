// Mach-O executables for the macOS tarballs (scripts/dist.ts): reading a thin 64-bit Mach-O, checking that a
// Node binary carries the Node.js Foundation's Developer ID signature over exactly its bytes, and signing the
// executable ad hoc once the plugin is injected (postject drops Node's signature, and macOS on Apple silicon runs
// no unsigned code). Written from Apple's published structures (xnu's cs_blobs.h, <mach-o/loader.h>):
//
//   LC_CODE_SIGNATURE → a SuperBlob (magic 0xfade0cc0, big-endian) at the end of __LINKEDIT, indexing blobs by
//   slot: 0 the CodeDirectory (0xfade0c02: SHA-256 of each 4096-byte page of the file up to the signature, and
//   "special slot" hashes of the other blobs), 2 the requirements (0xfade0c01), 5/7 entitlements, 0x10000 a
//   CMS signature (0xfade0b01) over the CodeDirectory — empty when signed ad hoc.

import { createHash, verify as verifySignature, X509Certificate } from "crypto";

export const MH_MAGIC_64 = 0xfeedfacf;
export const CPU_TYPE = { x86_64: 0x01000007, arm64: 0x0100000c } as const;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const MH_EXECUTE = 2;

export const CSMAGIC = {
    superBlob: 0xfade0cc0, codeDirectory: 0xfade0c02, requirements: 0xfade0c01, blobWrapper: 0xfade0b01,
} as const;
export const CSSLOT = { codeDirectory: 0, requirements: 2, signature: 0x10000 } as const;
const CS_ADHOC = 0x2;
const CS_EXECSEG_MAIN_BINARY = 0x1;
const CS_HASHTYPE_SHA256 = 2;
const PAGE_SHIFT = 12;
const PAGE = 1 << PAGE_SHIFT;

export interface Section { name: string; offset: number; size: number }
export interface Segment {
    name: string;
    /** Where its load command is in the file. */
    command: number;
    vmaddr: number; vmsize: number; fileoff: number; filesize: number;
    sections: Section[];
}
export interface MachO {
    cputype: number;
    filetype: number;
    ncmds: number;
    sizeofcmds: number;
    segments: Segment[];
    /** LC_CODE_SIGNATURE: where its command is, and the signature's place in the file. */
    signature?: { command: number; dataoff: number; datasize: number };
}

function cString(data: Buffer, start: number, length: number): string {
    const raw = data.subarray(start, start + length);
    const nul = raw.indexOf(0);
    return raw.toString("latin1", 0, nul < 0 ? raw.length : nul);
}

/** Parses a thin 64-bit little-endian Mach-O's header and load commands; throws naming what it is not. */
export function parseMachO(data: Buffer): MachO {
    if (data.length < 32 || data.readUInt32LE(0) !== MH_MAGIC_64) throw new Error("not a thin 64-bit Mach-O (a universal binary must be thinned first)");
    const m: MachO = { cputype: data.readUInt32LE(4), filetype: data.readUInt32LE(12), ncmds: data.readUInt32LE(16), sizeofcmds: data.readUInt32LE(20), segments: [] };
    let at = 32;
    for (let i = 0; i < m.ncmds; i++) {
        const cmd = data.readUInt32LE(at);
        const size = data.readUInt32LE(at + 4);
        if (size < 8 || at + size > 32 + m.sizeofcmds) throw new Error(`load command ${i} runs past the load commands`);
        if (cmd === LC_SEGMENT_64) {
            const u64 = (o: number) => Number(data.readBigUInt64LE(at + o));
            const sections: Section[] = [];
            for (let s = 0; s < data.readUInt32LE(at + 64); s++) {
                const so = at + 72 + s * 80;
                sections.push({ name: cString(data, so, 16), offset: data.readUInt32LE(so + 48), size: Number(data.readBigUInt64LE(so + 40)) });
            }
            m.segments.push({ name: cString(data, at + 8, 16), command: at, vmaddr: u64(24), vmsize: u64(32), fileoff: u64(40), filesize: u64(48), sections });
        } else if (cmd === LC_CODE_SIGNATURE) {
            m.signature = { command: at, dataoff: data.readUInt32LE(at + 8), datasize: data.readUInt32LE(at + 12) };
        }
        at += size;
    }
    return m;
}

function segment(m: MachO, name: string): Segment {
    const s = m.segments.find((x) => x.name === name);
    if (!s) throw new Error(`no ${name} segment`);
    return s;
}

/** The SuperBlob's blobs by slot, each with its header. */
export function signatureBlobs(data: Buffer, m: MachO): Map<number, Buffer> {
    if (!m.signature) throw new Error("no LC_CODE_SIGNATURE: the binary is not signed");
    const sb = data.subarray(m.signature.dataoff, m.signature.dataoff + m.signature.datasize);
    if (sb.readUInt32BE(0) !== CSMAGIC.superBlob) throw new Error("LC_CODE_SIGNATURE does not point at a SuperBlob");
    const blobs = new Map<number, Buffer>();
    for (let i = 0; i < sb.readUInt32BE(8); i++) {
        const offset = sb.readUInt32BE(16 + i * 8);
        blobs.set(sb.readUInt32BE(12 + i * 8), sb.subarray(offset, offset + sb.readUInt32BE(offset + 4)));
    }
    return blobs;
}

const sha256 = (data: Buffer): Buffer => createHash("sha256").update(data).digest();

/**
 * Throws unless the CodeDirectory `cd` (SHA-256) covers `data` exactly: codeLimit is the signature's offset,
 * every page hash matches, and so does each special slot whose blob is present. Returns its team ID.
 */
export function checkCodeDirectory(data: Buffer, m: MachO, cd: Buffer, blobs: Map<number, Buffer>): string | undefined {
    if (cd.readUInt32BE(0) !== CSMAGIC.codeDirectory) throw new Error("slot 0 is not a CodeDirectory");
    const version = cd.readUInt32BE(8);
    const hashOffset = cd.readUInt32BE(16);
    const nSpecial = cd.readUInt32BE(24);
    const nCode = cd.readUInt32BE(28);
    const codeLimit = cd.readUInt32BE(32);
    if (cd[36] !== 32 || cd[37] !== CS_HASHTYPE_SHA256 || cd[39] !== PAGE_SHIFT) throw new Error("the CodeDirectory is not SHA-256 over 4096-byte pages");
    if (codeLimit !== m.signature?.dataoff) throw new Error(`the CodeDirectory covers ${codeLimit} bytes, but the signature is at ${m.signature?.dataoff}`);
    if (nCode !== Math.ceil(codeLimit / PAGE)) throw new Error(`the CodeDirectory has ${nCode} page hashes for ${codeLimit} bytes`);
    for (let i = 0; i < nCode; i++) {
        const want = cd.subarray(hashOffset + i * 32, hashOffset + (i + 1) * 32);
        if (!sha256(data.subarray(i * PAGE, Math.min((i + 1) * PAGE, codeLimit))).equals(want)) throw new Error(`page ${i} (offset ${i * PAGE}) does not match its hash: the file changed after it was signed`);
    }
    for (let slot = 1; slot <= nSpecial; slot++) {
        const blob = blobs.get(slot);
        const want = cd.subarray(hashOffset - slot * 32, hashOffset - (slot - 1) * 32);
        if (blob && !sha256(blob).equals(want)) throw new Error(`special slot ${slot}'s blob does not match its hash`);
    }
    const teamOffset = version >= 0x20200 ? cd.readUInt32BE(48) : 0;
    return teamOffset ? cString(cd, teamOffset, cd.length - teamOffset) : undefined;
}

// --- the Node.js Foundation's signature ------------------------------------------------------------------

/** Apple Root CA's SHA-256 fingerprint, as Apple publishes it (apple.com/certificateauthority). */
export const APPLE_ROOT_CA_SHA256 = "B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24";
/** The Node.js Foundation's Apple team, whose Developer ID signs Node's macOS binaries. */
export const NODE_TEAM_ID = "HX7739G8FX";
const NODE_SIGNER = `Developer ID Application: Node.js Foundation (${NODE_TEAM_ID})`;

/** OIDs' DER contents, as hex. */
const OID = {
    signedData: "2a864886f70d010702",
    messageDigest: "2a864886f70d010904",
    signingTime: "2a864886f70d010905",
    sha256: "608648016503040201",
    /** Apple's marker extension of a Developer ID Application certificate (1.2.840.113635.100.6.1.13). */
    developerIdApplication: "2a864886f7636406010d",
};

interface Der { tag: number; raw: Buffer; content: Buffer }

/**
 * One BER element at `offset` (single-byte tags). codesign writes the CMS blob's outer layers with indefinite
 * lengths, ended by two zero bytes; what is signed (attributes, certificates) is DER.
 */
function der(buf: Buffer, offset = 0): Der {
    const tag = buf[offset];
    let length = buf[offset + 1];
    let header = 2;
    if (length === 0x80) {
        let at = offset + 2;
        while (buf[at] !== 0 || buf[at + 1] !== 0) {
            if (at >= buf.length) throw new Error("truncated BER");
            at += der(buf, at).raw.length;
        }
        return { tag, raw: buf.subarray(offset, at + 2), content: buf.subarray(offset + 2, at) };
    }
    if (length & 0x80) {
        const n = length & 0x7f;
        if (n === 0 || n > 4) throw new Error("unsupported DER length");
        length = buf.readUIntBE(offset + 2, n);
        header += n;
    }
    if (offset + header + length > buf.length) throw new Error("truncated DER");
    return { tag, raw: buf.subarray(offset, offset + header + length), content: buf.subarray(offset + header, offset + header + length) };
}

function children(node: Der): Der[] {
    const out: Der[] = [];
    for (let at = 0; at < node.content.length;) {
        const child = der(node.content, at);
        out.push(child);
        at += child.raw.length;
    }
    return out;
}

/** UTCTime `YYMMDDhhmmssZ`. */
function utcTime(d: Der): Date {
    const m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(d.content.toString("latin1"));
    if (d.tag !== 0x17 || !m) throw new Error("signingTime is not a UTCTime");
    const [y, mo, day, h, mi, s] = m.slice(1).map(Number);
    return new Date(Date.UTC(y < 50 ? 2000 + y : 1900 + y, mo - 1, day, h, mi, s));
}

/**
 * Throws, naming what fails, unless `data` carries the Node.js Foundation's Developer ID signature over exactly
 * these bytes: its CodeDirectory's page and blob hashes match the file, and it is team HX7739G8FX's; the CMS
 * blob's messageDigest is that CodeDirectory's SHA-256, its RSA signature verifies with the signer's certificate,
 * which is "Developer ID Application: Node.js Foundation (HX7739G8FX)", valid at the signing time, issued by
 * Apple's Developer ID CA, itself issued by Apple Root CA (pinned by fingerprint). No revocation check (offline).
 */
export function checkNodeFoundationSignature(data: Buffer): void {
    const m = parseMachO(data);
    const blobs = signatureBlobs(data, m);
    const cd = blobs.get(CSSLOT.codeDirectory);
    if (!cd) throw new Error("the signature has no CodeDirectory");
    const team = checkCodeDirectory(data, m, cd, blobs);
    if (team !== NODE_TEAM_ID) throw new Error(`the CodeDirectory's team is ${team ?? "none"}, not ${NODE_TEAM_ID}`);
    const wrapper = blobs.get(CSSLOT.signature);
    if (!wrapper || wrapper.readUInt32BE(0) !== CSMAGIC.blobWrapper || wrapper.length <= 8) throw new Error("no CMS signature: signed ad hoc, not by a Developer ID");

    // ContentInfo { signedData, [0] SignedData { version, digestAlgorithms, encapContentInfo, [0] certificates, ..., signerInfos } }
    const [type, wrapped] = children(der(wrapper.subarray(8)));
    if (type.content.toString("hex") !== OID.signedData) throw new Error("the CMS blob is not SignedData");
    const signedData = children(children(wrapped)[0]);
    const certs = children(signedData.find((c) => c.tag === 0xa0) ?? { tag: 0, raw: Buffer.alloc(0), content: Buffer.alloc(0) })
        .map((c) => ({ der: c.raw, x509: new X509Certificate(c.raw) }));
    const signerInfos = children(signedData[signedData.length - 1]);
    if (signerInfos.length !== 1) throw new Error(`the CMS blob has ${signerInfos.length} signers, not 1`);
    // SignerInfo { version, issuerAndSerialNumber, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, ... }
    const [, sid, digestAlg, attrs, , signature] = children(signerInfos[0]);
    if (children(digestAlg)[0].content.toString("hex") !== OID.sha256 || attrs.tag !== 0xa0 || signature.tag !== 0x04) throw new Error("the signer is not SHA-256 with signed attributes");
    const attr = (oid: string): Der => {
        const a = children(attrs).map(children).find(([o]) => o.content.toString("hex") === oid);
        if (!a) throw new Error(`the signed attributes lack ${oid}`);
        return children(a[1])[0];
    };
    if (!attr(OID.messageDigest).content.equals(sha256(cd))) throw new Error("the CMS signature is over another CodeDirectory");
    const signedAt = utcTime(attr(OID.signingTime));

    const serial = children(sid)[1].content.toString("hex").replace(/^(00)+/, "").toUpperCase();
    const leaf = certs.find((c) => c.x509.serialNumber.replace(/^(00)+/, "").toUpperCase() === serial);
    if (!leaf) throw new Error("the signer's certificate is not in the CMS blob");
    // The signature covers the signed attributes encoded as a SET (RFC 5652 §5.4), not as the [0] they are stored as.
    const signed = Buffer.concat([Buffer.from([0x31]), attrs.raw.subarray(1)]);
    if (!verifySignature("sha256", signed, leaf.x509.publicKey, signature.content)) throw new Error("the CMS signature does not verify with the signer's certificate");
    const subject = leaf.x509.subject.split("\n");
    if (!subject.includes(`CN=${NODE_SIGNER}`) || !subject.includes(`OU=${NODE_TEAM_ID}`)) throw new Error(`signed by ${subject.join(", ")}, not ${NODE_SIGNER}`);
    if (!leaf.der.toString("hex").includes(OID.developerIdApplication)) throw new Error("the signer's certificate is not a Developer ID Application certificate");
    if (!(Date.parse(leaf.x509.validFrom) <= signedAt.getTime() && signedAt.getTime() <= Date.parse(leaf.x509.validTo))) {
        throw new Error(`signed at ${signedAt.toISOString()}, outside its certificate's validity (${leaf.x509.validFrom} to ${leaf.x509.validTo})`);
    }
    const issuerOf = (c: X509Certificate) => certs.find((i) => c.checkIssued(i.x509) && c.verify(i.x509.publicKey))?.x509;
    const ca = issuerOf(leaf.x509);
    const root = ca && issuerOf(ca);
    if (!ca || !ca.subject.split("\n").includes("CN=Developer ID Certification Authority")) throw new Error("the signer's certificate is not issued by Apple's Developer ID Certification Authority");
    if (root?.fingerprint256 !== APPLE_ROOT_CA_SHA256) throw new Error("the Developer ID CA's certificate is not issued by Apple Root CA");
}

// --- ad-hoc signing --------------------------------------------------------------------------------------

function blob(magic: number, body: Buffer): Buffer {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(magic, 0);
    head.writeUInt32BE(8 + body.length, 4);
    return Buffer.concat([head, body]);
}

const align = (n: number, to: number): number => Math.ceil(n / to) * to;

/**
 * `data` (an unsigned thin Mach-O executable) signed ad hoc as `identifier`, as `codesign --sign -` would: an
 * LC_CODE_SIGNATURE pointing at a SuperBlob appended at the end of __LINKEDIT (which grows to cover it) with a
 * CodeDirectory (version 0x20400, SHA-256, flags adhoc, no hardened runtime, so no entitlements are needed for
 * V8's JIT), an empty requirements set and an empty CMS slot. Deterministic: the same input gives the same bytes.
 */
export function adhocSign(data: Buffer, identifier: string): Buffer {
    const m = parseMachO(data);
    if (m.signature) throw new Error("the executable is already signed: sign what postject wrote (it removes Node's signature)");
    if (m.filetype !== MH_EXECUTE) throw new Error(`filetype ${m.filetype} is not an executable`);
    const linkedit = segment(m, "__LINKEDIT");
    const text = segment(m, "__TEXT");
    if (m.segments.some((s) => s.fileoff > linkedit.fileoff) || linkedit.fileoff + linkedit.filesize !== data.length) {
        throw new Error("__LINKEDIT is not the file's last segment, ending at its end");
    }
    // The new load command must fit before the first section's contents.
    const firstContent = Math.min(...m.segments.flatMap((s) => s.sections).filter((s) => s.offset > 0 && s.size > 0).map((s) => s.offset));
    if (32 + m.sizeofcmds + 16 > firstContent) throw new Error("no room for LC_CODE_SIGNATURE after the load commands");

    const dataoff = align(data.length, 16);
    const nCode = Math.ceil(dataoff / PAGE);
    const ident = Buffer.from(`${identifier}\0`, "latin1");
    const requirements = blob(CSMAGIC.requirements, Buffer.alloc(4)); // a SuperBlob of requirements with count 0
    const cms = blob(CSMAGIC.blobWrapper, Buffer.alloc(0));
    const nSpecial = CSSLOT.requirements; // slots 1 (Info.plist: none, zeros) and 2 (requirements)
    const HEADER = 88; // CodeDirectory fields up to execSegFlags (version 0x20400)
    const hashOffset = HEADER + ident.length + nSpecial * 32;
    const cdLength = hashOffset + nCode * 32;
    const sbHeader = 12 + 3 * 8;
    const sbLength = sbHeader + cdLength + requirements.length + cms.length;
    const datasize = align(sbLength, 16);

    const out = Buffer.alloc(dataoff + datasize);
    data.copy(out);
    // The header and __LINKEDIT change first: the page hashes cover them.
    out.writeUInt32LE(m.ncmds + 1, 16);
    out.writeUInt32LE(m.sizeofcmds + 16, 20);
    const lc = 32 + m.sizeofcmds;
    out.writeUInt32LE(LC_CODE_SIGNATURE, lc);
    out.writeUInt32LE(16, lc + 4);
    out.writeUInt32LE(dataoff, lc + 8);
    out.writeUInt32LE(datasize, lc + 12);
    const vmPage = m.cputype === CPU_TYPE.arm64 ? 0x4000 : 0x1000;
    const filesize = dataoff + datasize - linkedit.fileoff;
    out.writeBigUInt64LE(BigInt(filesize), linkedit.command + 48);
    out.writeBigUInt64LE(BigInt(Math.max(linkedit.vmsize, align(filesize, vmPage))), linkedit.command + 32);

    const cd = Buffer.alloc(cdLength);
    cd.writeUInt32BE(CSMAGIC.codeDirectory, 0);
    cd.writeUInt32BE(cdLength, 4);
    cd.writeUInt32BE(0x20400, 8);
    cd.writeUInt32BE(CS_ADHOC, 12);
    cd.writeUInt32BE(hashOffset, 16);
    cd.writeUInt32BE(HEADER, 20); // identOffset
    cd.writeUInt32BE(nSpecial, 24);
    cd.writeUInt32BE(nCode, 28);
    cd.writeUInt32BE(dataoff, 32); // codeLimit
    cd[36] = 32; // hashSize
    cd[37] = CS_HASHTYPE_SHA256;
    cd[38] = 0; // platform
    cd[39] = PAGE_SHIFT;
    // spare2, scatterOffset, teamOffset, spare3, codeLimit64: 0
    cd.writeBigUInt64BE(BigInt(text.fileoff), 64); // execSegBase
    cd.writeBigUInt64BE(BigInt(text.filesize), 72); // execSegLimit
    cd.writeBigUInt64BE(BigInt(CS_EXECSEG_MAIN_BINARY), 80);
    ident.copy(cd, HEADER);
    sha256(requirements).copy(cd, hashOffset - CSSLOT.requirements * 32);
    for (let i = 0; i < nCode; i++) sha256(out.subarray(i * PAGE, Math.min((i + 1) * PAGE, dataoff))).copy(cd, hashOffset + i * 32);

    const sb = out.subarray(dataoff);
    sb.writeUInt32BE(CSMAGIC.superBlob, 0);
    sb.writeUInt32BE(sbLength, 4);
    sb.writeUInt32BE(3, 8);
    let at = sbHeader;
    for (const [i, [slot, b]] of ([[CSSLOT.codeDirectory, cd], [CSSLOT.requirements, requirements], [CSSLOT.signature, cms]] as const).entries()) {
        sb.writeUInt32BE(slot, 12 + i * 8);
        sb.writeUInt32BE(at, 16 + i * 8);
        b.copy(sb, at);
        at += b.length;
    }
    return out;
}
