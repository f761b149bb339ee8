/// Reads protobuf's wire format (varints, tags, length-delimited fields) from bytes in memory.
///
/// Every read returns nil where the bytes are not well-formed (a varint longer than ten bytes
/// or running past the end, a length beyond the end, a group): the caller then gives up, and
/// the generic decoder says what is wrong.
struct ProtobufReader {
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    /// The largest field number protobuf allows.
    static let maxField: UInt64 = (1 << 29) - 1

    private let bytes: UnsafeRawBufferPointer
    private var position: Int

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.position = 0
    }

    var isAtEnd: Bool { position == bytes.count }

    /// The next field's number and wire type.
    mutating func field() -> (number: UInt64, type: WireType)? {
        guard let tag = varint(), let type = WireType(rawValue: UInt8(tag & 7)), (1...Self.maxField).contains(tag >> 3)
        else { return nil }
        return (tag >> 3, type)
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            // The tenth byte holds the 64th bit only.
            guard shift < 63 || byte <= 1 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// The bytes of a length-delimited field.
    mutating func lengthDelimited() -> UnsafeRawBufferPointer? {
        guard let length = varint(), length <= UInt64(bytes.count - position) else { return nil }
        let start = position
        position += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
    }

    /// Steps over a field of a number the reader does not know.
    mutating func skip(_ type: WireType) -> Bool {
        switch type {
        case .varint: return varint() != nil
        case .lengthDelimited: return lengthDelimited() != nil
        case .fixed64: return advance(8)
        case .fixed32: return advance(4)
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard bytes.count - position >= count else { return false }
        position += count
        return true
    }
}
