internal import CHPSyncOpenSSL
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
                let queue = OpenSSLErrorQueue.drain()
                let reason = errnoCode == 0 ? "the peer closed the connection" : POSIX.describe(errnoCode)
                throw .handshakeFailed(peer: remote, queue: "\(reason) (\(queue))")
            default:
                throw .handshakeFailed(peer: remote, queue: OpenSSLErrorQueue.drain())
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
}
