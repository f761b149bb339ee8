import HPSyncModel

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
