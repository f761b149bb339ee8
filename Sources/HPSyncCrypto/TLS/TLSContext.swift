internal import CHPSyncOpenSSL
import Foundation

/// Owns one `SSL_CTX` configured the hp-sync way: TLS 1.3 only, our identity, mutual
/// authentication, and trust by pinning instead of chain validation.
///
/// OpenSSL allows `SSL_new` from several threads on one configured context, so a listener
/// shares one context among its connection threads.
final class TLSContext: @unchecked Sendable {
    enum Role {
        case client
        case server
    }

    let pointer: OpaquePointer
    let role: Role

    init(identity: NodeIdentity, role: Role) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(role == .client ? TLS_client_method() : TLS_server_method()) else {
            throw .openSSL(operation: "creating a TLS context", queue: OpenSSLErrorQueue.drain())
        }
        self.pointer = context
        self.role = role
        try configure(identity: identity)
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    private func configure(identity: NodeIdentity) throws(TLSError) {
        try check(hp_SSL_CTX_set_min_proto_version(pointer, TLS1_3_VERSION) == 1, "requiring TLS 1.3")
        try check(SSL_CTX_use_certificate(pointer, identity.certificate.pointer) == 1, "loading the certificate")
        try check(SSL_CTX_use_PrivateKey(pointer, identity.privateKey.pointer) == 1, "loading the private key")
        try check(SSL_CTX_check_private_key(pointer) == 1, "matching the key to the certificate")
        // Both sides present certificates; the server refuses a client that sends none.
        let mode = role == .server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER
        SSL_CTX_set_verify(pointer, mode, acceptAnyCertificate)
        // No resumption: every connection proves possession of its key again, and no ticket
        // keys live in memory. Zero tickets also spares the client unread post-handshake data.
        SSL_CTX_set_options(pointer, hp_SSL_OP_NO_TICKET())
        try check(SSL_CTX_set_num_tickets(pointer, 0) == 1, "disabling session tickets")
        hp_SSL_CTX_set_session_cache_mode(pointer, Int(SSL_SESS_CACHE_OFF))
        // AES-128-GCM first: TLS 1.3's mandatory suite, and on AES-NI a quarter less CPU per
        // byte than OpenSSL's first choice, AES-256-GCM (3.5 against 2.6 GB/s on this project's
        // VM), which every image byte pays on both sides. The server picks from its own order,
        // except for a client that puts ChaCha20 first (one without AES instructions).
        try check(SSL_CTX_set_ciphersuites(pointer, Self.cipherSuites) == 1, "choosing the TLS 1.3 cipher suites")
        if role == .server {
            SSL_CTX_set_options(pointer, hp_SSL_OP_CIPHER_SERVER_PREFERENCE() | hp_SSL_OP_PRIORITIZE_CHACHA())
        }
        hp_SSL_CTX_set_mode(pointer, Int(SSL_MODE_AUTO_RETRY))
        // Read ahead into a buffer of several records: without it OpenSSL reads each 16 KiB
        // record with two reads (its 5-byte header, then its body); with it, one read takes
        // whatever has arrived, up to the buffer (a full copy of 433 MB: 64,366 read calls on
        // the client before, 11,456 after).
        // Reads only ever poll the socket after OpenSSL asks for more (WANT_READ), so bytes it
        // holds are never waited for.
        hp_SSL_CTX_set_read_ahead(pointer, 1)
        SSL_CTX_set_default_read_buffer_len(pointer, Self.readBufferBytes)
    }

    /// The TLS 1.3 cipher suites offered and accepted, in order of preference.
    static let cipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

    /// OpenSSL's read buffer per connection when reading ahead: four full records.
    static let readBufferBytes = 4 * (16 * 1024 + 256)

    private func check(_ ok: Bool, _ operation: String) throws(TLSError) {
        if !ok { throw .openSSL(operation: operation, queue: OpenSSLErrorQueue.drain()) }
    }

    /// A new, unconnected `SSL` on this context; the caller owns it.
    func makeSSL() throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(pointer) else {
            throw .openSSL(operation: "creating a TLS session", queue: OpenSSLErrorQueue.drain())
        }
        return ssl
    }
}

/// Trust is pinning, not a CA: any certificate passes here, and the caller compares the peer's
/// node ID (the SHA-256 of its DER certificate) after the handshake.
private let acceptAnyCertificate: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, _ in 1 }

/// The client `TLSContext` of one identity, made once and shared by its connections. Making a
/// context (`SSL_CTX_new` and the settings) is OpenSSL's largest step in a pull after parsing
/// the key (5 M instructions), and OpenSSL allows `SSL_new` from several threads on one
/// configured context.
final class ClientContextCache: @unchecked Sendable {
    private let lock = NSLock()
    private var context: TLSContext?

    /// The context, made for `identity` on the first call.
    func context(for identity: NodeIdentity) throws(TLSError) -> TLSContext {
        lock.lock()
        defer { lock.unlock() }
        if let context { return context }
        let made = try TLSContext(identity: identity, role: .client)
        context = made
        return made
    }
}
