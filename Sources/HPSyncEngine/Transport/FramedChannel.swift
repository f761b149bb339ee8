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

    private func readExactly(_ count: Int, expecting: String) throws -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            if start == end {
                // Large payloads bypass the buffer: read straight into the result.
                if count - out.count >= buffer.count {
                    let missing = count - out.count
                    let oldCount = out.count
                    out.append(contentsOf: repeatElement(0, count: missing))
                    var filled = 0
                    while filled < missing {
                        let n = try out.withUnsafeMutableBytes { raw in
                            try readSome(
                                into: UnsafeMutableRawBufferPointer(rebasing: raw[(oldCount + filled)...]),
                                expecting: expecting)
                        }
                        if n == 0 { throw ProtocolError.prematureEOF(expected: expecting) }
                        try checkDeadline(expecting: expecting)
                        filled += n
                        bytesReceived += Int64(n)
                    }
                    return out
                }
                let n = try buffer.withUnsafeMutableBytes { try readSome(into: $0, expecting: expecting) }
                if n == 0 { throw ProtocolError.prematureEOF(expected: expecting) }
                try checkDeadline(expecting: expecting)
                start = 0
                end = n
                bytesReceived += Int64(n)
            }
            let take = min(end - start, count - out.count)
            out.append(contentsOf: buffer[start..<start + take])
            start += take
        }
        return out
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
