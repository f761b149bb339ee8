#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens non-blocking TCP sockets: outgoing connections with a timeout and listening sockets.
///
/// Every descriptor returned is non-blocking and close-on-exec; the caller owns it.
enum TCPSocket {
    /// Connects to the first address of `host` that answers before the deadline.
    static func connect(host: String, port: UInt16, timeout: Duration) throws(TLSError) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        let addresses = try SocketAddress.resolve(host: host, port: port, passive: false)
        var failures: [String] = []
        for address in addresses {
            if ContinuousClock.now >= deadline { break }
            switch attempt(address, deadline: deadline) {
            case .success(let fd): return fd
            case .failure(let reason): failures.append("\(address): \(reason)")
            }
        }
        if failures.isEmpty || failures.allSatisfy({ $0.hasSuffix(timedOutText) }) {
            throw .timedOut(operation: "connect", after: timeout, peer: "\(host):\(port)")
        }
        throw .connectFailed(address: "\(host):\(port)", reason: failures.joined(separator: "; "))
    }

    private static let timedOutText = "timed out"

    private enum Attempt {
        case success(Int32)
        case failure(String)
    }

    private static func attempt(_ address: SocketAddress, deadline: ContinuousClock.Instant) -> Attempt {
        let fd = socket(address.family, POSIX.streamSocketType, 0)
        guard fd >= 0 else { return .failure(POSIX.describe(errno)) }
        guard POSIX.makeNonBlocking(fd) else {
            let reason = POSIX.describe(errno)
            POSIX.closeDescriptor(fd)
            return .failure(reason)
        }
        let started = address.withSockAddr { systemConnect(fd, $0, $1) }
        if started != 0 && errno != EINPROGRESS {
            let reason = POSIX.describe(errno)
            POSIX.closeDescriptor(fd)
            return .failure(reason)
        }
        if started != 0 {
            switch POSIX.wait(fd, for: Int16(POLLOUT), until: deadline) {
            case .ready: break
            case .timedOut:
                POSIX.closeDescriptor(fd)
                return .failure(timedOutText)
            case .failed(let code):
                POSIX.closeDescriptor(fd)
                return .failure(POSIX.describe(code))
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 {
                POSIX.closeDescriptor(fd)
                return .failure(POSIX.describe(soError))
            }
        }
        POSIX.configureStream(fd)
        return .success(fd)
    }

    /// Binds and listens on every address `host` resolves to; returns the descriptors.
    static func listen(host: String, port: UInt16, backlog: Int32 = 128) throws(TLSError) -> [Int32] {
        let addresses = try SocketAddress.resolve(host: host, port: port, passive: true)
        var descriptors: [Int32] = []
        for address in addresses {
            do {
                descriptors.append(try listen(on: address, backlog: backlog))
            } catch {
                descriptors.forEach(POSIX.closeDescriptor)
                throw error
            }
        }
        return descriptors
    }

    private static func listen(on address: SocketAddress, backlog: Int32) throws(TLSError) -> Int32 {
        let fd = socket(address.family, POSIX.streamSocketType, 0)
        guard fd >= 0 else { throw .bindFailed(address: address.description, reason: POSIX.describe(errno)) }
        POSIX.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if address.family == AF_INET6 {
            // "::" must not also claim the IPv4 port, or binding "0.0.0.0" beside it fails.
            POSIX.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1)
        }
        let bound = address.withSockAddr { bind(fd, $0, $1) }
        guard bound == 0, systemListen(fd, backlog) == 0, POSIX.makeNonBlocking(fd) else {
            let code = errno
            POSIX.closeDescriptor(fd)
            let hint = code == EADDRINUSE ? " (another process is listening there; stop it or pick another port)" : ""
            throw .bindFailed(address: address.description, reason: POSIX.describe(code) + hint)
        }
        return fd
    }
}

// The enum's own `connect`/`listen` shadow the C functions inside it.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}
