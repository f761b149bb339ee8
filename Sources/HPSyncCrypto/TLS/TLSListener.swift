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
