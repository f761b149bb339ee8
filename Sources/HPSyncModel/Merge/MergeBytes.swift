/// Little-endian writing and reading of the few types the fields bytes hold (Protocol.md 5.9,
/// "The fields bytes").
struct MergeByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    mutating func raw(_ value: [UInt8]) { bytes += value }

    mutating func text(_ value: String) {
        u64(UInt64(value.utf8.count))
        bytes += value.utf8
    }
}

/// Reads what `MergeByteWriter` writes, refusing (as `FieldMergeError.malformed`) bytes that
/// end early and text that is not UTF-8.
struct MergeByteReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    var isAtEnd: Bool { offset == bytes.endIndex }

    mutating func u8() throws(FieldMergeError) -> UInt8 {
        guard offset < bytes.endIndex else { throw Self.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u64() throws(FieldMergeError) -> UInt64 {
        guard bytes.endIndex - offset >= 8 else { throw Self.truncated }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    mutating func i64() throws(FieldMergeError) -> Int64 { Int64(bitPattern: try u64()) }

    mutating func raw(_ count: Int) throws(FieldMergeError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.endIndex - offset >= count else { throw Self.truncated }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func text() throws(FieldMergeError) -> String {
        let count = try u64()
        guard count <= UInt64(bytes.endIndex - offset) else { throw Self.truncated }
        guard let text = String(validating: try raw(Int(count)), as: UTF8.self) else {
            throw .malformed("a text is not UTF-8")
        }
        return text
    }

    static let truncated = FieldMergeError.malformed("the fields bytes end early")
}
