internal import CHPSyncOpenSSL
import Foundation
import HPSyncModel
import Logging

/// A mutually authenticated TLS 1.3 connection over TCP, with blocking calls and timeouts.
///
/// One thread uses a connection at a time (including `close()`). The socket is
/// non-blocking underneath and every wait is a `poll()` bounded by a deadline, so no call can
/// hang forever on a stalled peer.
public final class TLSConnection: @unchecked Sendable {
    /// The peer's node ID: SHA-256 of the DER certificate it proved it holds the key for.
    public let peerNodeID: NodeID
    /// The peer's numeric address and port, e.g. "127.0.0.1:22000" or "[::1]:22000".
    public var remoteAddress: String { remote }
    /// The longest `read` or `write` waits without progress before throwing `timedOut`.
    public var idleTimeout: Duration

    let ssl: OpaquePointer
    let fd: Int32
    let remote: String
    let logger: Logger
    private let lifecycle = NSLock()
    private var isClosed = false
    /// Set after a fatal TLS or socket error; OpenSSL forbids SSL_shutdown after one.
    var isBroken = false
    /// Set once our close_notify is out (`closeAfterDraining`): `close()` does not send another.
    private var closeNotifySent = false

    init(ssl: OpaquePointer, fd: Int32, remote: String, peerNodeID: NodeID, idleTimeout: Duration, logger: Logger) {
        self.ssl = ssl
        self.fd = fd
        self.remote = remote
        self.peerNodeID = peerNodeID
        self.idleTimeout = idleTimeout
        var logger = logger
        logger[metadataKey: "peer"] = "\(remote)"
        logger[metadataKey: "node"] = "\(peerNodeID.short)"
        self.logger = logger
    }

    deinit {
        close()
        SSL_free(ssl)
    }

    /// Dials `host:port` (IPv4 or IPv6 literal, or a name resolved with getaddrinfo) and runs the
    /// TLS handshake as a client presenting `identity`.
    ///
    /// With `.node(id)` the server's certificate must hash to `id`, else `TLSError.peerMismatch`;
    /// with `.firstContact` any server is accepted and the caller reads `peerNodeID`.
    public static func connect(
        host: String, port: UInt16, identity: NodeIdentity, expected: PeerExpectation,
        timeouts: TLSTimeouts = .init(), logger: Logger
    ) throws(TLSError) -> TLSConnection {
        let context = try identity.clientContext()
        let fd = try TCPSocket.connect(host: host, port: port, timeout: timeouts.connect)
        let remote = SocketAddress.peer(of: fd)?.description ?? "\(host):\(port)"
        let connection = try handshake(
            fd: fd, context: context, remote: remote, timeouts: timeouts, logger: logger)
        if case .node(let expectedID) = expected, connection.peerNodeID != expectedID {
            connection.close()
            throw .peerMismatch(expected: expectedID, actual: connection.peerNodeID)
        }
        connection.logger.debug("TLS connection established")
        return connection
    }

    /// Runs the server side of the handshake on an accepted socket (owned from here on).
    static func accept(fd: Int32, context: TLSContext, timeouts: TLSTimeouts, logger: Logger) throws(TLSError)
        -> TLSConnection
    {
        POSIX.configureStream(fd)
        let remote = SocketAddress.peer(of: fd)?.description ?? "unknown peer"
        return try handshake(fd: fd, context: context, remote: remote, timeouts: timeouts, logger: logger)
    }

    /// Closes in order: sends TLS close_notify (without waiting for the peer's), then closes the
    /// socket. Idempotent; `deinit` calls it. Like every call, not concurrent with a read or write.
    public func close() {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        if isClosed { return }
        isClosed = true
        if !isBroken && !closeNotifySent {
            sendCloseNotify()
        }
        POSIX.closeDescriptor(fd)
    }

    /// Ends the connection after our last message (an Error) so that the peer reads it
    /// ("lingering close", Protocol.md §8): shuts down writing (close_notify), then reads and
    /// discards what the peer still sends until it closes, fails or `duration` has passed, then
    /// closes. Closing with unread bytes makes the kernel send a reset, which can overtake the
    /// last message we sent; the close_notify first tells a peer still writing that we are done.
    public func closeAfterDraining(for duration: Duration) {
        guard isOpen else { return }
        if !isBroken {
            sendCloseNotify()
            closeNotifySent = true
        }
        let deadline = ContinuousClock.now + duration
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while ContinuousClock.now < deadline {
            let count = (try? scratch.withUnsafeMutableBytes { try read(into: $0, before: deadline) }) ?? 0
            if count == 0 { break }
        }
        close()
    }

    /// The negotiated cipher suite's standard name, e.g. "TLS_AES_128_GCM_SHA256".
    var cipherSuite: String {
        guard let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_standard_name(cipher) else { return "" }
        return String(cString: name)
    }

    /// Whether `close()` has run.
    public var isOpen: Bool {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        return !isClosed
    }

    private func sendCloseNotify() {
        // A short bound: close must not stall shutdown on a peer that stopped reading.
        let deadline = ContinuousClock.now + min(idleTimeout, .seconds(2))
        while true {
            OpenSSLErrorQueue.clear()
            let result = SSL_shutdown(ssl)
            if result >= 0 { return }  // 0: ours sent, theirs not awaited; 1: both done
            let code = SSL_get_error(ssl, result)
            let events = code == SSL_ERROR_WANT_READ ? POLLIN : code == SSL_ERROR_WANT_WRITE ? POLLOUT : 0
            guard events != 0, POSIX.wait(fd, for: Int16(events), until: deadline) == .ready else {
                OpenSSLErrorQueue.clear()
                return
            }
        }
    }
}

/// How long each phase of a connection may take before it is abandoned.
public struct TLSTimeouts: Sendable, Equatable {
    /// TCP connect, per dial (all resolved addresses share it).
    public var connect: Duration = .seconds(10)
    /// The whole TLS handshake, from the first byte to the peer's certificate.
    public var handshake: Duration = .seconds(10)
    /// The longest a read or write may wait without any progress.
    public var idle: Duration = .seconds(60)

    public init(connect: Duration = .seconds(10), handshake: Duration = .seconds(10), idle: Duration = .seconds(60)) {
        self.connect = connect
        self.handshake = handshake
        self.idle = idle
    }
}

/// Whom a client expects to find at the other end.
public enum PeerExpectation: Sendable, Equatable {
    /// The server's certificate must hash to this node ID (pinning), or the connection fails.
    case node(NodeID)
    /// Any server is accepted; the caller shows `peerNodeID` to the user and closes.
    case firstContact
}
