/// One complete frame: a validated header's type and its payload.
public enum Frame: Equatable, Sendable {
    case message(Message)
    case imageChunk([UInt8])
}

/// An incremental, I/O-free frame decoder: append bytes as they arrive, take frames out.
///
/// The engine reads frames straight from the connection (header, then exactly `length`
/// bytes); this decoder serves tests and the fuzz target with the same validation.
public struct FrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed; throws on invalid input.
    public mutating func next() throws(ProtocolError) -> Frame? {
        guard buffer.count - start >= FrameHeader.size else { return nil }
        let header = try FrameHeader(parsing: buffer[start..<start + FrameHeader.size])
        let payloadStart = start + FrameHeader.size
        guard buffer.count - payloadStart >= header.length else { return nil }
        let payload = buffer[payloadStart..<payloadStart + header.length]
        start = payloadStart + header.length
        if start > 1 << 16 {
            buffer.removeFirst(start)
            start = 0
        }
        switch header.type {
        case .message: return .message(try Message(decoding: payload))
        case .imageChunk: return .imageChunk(Array(payload))
        }
    }

    /// Bytes received but not yet part of a complete frame.
    public var pendingByteCount: Int { buffer.count - start }
}

/// Encodes frames for sending.
public enum FrameEncoder {
    /// Header plus serialized envelope.
    public static func encode(_ message: Message) -> [UInt8] {
        let payload = message.serializedEnvelope()
        precondition(payload.count <= ProtocolLimits.maxMessageBytes, "message over the frame limit")
        return FrameHeader(type: .message, length: payload.count).bytes + payload
    }

    /// Header of an image chunk whose `count` payload bytes the caller writes next.
    public static func chunkHeader(count: Int) -> [UInt8] {
        precondition(count > 0 && count <= ProtocolLimits.maxChunkBytes, "chunk size out of range")
        return FrameHeader(type: .imageChunk, length: count).bytes
    }
}
