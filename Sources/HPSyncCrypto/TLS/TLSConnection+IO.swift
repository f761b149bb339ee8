internal import CHPSyncOpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TLSConnection {
    /// Reads up to `buffer.count` bytes, waiting at most `idleTimeout` for the first one.
    ///
    /// Returns 0 only after the peer's orderly close_notify. Throws `timedOut` when nothing
    /// arrives in time, `unexpectedEOF` when TCP ends without close_notify (a truncation attack
    /// looks like this), `connectionReset` on RST.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> Int {
        try read(into: buffer, limit: nil)
    }

    /// Like `read(into:)`, but also throws `timedOut` once `limit` has passed with nothing to
    /// read, however short the wait: for what must arrive by a fixed time (a server's Hello
    /// deadline), which a silent peer must not stretch to the idle timeout.
    public func read(into buffer: UnsafeMutableRawBufferPointer, before limit: ContinuousClock.Instant)
        throws(TLSError) -> Int
    {
        try read(into: buffer, limit: limit)
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer, limit: ContinuousClock.Instant?) throws(TLSError)
        -> Int
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        try ensureUsable()
        var deadline = ContinuousClock.now + idleTimeout
        while true {
            var count = 0
            ERR_clear_error()
            let result = SSL_read_ex(ssl, base, buffer.count, &count)
            if result == 1 { return count }
            let code = SSL_get_error(ssl, result)
            if code == SSL_ERROR_ZERO_RETURN { return 0 }
            if let limit { deadline = min(deadline, limit) }
            try waitOrThrow(code, operation: "read", deadline: &deadline)
        }
    }

    /// Reads exactly `count` bytes; throws `unexpectedEOF` if the peer closes first.
    public func readExactly(_ count: Int) throws(TLSError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(TLSError) in try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                }
            }.get()
            if got == 0 { throw .unexpectedEOF(peer: remote) }
            filled += got
        }
        return bytes
    }

    /// Writes all of `bytes`; each wait for the socket is bounded by `idleTimeout`.
    ///
    /// Large buffers go straight to OpenSSL, which cuts them into 16 KiB records without copies.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try ensureUsable()
        var deadline = ContinuousClock.now + idleTimeout
        var offset = 0
        while offset < bytes.count {
            var written = 0
            ERR_clear_error()
            // After WANT_WRITE OpenSSL requires the retry with the same arguments; `offset`
            // only moves on success, so it gets them.
            let result = SSL_write_ex(ssl, base + offset, bytes.count - offset, &written)
            if result == 1 {
                offset += written
                continue
            }
            try waitOrThrow(SSL_get_error(ssl, result), operation: "write", deadline: &deadline)
        }
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(TLSError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(TLSError) in try write(raw) } }.get()
    }

    private func ensureUsable() throws(TLSError) {
        if isBroken || !isOpen { throw .closed(peer: remote) }
    }

    /// Handles a non-success SSL result: waits for the socket on WANT_READ/WANT_WRITE (the idle
    /// deadline restarts after each wake-up, since the peer made progress) or throws.
    private func waitOrThrow(_ code: Int32, operation: String, deadline: inout ContinuousClock.Instant) throws(TLSError)
    {
        let events: Int32
        switch code {
        case SSL_ERROR_WANT_READ: events = Int32(POLLIN)
        case SSL_ERROR_WANT_WRITE: events = Int32(POLLOUT)
        default:
            isBroken = true
            let error = failure(code, operation: operation)
            logger.debug("TLS \(operation) failed: \(error)")
            throw error
        }
        switch POSIX.wait(fd, for: Int16(events), until: deadline) {
        case .ready:
            deadline = ContinuousClock.now + idleTimeout
        case .timedOut:
            throw .timedOut(operation: operation, after: idleTimeout, peer: remote)
        case .failed(let errnoCode):
            isBroken = true
            throw .io(peer: remote, operation: operation, reason: POSIX.describe(errnoCode))
        }
    }

    private func failure(_ code: Int32, operation: String) -> TLSError {
        if code == SSL_ERROR_SYSCALL {
            let errnoCode = POSIX.lastError
            OpenSSLErrorQueue.clear()
            switch errnoCode {
            case 0: return .unexpectedEOF(peer: remote)
            case ECONNRESET, EPIPE: return .connectionReset(peer: remote)
            default: return .io(peer: remote, operation: operation, reason: POSIX.describe(errnoCode))
            }
        }
        let last = ERR_peek_last_error()
        if ERR_GET_LIB(last) == ERR_LIB_SSL && ERR_GET_REASON(last) == SSL_R_UNEXPECTED_EOF_WHILE_READING {
            OpenSSLErrorQueue.clear()
            return .unexpectedEOF(peer: remote)
        }
        if ERR_GET_LIB(last) == ERR_LIB_SYS {
            let errnoCode = ERR_GET_REASON(last)
            OpenSSLErrorQueue.clear()
            if errnoCode == ECONNRESET || errnoCode == EPIPE { return .connectionReset(peer: remote) }
            return .io(peer: remote, operation: operation, reason: POSIX.describe(errnoCode))
        }
        return .protocolFailure(peer: remote, queue: OpenSSLErrorQueue.drain())
    }
}
