import HPSyncProtocol

/// A `MessageChannel` over any `ByteStream`, reading with a buffer and validating each header
/// before reading its payload (so a hostile length never allocates more than the limit).
public final class FramedChannel: MessageChannel {
    private let stream: any ByteStream
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    public private(set) var bytesSent: Int64 = 0
    public private(set) var bytesReceived: Int64 = 0
    /// When set, the next frame must be complete by this instant however steadily its bytes
    /// trickle in (each read only bounds the wait for *some* byte); cleared after that frame.
    /// The server sets it for the frames before authorization, so an unauthenticated peer cannot
    /// hold a session slot by sending one byte at a time (slowloris).
    public var nextFrameDeadline: ContinuousClock.Instant?
    /// When set, the next frame may carry at most this many payload bytes; cleared after that
    /// frame. The server sets it for the frames before authorization, so an unauthenticated peer
    /// cannot make it reserve a full 4 MiB message buffer.
    public var nextFrameMaxBytes: Int?

    public init(stream: any ByteStream, bufferSize: Int = 256 << 10) {
        self.stream = stream
        self.buffer = [UInt8](repeating: 0, count: bufferSize)
    }

    public func send(_ message: Message) throws {
        let frame = FrameEncoder.encode(message)
        try frame.withUnsafeBytes { try stream.write($0) }
        bytesSent += Int64(frame.count)
    }

    public func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws {
        let header = FrameEncoder.chunkHeader(count: bytes.count)
        try header.withUnsafeBytes { try stream.write($0) }
        try stream.write(bytes)
        bytesSent += Int64(header.count + bytes.count)
    }

    public func receive(expecting: String) throws -> IncomingFrame {
        defer {
            nextFrameDeadline = nil
            nextFrameMaxBytes = nil
        }
        let header = try FrameHeader(parsing: try readExactly(FrameHeader.size, expecting: expecting))
        if let limit = nextFrameMaxBytes, header.length > limit {
            throw ProtocolError.frameTooLarge(type: "\(expecting) frame", length: header.length, limit: limit)
        }
        let payload = try readExactly(header.length, expecting: expecting)
        switch header.type {
        case .message: return .message(try Message(decoding: payload))
        case .imageChunk: return .imageChunk(payload)
        }
    }

    public func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {
        nextFrameMaxBytes = maxBytes
        nextFrameDeadline = deadline
    }

    public func close() {
        stream.close()
    }

    public func closeAfterDraining(for duration: Duration) {
        stream.closeAfterDraining(for: duration)
    }

    /// What the payload still missing must be, at least, for a read to go straight into the
    /// payload rather than through the buffer: one TLS record's worth. Image chunks then cross
    /// memory once (the stream's own copy), and a read never takes bytes of the next frame.
    static let directReadBytes = 16 << 10

    private func readExactly(_ count: Int, expecting: String) throws -> [UInt8] {
        if end - start >= count {
            defer { start += count }
            return Array(buffer[start..<start + count])
        }
        return try [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let payload = UnsafeMutableRawBufferPointer(out)
            let held = end - start
            buffer.withUnsafeBytes { source in
                out.baseAddress!.initialize(
                    from: source.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self), count: held)
            }
            (start, end, initialized) = (0, 0, held)
            while initialized < count {
                let missing = count - initialized
                if missing >= Self.directReadBytes {
                    let n = try readSome(
                        into: UnsafeMutableRawBufferPointer(rebasing: payload[initialized..<count]),
                        expecting: expecting)
                    try received(n, expecting: expecting)
                    initialized += n
                    continue
                }
                let n = try buffer.withUnsafeMutableBytes { try readSome(into: $0, expecting: expecting) }
                try received(n, expecting: expecting)
                let take = min(n, missing)
                buffer.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: payload[initialized..<initialized + take]).copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: source[0..<take]))
                }
                (start, end) = (take, n)
                initialized += take
            }
        }
    }

    /// Accounts for one read of `n` bytes: none is the end of the stream, where a frame was due.
    private func received(_ n: Int, expecting: String) throws {
        if n == 0 { throw ProtocolError.prematureEOF(expected: expecting) }
        try checkDeadline(expecting: expecting)
        bytesReceived += Int64(n)
    }

    /// One read from the stream, bounded by the frame's deadline when one is set: a peer that
    /// sends nothing at all (or only part of a frame) is cut at the deadline too, not at the
    /// stream's idle timeout.
    private func readSome(into target: UnsafeMutableRawBufferPointer, expecting: String) throws -> Int {
        guard let deadline = nextFrameDeadline else { return try stream.read(into: target) }
        do {
            return try stream.read(into: target, before: deadline)
        } catch  where ContinuousClock.now >= deadline {
            throw lateFrame(expecting)
        }
    }

    private func checkDeadline(expecting: String) throws {
        if let deadline = nextFrameDeadline, ContinuousClock.now > deadline {
            throw lateFrame(expecting)
        }
    }

    private func lateFrame(_ expecting: String) -> ProtocolError {
        .violation("\(expecting) did not arrive in time")
    }
}

/// One frame as received: a validated message, or the payload of an image chunk.
public enum IncomingFrame: Sendable {
    case message(Message)
    case imageChunk([UInt8])
}

/// Frames in, frames out: the only thing a sync session talks to.
public protocol MessageChannel: AnyObject {
    func send(_ message: Message) throws
    /// Sends one IMAGE_CHUNK frame holding `bytes` (1 ... 1 MiB).
    func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws
    /// Receives the next frame; throws `ProtocolError.prematureEOF` if the peer hung up.
    func receive(expecting: String) throws -> IncomingFrame
    /// Bytes sent and received so far, for the session's report.
    var bytesSent: Int64 { get }
    var bytesReceived: Int64 { get }
    /// Bounds the next frame only: at most `maxBytes` of payload, complete by `deadline` (nil: no
    /// deadline) however steadily its bytes trickle in. For frames read before authorization.
    func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?)
    func close()
    /// Reads and drops what the peer still sends until it closes or `duration` has passed, then
    /// closes ("lingering close"): after an Error, so that unread bytes do not make the kernel
    /// reset the connection before the peer has read it.
    func closeAfterDraining(for duration: Duration)
}

extension MessageChannel {
    public func closeAfterDraining(for duration: Duration) {
        close()
    }

    /// Receives a frame that must be a message.
    public func receiveMessage(expecting: String) throws -> Message {
        switch try receive(expecting: expecting) {
        case .message(let message): return message
        case .imageChunk: throw ProtocolError.unexpectedMessage(got: "IMAGE_CHUNK", expected: expecting)
        }
    }
}
