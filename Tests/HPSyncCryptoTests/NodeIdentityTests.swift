import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

@Suite struct NodeIdentityTests {
    private func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test func createWritesPrivateFilesAndLoadsBack() throws {
        let store = try temporaryDirectory()
        let created = try NodeIdentity.create(in: store)
        #expect(try mode(created.keyURL) == 0o600)
        #expect(try mode(created.directory) == 0o700)
        #expect(created.nodeID == NodeID(certificateDER: created.certificateDER))
        let loaded = try NodeIdentity.load(from: store)
        #expect(loaded.nodeID == created.nodeID)
        #expect(loaded.certificateDER == created.certificateDER)
        #expect(created.certificateDER.count > 200)
    }

    @Test func identitiesAreDistinct() throws {
        #expect(try makeIdentity().nodeID != makeIdentity().nodeID)
    }

    @Test func createRefusesToOverwrite() throws {
        let store = try temporaryDirectory()
        let first = try NodeIdentity.create(in: store)
        #expect {
            try NodeIdentity.create(in: store)
        } throws: { error in
            guard case TLSError.identityExists = error else { return false }
            return "\(error)".contains("refusing to overwrite")
        }
        #expect(try NodeIdentity.load(from: store).nodeID == first.nodeID)
    }

    @Test func loadRefusesGroupReadableKey() throws {
        let store = try temporaryDirectory()
        let identity = try NodeIdentity.create(in: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: identity.keyURL.path)
        #expect {
            try NodeIdentity.load(from: store)
        } throws: { error in
            guard case TLSError.insecureKeyPermissions = error else { return false }
            return "\(error)".contains("chmod 600 \(identity.keyURL.path)")
        }
    }

    @Test func loadReportsMissingIdentity() throws {
        #expect {
            try NodeIdentity.load(from: try temporaryDirectory())
        } throws: { error in
            guard case TLSError.identityMissing = error else { return false }
            return true
        }
    }

    @Test func loadRefusesCertificateOfAnotherKey() throws {
        let store = try temporaryDirectory()
        let identity = try NodeIdentity.create(in: store)
        let other = try makeIdentity()
        try FileManager.default.removeItem(at: identity.certificateURL)
        try FileManager.default.copyItem(at: other.certificateURL, to: identity.certificateURL)
        #expect {
            try NodeIdentity.load(from: store)
        } throws: { error in
            guard case TLSError.invalidIdentity = error else { return false }
            return true
        }
    }

    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func certificateIsSelfSignedP256V3() throws {
        let identity = try makeIdentity()
        let output = try runTool([opensslPath, "x509", "-in", identity.certificateURL.path, "-noout", "-text"])
        #expect(output.status == 0)
        #expect(output.stdout.contains("Version: 3"))
        #expect(output.stdout.contains("prime256v1"))
        #expect(output.stdout.contains("ecdsa-with-SHA256"))
        #expect(output.stdout.contains("Subject: CN = hp-sync"))
        #expect(output.stdout.contains("TLS Web Client Authentication"))
    }

    /// key.pem as OpenSSL's traditional EC form (`BEGIN EC PRIVATE KEY`) loads as the same node.
    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func aTraditionalECKeyLoadsAsTheSameNode() throws {
        let store = try temporaryDirectory()
        let identity = try NodeIdentity.create(in: store)
        let converted = try runTool([opensslPath, "ec", "-in", identity.keyURL.path])
        #expect(converted.stdout.contains("BEGIN EC PRIVATE KEY"))
        try Data(converted.stdout.utf8).write(to: identity.keyURL)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: identity.keyURL.path)
        #expect(try NodeIdentity.load(from: store).nodeID == identity.nodeID)
    }

    /// A key of another type is still read (every decoder after the EC ones): the error is then
    /// that the certificate was not made for it, not that key.pem holds no key.
    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func aKeyOfAnotherTypeIsReadAndThenRefusedForItsCertificate() throws {
        let store = try temporaryDirectory()
        let identity = try NodeIdentity.create(in: store)
        let generated = try runTool([opensslPath, "genpkey", "-algorithm", "ed25519"])
        #expect(generated.stdout.contains("BEGIN PRIVATE KEY"))
        try Data(generated.stdout.utf8).write(to: identity.keyURL)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: identity.keyURL.path)
        #expect {
            try NodeIdentity.load(from: store)
        } throws: { error in
            guard case TLSError.invalidIdentity = error else { return false }
            return "\(error)".contains("cert.pem was not made for key.pem")
        }
        try Data("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".utf8).write(
            to: identity.keyURL)
        #expect {
            try NodeIdentity.load(from: store)
        } throws: { error in
            guard case TLSError.invalidIdentity = error else { return false }
            return "\(error)".contains("not a PEM private key")
        }
    }
}
