internal import CHPSyncOpenSSL
import Foundation
import HPSyncModel

/// This node's TLS identity: an ECDSA P-256 key and its self-signed certificate.
///
/// Stored as `identity/key.pem` (mode 0600) and `identity/cert.pem` in the store directory.
/// Peers pin the certificate, so an identity is never overwritten: losing it makes this a new
/// node that every peer must trust again. Immutable after creation, hence `Sendable`.
public final class NodeIdentity: Sendable {
    /// SHA-256 of `certificateDER`.
    public let nodeID: NodeID
    /// The certificate, DER-encoded.
    public let certificateDER: [UInt8]
    /// The folder holding key.pem and cert.pem.
    public let directory: URL

    let privateKey: PrivateKey
    let certificate: Certificate
    private let clientContexts = ClientContextCache()

    private init(privateKey: PrivateKey, certificate: Certificate, directory: URL) {
        self.privateKey = privateKey
        self.certificate = certificate
        self.directory = directory
        self.certificateDER = certificate.der
        self.nodeID = NodeID(certificateDER: certificateDER)
    }

    /// The context every client connection of this identity uses.
    func clientContext() throws(TLSError) -> TLSContext {
        try clientContexts.context(for: self)
    }

    /// Makes the client context now, on the caller's thread, so that the first `connect` does
    /// not wait for it: a pull makes it on the thread that loads the identity while the store
    /// opens. A failure here is left for `connect` to report.
    public func prepareClientContext() {
        _ = try? clientContext()
    }

    /// The private key's path.
    public var keyURL: URL { Self.keyURL(directory) }
    /// The certificate's path.
    public var certificateURL: URL { Self.certificateURL(directory) }

    /// Generates a new identity in `storeDirectory/identity/`; refuses to replace one.
    ///
    /// The key file is created 0600 with O_EXCL, so it is never readable by others, not even
    /// for a moment, and two racing `create` calls cannot both succeed. Both files and the
    /// folder are fsynced before this returns.
    public static func create(in storeDirectory: URL) throws(TLSError) -> NodeIdentity {
        let directory = storeDirectory.appendingPathComponent("identity", isDirectory: true)
        let keyURL = keyURL(directory)
        let certURL = certificateURL(directory)
        for url in [keyURL, certURL] where IdentityFiles.exists(url) {
            throw .identityExists(path: url.path)
        }
        try IdentityFiles.makePrivateDirectory(directory)
        let key = try PrivateKey.generateP256()
        let certificate = try Certificate.selfSigned(key: key, commonName: "hp-sync")
        try IdentityFiles.writeExclusive(try key.pem(), to: keyURL, mode: 0o600)
        do {
            try IdentityFiles.writeExclusive(try certificate.pem(), to: certURL, mode: 0o600)
        } catch {
            // A key without a certificate would block the next `create`; it was never used.
            IdentityFiles.remove(keyURL)
            throw error
        }
        try IdentityFiles.syncDirectory(directory)
        return NodeIdentity(privateKey: key, certificate: certificate, directory: directory)
    }

    /// Loads the identity from `storeDirectory/identity/`.
    ///
    /// Fails with `identityMissing` when there is none, `insecureKeyPermissions` when key.pem can
    /// be read by group or others, and `invalidIdentity` when the key and certificate do not match.
    public static func load(from storeDirectory: URL) throws(TLSError) -> NodeIdentity {
        let directory = storeDirectory.appendingPathComponent("identity", isDirectory: true)
        let keyURL = keyURL(directory)
        let certURL = certificateURL(directory)
        guard IdentityFiles.exists(keyURL) else { throw .identityMissing(path: keyURL.path) }
        guard IdentityFiles.exists(certURL) else {
            throw .invalidIdentity(path: certURL.path, reason: "key.pem exists but cert.pem is missing")
        }
        let keyPEM = try IdentityFiles.readPrivate(keyURL)
        let certPEM = try IdentityFiles.read(certURL)
        let key = try PrivateKey.parsePEM(keyPEM, path: keyURL.path)
        let certificate = try Certificate.parsePEM(certPEM, path: certURL.path)
        guard certificate.matches(key) else {
            throw .invalidIdentity(path: directory.path, reason: "cert.pem was not made for key.pem")
        }
        return NodeIdentity(privateKey: key, certificate: certificate, directory: directory)
    }

    /// The node ID of the certificate in `storeDirectory/identity/`, or nil when there is no
    /// certificate. Reads cert.pem only (no key), so any process that can read the store can ask.
    public static func certificateNodeID(in storeDirectory: URL) throws(TLSError) -> NodeID? {
        let certURL = certificateURL(storeDirectory.appendingPathComponent("identity", isDirectory: true))
        guard IdentityFiles.exists(certURL) else { return nil }
        let certificate = try Certificate.parsePEM(try IdentityFiles.read(certURL), path: certURL.path)
        return NodeID(certificateDER: certificate.der)
    }

    static func keyURL(_ directory: URL) -> URL {
        directory.appendingPathComponent("key.pem", isDirectory: false)
    }

    static func certificateURL(_ directory: URL) -> URL {
        directory.appendingPathComponent("cert.pem", isDirectory: false)
    }
}

/// Owns one OpenSSL `EVP_PKEY`: this node's ECDSA P-256 private key.
///
/// Immutable after creation; OpenSSL allows concurrent read-only use of a key (signing in
/// handshakes on several threads), which is why the class may be shared.
final class PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Generates a fresh ECDSA key on NIST P-256.
    static func generateP256() throws(TLSError) -> PrivateKey {
        OpenSSLErrorQueue.clear()
        guard let key = hp_EVP_PKEY_Q_keygen_ec("P-256") else {
            throw .openSSL(operation: "generating a P-256 key", queue: OpenSSLErrorQueue.drain())
        }
        return PrivateKey(taking: key)
    }

    /// Parses an unencrypted PEM private key (PKCS#8 or traditional). The EC decoders are tried
    /// first (every key hp-sync makes is P-256, and they cost a third of the generic path), then
    /// every key type OpenSSL knows.
    static func parsePEM(_ pem: [UInt8], path: String) throws(TLSError) -> PrivateKey {
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw in
            OpenSSLErrorQueue.clear()
            if let key = hp_decode_ec_private_key_pem(raw.baseAddress, Int32(raw.count)) { return key }
            OpenSSLErrorQueue.clear()
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key = parsed else {
            throw .invalidIdentity(path: path, reason: "not a PEM private key (\(OpenSSLErrorQueue.drain()))")
        }
        return PrivateKey(taking: key)
    }

    /// The key as unencrypted PKCS#8 PEM; the file's 0600 mode is its protection.
    func pem() throws(TLSError) -> [UInt8] {
        try MemoryBIO.collect(operation: "encoding the private key as PEM") { bio in
            PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
        }
    }
}

/// Runs an OpenSSL writer against a memory BIO and returns what it wrote.
enum MemoryBIO {
    static func collect(operation: String, _ write: (OpaquePointer) -> Int32) throws(TLSError) -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw .openSSL(operation: operation, queue: OpenSSLErrorQueue.drain())
        }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else {
            throw .openSSL(operation: operation, queue: OpenSSLErrorQueue.drain())
        }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = hp_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }
}
