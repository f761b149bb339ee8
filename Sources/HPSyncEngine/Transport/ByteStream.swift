/// A reliable, ordered, bidirectional byte stream: a TLS connection, or a pipe in tests.
///
/// Sessions never see sockets; they see frames over one of these, so every session can run
/// over in-memory pipes and fault-injecting wrappers in tests.
public protocol ByteStream: AnyObject, Sendable {
    /// Reads at least one byte into `buffer`; returns 0 at the peer's orderly end of stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Like `read(into:)`, but throws once `deadline` has passed with nothing read (a stream
    /// without timeouts of its own may ignore it: the caller checks the deadline after each read).
    func read(into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant) throws -> Int
    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Ends the stream in an orderly way; idempotent.
    func close()
    /// Discards what the peer still sends until it closes or `duration` passes, then closes. A
    /// stream without timeouts of its own (a pipe in tests) just closes.
    func closeAfterDraining(for duration: Duration)
}

extension ByteStream {
    public func closeAfterDraining(for duration: Duration) {
        close()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant) throws
        -> Int
    {
        try read(into: buffer)
    }
}
