#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin, platform-neutral helpers over the POSIX calls the transport needs.
enum POSIX {
    /// `SOCK_STREAM` as an `Int32` (Glibc imports it as an enum).
    static var streamSocketType: Int32 {
        #if canImport(Glibc)
            return Int32(SOCK_STREAM.rawValue)
        #else
            return SOCK_STREAM
        #endif
    }

    /// The current thread's `errno`.
    static var lastError: Int32 { errno }

    /// The text of an errno value, e.g. "Connection refused".
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Whether the process ignores SIGPIPE; evaluated once.
    ///
    /// OpenSSL's socket BIO writes with plain `write()`, so a peer that resets the connection would
    /// otherwise kill the whole process with SIGPIPE; we want EPIPE instead.
    static let sigpipeIgnored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    /// Puts a descriptor into non-blocking, close-on-exec mode.
    static func makeNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        let fdFlags = fcntl(fd, F_GETFD)
        return fdFlags >= 0 && fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) == 0
    }

    /// Sets an integer socket option; failures are ignored by callers that treat it as a hint.
    @discardableResult
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) -> Bool {
        var value = value
        return setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// Applies the per-connection options every transport socket gets.
    static func configureStream(_ fd: Int32) {
        // Sync messages are request/response; Nagle would add 40 ms stalls to small frames.
        setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        #if canImport(Darwin)
            setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
        #endif
        _ = sigpipeIgnored
    }

    /// What a wait for readiness ended with.
    enum WaitResult: Equatable {
        case ready
        case timedOut
        case failed(Int32)
    }

    /// Waits until `fd` is ready for `events` or `deadline` passes; restarts on EINTR.
    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> WaitResult {
        while true {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return .timedOut }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let result = poll(&entry, 1, milliseconds(remaining))
            if result > 0 { return .ready }
            if result == 0 { continue }  // the loop re-checks the deadline
            let code = errno
            if code == EINTR { continue }
            return .failed(code)
        }
    }

    /// A duration as poll()'s millisecond timeout, rounded up so we never spin on sub-ms rests.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 { return 0 }
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }

    /// Closes a descriptor, retrying nothing: Linux releases the fd even when close reports EINTR.
    static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }
}
