internal import CHPSyncOpenSSL
import HPSyncModel
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TLSConnection {
    /// Runs a TLS handshake on a connected non-blocking socket within the handshake timeout and
    /// returns the connection with the peer's node ID. On failure the socket is closed.
    static func handshake(
        fd: Int32, context: TLSContext, remote: String, timeouts: TLSTimeouts, logger: Logger
    ) throws(TLSError) -> TLSConnection {
        let ssl: OpaquePointer
        do {
            ssl = try context.makeSSL()
        } catch {
            POSIX.closeDescriptor(fd)
            throw error
        }
        do {
            let peerID = try negotiate(
                ssl: ssl, fd: fd, role: context.role, remote: remote, timeout: timeouts.handshake)
            return TLSConnection(
                ssl: ssl, fd: fd, remote: remote, peerNodeID: peerID, idleTimeout: timeouts.idle, logger: logger)
        } catch {
            SSL_free(ssl)
            POSIX.closeDescriptor(fd)
            throw error
        }
    }

    private static func negotiate(
        ssl: OpaquePointer, fd: Int32, role: TLSContext.Role, remote: String, timeout: Duration
    ) throws(TLSError) -> NodeID {
        guard SSL_set_fd(ssl, fd) == 1 else {
            throw .openSSL(operation: "attaching the socket", queue: OpenSSLErrorQueue.drain())
        }
        if role == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        let deadline = ContinuousClock.now + timeout
        while true {
            OpenSSLErrorQueue.clear()
            let result = SSL_do_handshake(ssl)
            if result == 1 { break }
            let code = SSL_get_error(ssl, result)
            let events: Int32
            switch code {
            case SSL_ERROR_WANT_READ: events = Int32(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int32(POLLOUT)
            case SSL_ERROR_SYSCALL:
                let errnoCode = POSIX.lastError
                OpenSSLErrorQueue.clear()
                switch errnoCode {
                case 0: throw .handshakeInterrupted(peer: remote, reason: "the peer closed the connection")
                case ECONNRESET, EPIPE:
                    throw .handshakeInterrupted(peer: remote, reason: POSIX.describe(errnoCode))
                default: throw .io(peer: remote, operation: "TLS handshake", reason: POSIX.describe(errnoCode))
                }
            default:
                throw classifiedFailure(peer: remote)
            }
            switch POSIX.wait(fd, for: Int16(events), until: deadline) {
            case .ready: continue
            case .timedOut: throw .timedOut(operation: "TLS handshake", after: timeout, peer: remote)
            case .failed(let errnoCode):
                throw .io(peer: remote, operation: "TLS handshake", reason: POSIX.describe(errnoCode))
            }
        }
        guard let peerCertificate = SSL_get1_peer_certificate(ssl) else {
            throw .noPeerCertificate(peer: remote)
        }
        defer { X509_free(peerCertificate) }
        let der = Certificate.der(of: peerCertificate)
        guard !der.isEmpty else { throw .noPeerCertificate(peer: remote) }
        return NodeID(certificateDER: der)
    }

    /// What a failed handshake means: a connection that simply ended (EOF or reset, no alert) is
    /// a busy or restarting peer and worth retrying; anything else, an alert or a refused
    /// certificate, is a real refusal (Protocol.md §2).
    private static func classifiedFailure(peer remote: String) -> TLSError {
        let last = ERR_peek_last_error()
        if ERR_GET_LIB(last) == ERR_LIB_SSL && ERR_GET_REASON(last) == SSL_R_UNEXPECTED_EOF_WHILE_READING {
            OpenSSLErrorQueue.clear()
            return .handshakeInterrupted(peer: remote, reason: "the peer closed the connection")
        }
        if ERR_GET_LIB(last) == ERR_LIB_SYS {
            let errnoCode = ERR_GET_REASON(last)
            if errnoCode == ECONNRESET || errnoCode == EPIPE {
                OpenSSLErrorQueue.clear()
                return .handshakeInterrupted(peer: remote, reason: POSIX.describe(errnoCode))
            }
        }
        if ERR_GET_LIB(last) == ERR_LIB_SSL && !refusalReasons.contains(ERR_GET_REASON(last)) {
            // No common TLS version, a malformed or corrupted record: the peer speaks another
            // protocol, which is not a verdict on who we are.
            return .protocolFailure(peer: remote, queue: OpenSSLErrorQueue.drain())
        }
        return .handshakeFailed(peer: remote, queue: OpenSSLErrorQueue.drain())
    }

    /// The handshake failures that mean "identity refused": the alerts a peer sends about our
    /// certificate (or its absence), and our own refusal of its certificate.
    private static let refusalReasons: Set<Int32> = [
        SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
        SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
        SSL_R_TLSV1_ALERT_ACCESS_DENIED, SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_CERTIFICATE_VERIFY_FAILED,
        SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE,
    ].map { Int32($0) }.reduce(into: []) { $0.insert($1) }
}
