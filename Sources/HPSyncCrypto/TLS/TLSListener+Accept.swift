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
    /// is closed when `handler` returns. Connections over the limit go to `onBusy` instead.
    public func run(
        handler: @escaping @Sendable (TLSConnection) -> Void,
        onBusy: @escaping @Sendable (TLSConnection) -> Void
    ) throws(TLSError) {
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
                acceptPending(on: entries[index].fd, handler: handler, onBusy: onBusy)
            }
        }
        logger.info("stopped accepting connections")
    }

    private var isStopped: Bool {
        state.lock()
        defer { state.unlock() }
        return stopped
    }

    /// Drains the accept queue of one listening socket.
    private func acceptPending(
        on listenFD: Int32, handler: @escaping @Sendable (TLSConnection) -> Void,
        onBusy: @escaping @Sendable (TLSConnection) -> Void
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
            guard POSIX.makeNonBlocking(fd) else {
                POSIX.closeDescriptor(fd)
                continue
            }
            dispatch(fd, handler: handler, onBusy: onBusy)
        }
    }

    private enum Slot {
        case handler
        case busy
        case none
    }

    private func dispatch(
        _ fd: Int32, handler: @escaping @Sendable (TLSConnection) -> Void,
        onBusy: @escaping @Sendable (TLSConnection) -> Void
    ) {
        state.lock()
        let slot: Slot
        if active < maxConnections {
            active += 1
            slot = .handler
        } else if busy < Self.maxBusyConnections {
            busy += 1
            slot = .busy
        } else {
            slot = .none
        }
        state.unlock()
        switch slot {
        case .handler:
            spawn(fd, body: handler, isBusy: false)
        case .busy:
            logger.warning("connection limit of \(maxConnections) reached; answering busy")
            spawn(fd, body: onBusy, isBusy: true)
        case .none:
            logger.warning("connection limit reached and busy replies saturated; dropping a connection")
            POSIX.closeDescriptor(fd)
        }
    }

    private func spawn(_ fd: Int32, body: @escaping @Sendable (TLSConnection) -> Void, isBusy: Bool) {
        let context = context
        let timeouts = timeouts
        let logger = logger
        let thread = Thread { [self] in
            defer { finished(isBusy: isBusy) }
            let connection: TLSConnection
            do {
                connection = try TLSConnection.accept(fd: fd, context: context, timeouts: timeouts, logger: logger)
            } catch {
                logger.notice("TLS handshake refused: \(error)")
                return
            }
            body(connection)
            connection.close()
        }
        thread.name = isBusy ? "hp-sync busy reply" : "hp-sync connection"
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func finished(isBusy: Bool) {
        state.lock()
        if isBusy { busy -= 1 } else { active -= 1 }
        state.broadcast()
        state.unlock()
    }
}
