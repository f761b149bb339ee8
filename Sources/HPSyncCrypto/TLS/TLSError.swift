import HPSyncModel

/// Why an identity could not be made or loaded, or a TLS connection failed.
///
/// Each message says what happened and what to do; OpenSSL failures carry its drained error queue.
public enum TLSError: Error, CustomStringConvertible, Sendable {
    /// No identity in the store.
    case identityMissing(path: String)
    /// `create` found an identity already there.
    case identityExists(path: String)
    /// key.pem can be read by group or others.
    case insecureKeyPermissions(path: String, mode: UInt32)
    /// The identity files exist but do not hold a usable key and certificate.
    case invalidIdentity(path: String, reason: String)
    /// A file system call on the identity failed.
    case fileSystem(path: String, operation: String, reason: String)
    /// An OpenSSL call failed outside a connection (key generation, context setup).
    case openSSL(operation: String, queue: String)
    /// getaddrinfo could not resolve the host.
    case resolveFailed(host: String, reason: String)
    /// No address of the host accepted a TCP connection.
    case connectFailed(address: String, reason: String)
    /// A listening socket could not be bound.
    case bindFailed(address: String, reason: String)
    /// A phase made no progress in time.
    case timedOut(operation: String, after: Duration, peer: String)
    /// The TLS handshake failed (wrong version, no certificate, alert from the peer...).
    case handshakeFailed(peer: String, queue: String)
    /// The connection ended during the TLS handshake without an alert (EOF or reset): a server
    /// shedding load or restarting. Transient, unlike `handshakeFailed`.
    case handshakeInterrupted(peer: String, reason: String)
    /// The server's certificate is not the one pinned for it.
    case peerMismatch(expected: NodeID, actual: NodeID)
    /// The peer completed a handshake without a certificate.
    case noPeerCertificate(peer: String)
    /// The peer reset the connection (RST, EPIPE).
    case connectionReset(peer: String)
    /// The TCP stream ended without TLS close_notify: possibly a truncation attack.
    case unexpectedEOF(peer: String)
    /// A socket call failed during the session.
    case io(peer: String, operation: String, reason: String)
    /// The peer broke the TLS protocol after the handshake.
    case protocolFailure(peer: String, queue: String)
    /// The connection was used after close() or after a fatal error.
    case closed(peer: String)

    public var description: String {
        switch self {
        case .identityMissing(let path):
            return "no node identity at \(path); create one first (hp-sync init), or point --store at the right store"
        case .identityExists(let path):
            return
                "a node identity already exists at \(path); refusing to overwrite it (peers pin it). Remove it by hand only if you mean to become a new node"
        case .insecureKeyPermissions(let path, let mode):
            return
                "private key \(path) is readable by group or others (mode \(String(mode & 0o777, radix: 8))); run `chmod 600 \(path)` and consider the key compromised if others could read it"
        case .invalidIdentity(let path, let reason):
            return "node identity at \(path) is unusable: \(reason); restore key.pem and cert.pem from a backup"
        case .fileSystem(let path, let operation, let reason):
            return "\(operation) \(path) failed: \(reason)"
        case .openSSL(let operation, let queue):
            return "OpenSSL \(operation) failed: \(queue)"
        case .resolveFailed(let host, let reason):
            return "cannot resolve host '\(host)': \(reason); check the name or use an IP address"
        case .connectFailed(let address, let reason):
            return "cannot connect to \(address): \(reason); is `hp-sync serve` running there and the port open?"
        case .bindFailed(let address, let reason):
            return "cannot listen on \(address): \(reason); if another program (another `hp-sync serve`?) uses that "
                + "port, stop it or choose another address with --listen ADDR:PORT"
        case .timedOut(let operation, let after, let peer):
            return "\(operation) with \(peer) timed out after \(after); the peer is unreachable, overloaded or stalled"
        case .handshakeFailed(let peer, let queue):
            return
                "TLS handshake with \(peer) failed: \(queue); both sides need hp-sync's TLS 1.3 with a client certificate"
        case .handshakeInterrupted(let peer, let reason):
            return
                "\(peer) ended the connection during the TLS handshake (\(reason)) without refusing us: the server is "
                + "busy (too many connections waiting to authenticate), restarting or shutting down; try again later"
        case .peerMismatch(let expected, let actual):
            return
                "server identity changed: expected node ID \(expected) but the server presented \(actual). The server has a new key, or another machine answers at that address. If the change is legitimate, verify \(actual) out of band and re-add the peer with it"
        case .noPeerCertificate(let peer):
            return "\(peer) presented no certificate; hp-sync requires mutual authentication"
        case .connectionReset(let peer):
            return "connection reset by \(peer); the peer closed abruptly (crashed, restarted or refused us)"
        case .unexpectedEOF(let peer):
            return
                "\(peer) closed the connection without TLS close_notify; the data may be truncated and is not trusted"
        case .io(let peer, let operation, let reason):
            return "\(operation) with \(peer) failed: \(reason)"
        case .protocolFailure(let peer, let queue):
            return "TLS error on the connection with \(peer): \(queue)"
        case .closed(let peer):
            return "the connection with \(peer) is already closed"
        }
    }
}
