import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Accepts TLS 1.3 connections on one or more addresses and serves each on its own thread.
///
/// Sync sessions are sequential conversations, so each accepted connection gets a dedicated
/// `Thread` (never Swift's cooperative pool) for its handshake and handler. The budgets of
/// `ConnectionLimits` bound them: a connection past the pending budget or its address's cap is
/// closed at once, before any TLS work (the client sees the connection end during the
/// handshake, which it treats as "busy, try later"); an authorized session past the session
/// budget, or past its peer's share of it, is the handler's to refuse politely
/// (`Admission.authorize(peer:)` throws).
public final class TLSListener: @unchecked Sendable {
    /// The addresses actually bound, with the kernel's port when 0 was asked for.
    public let boundAddresses: [(host: String, port: UInt16)]
    public let limits: ConnectionLimits

    let context: TLSContext
    let timeouts: TLSTimeouts
    let logger: Logger
    let listenDescriptors: [Int32]
    /// A self-pipe: `stop()` writes to it to wake the accept loop's poll.
    let wakeRead: Int32
    let wakeWrite: Int32
    /// Guards the counters and flags below; signalled whenever a connection thread ends.
    let state = NSCondition()
    var sessions = 0
    var pending = 0
    var pendingByAddress: [String: Int] = [:]
    /// Session slots held by each peer (`Admission.authorize(peer:)`).
    var sessionsByPeer: [String: Int] = [:]
    /// Connections closed unserved since the last warning (the log says it once a while, not
    /// once per connection of a flood).
    var refusedSinceWarning = 0
    var lastRefusalWarning = ContinuousClock.now - .seconds(60)
    var stopped = false
    var running = false
    var descriptorsClosed = false

    /// Binds every address (IPv4/IPv6 literals, "[::1]", host names: each address a name
    /// resolves to), with SO_REUSEADDR; port 0 picks an ephemeral port.
    public init(
        identity: NodeIdentity, bind addresses: [(host: String, port: UInt16)], limits: ConnectionLimits = .init(),
        timeouts: TLSTimeouts = .init(), logger: Logger
    ) throws(TLSError) {
        _ = POSIX.sigpipeIgnored
        context = try TLSContext(identity: identity, role: .server)
        var descriptors: [Int32] = []
        var bound: [(host: String, port: UInt16)] = []
        do {
            for address in addresses {
                for fd in try TCPSocket.listen(host: address.host, port: address.port) {
                    descriptors.append(fd)
                    if let local = SocketAddress.local(of: fd) {
                        bound.append((host: local.host, port: local.port))
                    }
                }
            }
        } catch {
            descriptors.forEach(POSIX.closeDescriptor)
            throw error
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0, POSIX.makeNonBlocking(pipeEnds[0]), POSIX.makeNonBlocking(pipeEnds[1]) else {
            descriptors.forEach(POSIX.closeDescriptor)
            throw .bindFailed(address: "wake-up pipe", reason: POSIX.describe(errno))
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        listenDescriptors = descriptors
        boundAddresses = bound
        self.limits = limits
        self.timeouts = timeouts
        self.logger = logger
    }

    deinit {
        closeListeningSockets()
        POSIX.closeDescriptor(wakeRead)
        POSIX.closeDescriptor(wakeWrite)
    }

    /// Connections being served now: pending ones (handshakes included) and sessions.
    public var activeConnections: Int {
        state.lock()
        defer { state.unlock() }
        return sessions + pending
    }

    /// Connections that hold a session slot now.
    public var activeSessions: Int {
        state.lock()
        defer { state.unlock() }
        return sessions
    }

    /// Stops accepting: wakes `run()`, which closes the listening sockets and returns.
    /// Running handlers go on; wait for them with `waitForHandlers(timeout:)`.
    public func stop() {
        state.lock()
        stopped = true
        state.unlock()
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Waits until every connection thread has ended; false if some still run at the deadline.
    public func waitForHandlers(timeout: Duration) -> Bool {
        let deadline = Date(
            timeIntervalSinceNow: Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18)
        state.lock()
        defer { state.unlock() }
        while sessions + pending > 0 {
            if !state.wait(until: deadline) { return sessions + pending == 0 }
        }
        return true
    }

    func closeListeningSockets() {
        state.lock()
        defer { state.unlock() }
        if descriptorsClosed { return }
        descriptorsClosed = true
        listenDescriptors.forEach(POSIX.closeDescriptor)
    }
}

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
