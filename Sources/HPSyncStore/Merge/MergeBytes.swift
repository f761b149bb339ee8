import Foundation
import HPSyncModel

/// Little-endian writing and reading of the few types the `fields` column holds.
struct MergeByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    mutating func raw(_ value: [UInt8]) { bytes += value }

    mutating func text(_ value: String) {
        let utf8 = Array(value.utf8)
        u64(UInt64(utf8.count))
        bytes += utf8
    }
}

struct MergeByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ data: Data) { bytes = Array(data) }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func u8() throws -> UInt8 {
        guard offset < bytes.count else { throw Self.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u64() throws -> UInt64 {
        guard bytes.count - offset >= 8 else { throw Self.truncated }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    mutating func i64() throws -> Int64 { Int64(bitPattern: try u64()) }

    mutating func raw(_ count: Int) throws -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw Self.truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func text() throws -> String {
        let count = try u64()
        guard count <= UInt64(bytes.count - offset) else { throw Self.truncated }
        return String(decoding: try raw(Int(count)), as: UTF8.self)
    }

    static let truncated = StoreError.database("an item's field versions are truncated")
}
