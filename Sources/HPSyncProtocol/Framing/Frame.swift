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

/// The kind of a frame: the first byte of its 5-byte header.
public enum FrameType: UInt8, Sendable {
    /// The payload is one protobuf `Envelope`.
    case message = 0x01
    /// The payload is raw image bytes following an `ImageHeader`.
    case imageChunk = 0x02

    var name: String { self == .message ? "MESSAGE" : "IMAGE_CHUNK" }

    /// The largest payload a frame of this type may carry.
    public var maxPayload: Int {
        self == .message ? ProtocolLimits.maxMessageBytes : ProtocolLimits.maxChunkBytes
    }
}

/// A frame header: type (1 byte) then payload length (4 bytes, big-endian).
///
/// Parsing validates both before any payload is read, so a hostile length never causes an
/// allocation: the reader knows the exact, bounded count to read next.
public struct FrameHeader: Equatable, Sendable {
    public static let size = 5

    public var type: FrameType
    public var length: Int

    public init(type: FrameType, length: Int) {
        self.type = type
        self.length = length
    }

    /// Parses and validates 5 header bytes.
    public init(parsing bytes: some Collection<UInt8>) throws(ProtocolError) {
        precondition(bytes.count == Self.size, "a frame header is 5 bytes")
        var iterator = bytes.makeIterator()
        let typeByte = iterator.next()!
        var length: UInt32 = 0
        for _ in 0..<4 { length = length << 8 | UInt32(iterator.next()!) }
        guard let type = FrameType(rawValue: typeByte) else { throw .unknownFrameType(typeByte) }
        guard Int(length) <= type.maxPayload else {
            throw .frameTooLarge(type: type.name, length: Int(length), limit: type.maxPayload)
        }
        guard length > 0 else { throw .emptyFrame(type: type.name) }
        self.type = type
        self.length = Int(length)
    }

    /// The 5 header bytes.
    public var bytes: [UInt8] {
        let length = UInt32(length)
        return [
            type.rawValue, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
            UInt8(length & 0xFF),
        ]
    }
}
