internal import CHPSyncOpenSSL
import HPSyncModel

/// Owns one OpenSSL `X509`: a node's self-signed certificate.
///
/// Immutable after creation, so it may be shared across threads like `PrivateKey`.
final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of a certificate reference (the caller must not free it).
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }

    /// A v3 self-signed certificate, Syncthing-style: random 128-bit serial, valid from one day
    /// ago (tolerates clock skew) for 20 years, signed with ECDSA-SHA256.
    static func selfSigned(key: PrivateKey, commonName: String) throws(TLSError) -> Certificate {
        OpenSSLErrorQueue.clear()
        guard let x509 = X509_new() else { throw failure("allocating a certificate") }
        let certificate = Certificate(taking: x509)
        guard X509_set_version(x509, 2) == 1 else { throw failure("setting the certificate version") }
        try setRandomSerial(x509)
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -86_400) != nil,
            X509_time_adj_ex(X509_getm_notAfter(x509), 20 * 365 + 5, 0, nil) != nil
        else { throw failure("setting the validity period") }
        guard let name = X509_get_subject_name(x509),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(x509, name) == 1,
            X509_set_pubkey(x509, key.pointer) == 1
        else { throw failure("setting the subject and public key") }
        try addExtension(x509, NID_basic_constraints, "critical,CA:FALSE")
        try addExtension(x509, NID_key_usage, "critical,digitalSignature")
        try addExtension(x509, NID_ext_key_usage, "serverAuth,clientAuth")
        guard X509_sign(x509, key.pointer, EVP_sha256()) > 0 else { throw failure("signing the certificate") }
        return certificate
    }

    private static func setRandomSerial(_ x509: OpaquePointer) throws(TLSError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, 16) == 1 else { throw failure("drawing a random serial number") }
        bytes[0] &= 0x7F  // positive, and at most 16 octets once DER-encoded
        bytes[0] |= 0x40  // never a short (leading-zero) serial
        guard let number = BN_bin2bn(bytes, 16, nil) else { throw failure("building the serial number") }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil else {
            throw failure("setting the serial number")
        }
    }

    private static func addExtension(_ x509: OpaquePointer, _ nid: Int32, _ value: String) throws(TLSError) {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, x509, x509, nil, nil, 0)
        guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
            throw failure("building extension \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else { throw failure("adding extension \(value)") }
    }

    private static func failure(_ operation: String) -> TLSError {
        .openSSL(operation: operation, queue: OpenSSLErrorQueue.drain())
    }

    /// Parses one PEM certificate.
    static func parsePEM(_ pem: [UInt8], path: String) throws(TLSError) -> Certificate {
        OpenSSLErrorQueue.clear()
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let x509 = parsed else {
            throw .invalidIdentity(path: path, reason: "not a PEM certificate (\(OpenSSLErrorQueue.drain()))")
        }
        return Certificate(taking: x509)
    }

    /// The certificate as PEM text.
    func pem() throws(TLSError) -> [UInt8] {
        try MemoryBIO.collect(operation: "encoding the certificate as PEM") { bio in
            PEM_write_bio_X509(bio, pointer)
        }
    }

    /// The DER encoding, whose SHA-256 is the node ID.
    var der: [UInt8] {
        Certificate.der(of: pointer)
    }

    /// DER-encodes any certificate pointer (also a peer's, which this class does not own).
    static func der(of x509: OpaquePointer) -> [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? bytes : []
    }

    /// Whether `key` is this certificate's private key.
    func matches(_ key: PrivateKey) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        return X509_check_private_key(pointer, key.pointer) == 1
    }
}

extension NodeID {
    /// The node ID of a certificate, given its DER bytes.
    public init(certificateDER: some Sequence<UInt8>) {
        self.init(validatedBytes: SHA256.hash(certificateDER).bytes)
    }
}
