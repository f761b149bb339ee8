/// How many connections a `TLSListener` serves at once, in two separate budgets.
///
/// As sshd's `MaxStartups` and nginx's `limit_conn` do it: connections that have not proved who
/// they are (TLS handshake and the application's first message still under way) share a small
/// *pending* budget, with a cap per source address, so that one host without a certificate
/// cannot occupy the slots of authenticated sessions, and cannot take the whole pending budget
/// either. Authenticated sessions have their own slots.
public struct ConnectionLimits: Sendable, Equatable {
    /// Authorized sessions at once; an authorized client past it is told "busy".
    public var sessions: Int
    /// Authorized sessions one peer (one authenticated identity) may hold at once, so that one
    /// peer opening sessions and stalling cannot take every slot; its next one is told "busy".
    public var sessionsPerPeer: Int
    /// Connections still in the TLS handshake or before authorization, from all addresses.
    public var pending: Int
    /// Pending connections from one source address; more from it are closed at once.
    public var pendingPerAddress: Int

    /// The default `sessionsPerPeer`. A well-behaved node holds one session at a time (its
    /// syncs take its store's lock); a client whose connections were cut and that retries can
    /// leave a few half-open ones on the server until the idle timeout. 8 leaves it that
    /// headroom while 8 of the default 64 slots is all one peer can take.
    public static let defaultSessionsPerPeer = 8

    public init(
        sessions: Int = 64, sessionsPerPeer: Int = ConnectionLimits.defaultSessionsPerPeer, pending: Int = 64,
        pendingPerAddress: Int = 8
    ) {
        precondition(
            sessions > 0 && sessionsPerPeer > 0 && pending > 0 && pendingPerAddress > 0,
            "connection limits must be positive")
        self.sessions = sessions
        self.sessionsPerPeer = sessionsPerPeer
        self.pending = pending
        self.pendingPerAddress = pendingPerAddress
    }
}

/// One accepted connection's place in its listener's budgets.
///
/// A connection starts *pending*. The handler calls `authorize(peer:)` once it knows the peer may
/// be served (for hp-sync: after the Hello); that moves it to a session slot, or says why not
/// (every slot taken, or that peer holds its share), and the handler then tells the peer it is
/// busy. Whatever the connection holds is released when its handler returns.
public final class Admission: @unchecked Sendable {
    enum Stage {
        case pending
        case session
        case released
    }

    /// The peer's numeric address (without port), the key of the per-address cap.
    public let source: String
    let listener: TLSListener
    /// Guarded by `listener.state`.
    var stage = Stage.pending
    /// The peer whose session this is, once authorized; guarded by `listener.state`.
    var peer: String?

    init(source: String, listener: TLSListener) {
        self.source = source
        self.listener = listener
    }

    /// Why `authorize(peer:)` gave no session slot.
    public enum Refusal: Error, Equatable, Sendable {
        /// Every session slot of the server is taken.
        case serverFull(sessions: Int)
        /// This peer already holds `held` sessions, its share (`ConnectionLimits.sessionsPerPeer`).
        case peerFull(held: Int)
    }

    /// Moves the connection from the pending budget to a session slot counted against `peer`
    /// (an authenticated identity, such as a node ID); throws (and leaves it pending) when
    /// every slot or the peer's share is taken. Idempotent once it succeeded.
    public func authorize(peer: String) throws(Refusal) {
        try listener.promote(self, peer: peer)
    }

    /// `authorize(peer:)` for servers that do not tell peers apart: false when every slot is taken.
    public func authorize() -> Bool {
        (try? authorize(peer: "connection \(ObjectIdentifier(self))")) != nil
    }
}
