import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TLSListener {
    /// Accepts connections until `stop()`, blocking the calling thread.
    ///
    /// Each connection's handshake (bounded by the handshake timeout) and then `handler` run on
    /// a dedicated thread, so a slow or failing client never blocks the others. The connection
    /// is closed, and its place in the budgets released, when `handler` returns. The handler
    /// calls `admission.authorize(peer:)` once the peer is known to be served (see `Admission`).
    public func run(handler: @escaping @Sendable (TLSConnection, Admission) -> Void) throws(TLSError) {
        state.lock()
        if running || stopped {
            state.unlock()
            closeListeningSockets()
            return
        }
        running = true
        state.unlock()
        defer { closeListeningSockets() }
        logger.info(
            "listening",
            metadata: ["addresses": "\(boundAddresses.map { "\($0.host) port \($0.port)" }.joined(separator: ", "))"])
        var entries = listenDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        entries.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        while !isStopped {
            let ready = poll(&entries, nfds_t(entries.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .io(peer: "listener", operation: "poll", reason: POSIX.describe(errno))
            }
            if entries.last!.revents != 0 { continue }  // woken by stop(); the loop re-checks
            for index in entries.indices.dropLast() where entries[index].revents != 0 {
                acceptPending(on: entries[index].fd, handler: handler)
            }
        }
        logger.info("stopped accepting connections")
    }

    /// Runs `handler` for every connection whose handshake succeeds, authorizing it at once (for
    /// servers that have no application-level authorization step); a connection past the
    /// session budget is closed after its handshake.
    public func run(handler: @escaping @Sendable (TLSConnection) -> Void) throws(TLSError) {
        try run { connection, admission in
            if admission.authorize() { handler(connection) }
        }
    }

    private var isStopped: Bool {
        state.lock()
        defer { state.unlock() }
        return stopped
    }

    /// Drains the accept queue of one listening socket.
    private func acceptPending(
        on listenFD: Int32, handler: @escaping @Sendable (TLSConnection, Admission) -> Void
    ) {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                let code = errno
                switch code {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: back off instead of spinning on a readable socket.
                    logger.error("accept failed: \(POSIX.describe(code)); raise the file limit (ulimit -n)")
                    Thread.sleep(forTimeInterval: 0.1)
                    return
                default:
                    logger.error("accept failed: \(POSIX.describe(code))")
                    return
                }
            }
            let source = SocketAddress.peer(of: fd)?.host ?? "?"
            guard let admission = admit(source) else {
                // Closed before any TLS work: cheap for us, and the client sees the connection
                // end during its handshake, which it treats as "busy, try later" (Protocol.md §2).
                POSIX.closeDescriptor(fd)
                continue
            }
            guard POSIX.makeNonBlocking(fd) else {
                POSIX.closeDescriptor(fd)
                release(admission)
                continue
            }
            spawn(fd, admission: admission, body: handler)
        }
    }

    /// Takes a pending slot for a connection from `source`, or nil (and counts a refusal) when the
    /// pending budget or the address's cap is full.
    private func admit(_ source: String) -> Admission? {
        state.lock()
        defer { state.unlock() }
        let fromSource = pendingByAddress[source, default: 0]
        guard pending < limits.pending, fromSource < limits.pendingPerAddress else {
            refusedSinceWarning += 1
            let now = ContinuousClock.now
            if now - lastRefusalWarning >= .seconds(10) {
                let reason =
                    fromSource >= limits.pendingPerAddress
                    ? "\(source) has \(fromSource) connections that have not authenticated yet (the cap per address)"
                    : "\(pending) connections have not authenticated yet (the pending budget)"
                logger.warning(
                    "closing new connections unserved: \(reason)",
                    metadata: ["closed": "\(refusedSinceWarning)", "source": "\(source)"])
                refusedSinceWarning = 0
                lastRefusalWarning = now
            }
            return nil
        }
        pending += 1
        pendingByAddress[source] = fromSource + 1
        return Admission(source: source, listener: self)
    }

    /// Moves `admission` from pending to a session slot of `peer` if one is free
    /// (`Admission.authorize(peer:)`).
    func promote(_ admission: Admission, peer: String) throws(Admission.Refusal) {
        state.lock()
        defer { state.unlock() }
        switch admission.stage {
        case .session: return
        case .released: throw .serverFull(sessions: sessions)
        case .pending:
            let held = sessionsByPeer[peer, default: 0]
            guard held < limits.sessionsPerPeer else { throw .peerFull(held: held) }
            guard sessions < limits.sessions else { throw .serverFull(sessions: sessions) }
            sessions += 1
            sessionsByPeer[peer] = held + 1
            leavePending(admission.source)
            admission.stage = .session
            admission.peer = peer
        }
    }

    /// Gives back whatever `admission` holds; signals `waitForHandlers`.
    private func release(_ admission: Admission) {
        state.lock()
        switch admission.stage {
        case .pending: leavePending(admission.source)
        case .session:
            sessions -= 1
            if let peer = admission.peer {
                let left = sessionsByPeer[peer, default: 1] - 1
                sessionsByPeer[peer] = left > 0 ? left : nil
            }
        case .released: break
        }
        admission.stage = .released
        state.broadcast()
        state.unlock()
    }

    /// Call with `state` locked.
    private func leavePending(_ source: String) {
        pending -= 1
        let left = pendingByAddress[source, default: 1] - 1
        pendingByAddress[source] = left > 0 ? left : nil
    }

    private func spawn(
        _ fd: Int32, admission: Admission, body: @escaping @Sendable (TLSConnection, Admission) -> Void
    ) {
        let context = context
        let timeouts = timeouts
        let logger = logger
        let thread = Thread { [self] in
            defer { release(admission) }
            let connection: TLSConnection
            do {
                connection = try TLSConnection.accept(fd: fd, context: context, timeouts: timeouts, logger: logger)
            } catch {
                logger.notice("TLS handshake refused: \(error)")
                return
            }
            body(connection, admission)
            connection.close()
        }
        thread.name = "hp-sync connection"
        thread.stackSize = 1 << 20
        thread.start()
    }
}
