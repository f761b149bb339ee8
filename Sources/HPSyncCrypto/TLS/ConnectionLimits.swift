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
    /// Connections still in the TLS handshake or before authorization, from all addresses.
    public var pending: Int
    /// Pending connections from one source address; more from it are closed at once.
    public var pendingPerAddress: Int

    public init(sessions: Int = 64, pending: Int = 64, pendingPerAddress: Int = 8) {
        precondition(sessions > 0 && pending > 0 && pendingPerAddress > 0, "connection limits must be positive")
        self.sessions = sessions
        self.pending = pending
        self.pendingPerAddress = pendingPerAddress
    }
}

/// One accepted connection's place in its listener's budgets.
///
/// A connection starts *pending*. The handler calls `authorize()` once it knows the peer may be
/// served (for hp-sync: after the Hello); that moves it to a session slot, or returns false when
/// every session slot is taken, and the handler then tells the peer it is busy. Whatever the
/// connection holds is released when its handler returns.
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

    init(source: String, listener: TLSListener) {
        self.source = source
        self.listener = listener
    }

    /// Moves the connection from the pending budget to a session slot; false (and still
    /// pending) when every session slot is taken. Idempotent once it succeeded.
    public func authorize() -> Bool {
        listener.promote(self)
    }
}
