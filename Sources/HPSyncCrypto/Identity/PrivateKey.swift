internal import CHPSyncOpenSSL

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
