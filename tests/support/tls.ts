// A throwaway certificate authority and a server certificate it signed for 127.0.0.1, as PEM: what a user's
// NODE_EXTRA_CA_CERTS names when a company CA (or a TLS-inspecting proxy) signs the certificates they see.
// Keys come from Node's crypto; node-forge builds and signs the X.509 certificates, which Node cannot.

import { generateKeyPairSync, randomBytes } from "crypto";
import forge from "node-forge";

export interface TestPki {
    /** The CA's certificate: the file NODE_EXTRA_CA_CERTS names. */
    caCert: string;
    /** The server's certificate (for 127.0.0.1 and localhost) and key. */
    cert: string;
    key: string;
}

function keyPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
    const { privateKey: pem } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const privateKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
    return { privateKey, publicKey: forge.pki.setRsaPublicKey(privateKey.n, privateKey.e), pem };
}

function certificate(subject: string, publicKey: forge.pki.PublicKey, extensions: object[]): forge.pki.Certificate {
    const cert = forge.pki.createCertificate();
    cert.publicKey = publicKey;
    cert.serialNumber = `01${randomBytes(8).toString("hex")}`;
    cert.validity.notBefore = new Date(Date.now() - 60_000);
    cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
    cert.setSubject([{ name: "commonName", value: subject }]);
    cert.setExtensions(extensions);
    return cert;
}

export function makeTestPki(): TestPki {
    const ca = keyPair();
    const caCert = certificate("pulumi-resource-cloud test CA", ca.publicKey, [
        { name: "basicConstraints", cA: true, critical: true },
        { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ]);
    caCert.setIssuer(caCert.subject.attributes);
    caCert.sign(ca.privateKey, forge.md.sha256.create());

    const server = keyPair();
    const cert = certificate("127.0.0.1", server.publicKey, [
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
        { name: "extKeyUsage", serverAuth: true },
        { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }, { type: 2, value: "localhost" }] },
    ]);
    cert.setIssuer(caCert.subject.attributes);
    cert.sign(ca.privateKey, forge.md.sha256.create());
    return { caCert: forge.pki.certificateToPem(caCert), cert: forge.pki.certificateToPem(cert), key: server.pem };
}
