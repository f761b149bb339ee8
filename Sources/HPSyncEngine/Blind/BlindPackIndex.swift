import HPSyncCrypto
import HPSyncModel

/// What one pack holds, as a trusted node remembers it without keeping the pack
/// (`Docs/blind-packs-design.md`, step 3): each record's item key, version, whether it is a
/// deletion, its merge digest and the sealed photo it names. A push compares its candidates
/// with it and uploads only photos no indexed record names; one blob per pack in the store,
/// never a row per item.
///
/// Bytes: format 1 ‖ the number of origins (2 bytes, big-endian) ‖ each origin's node ID (32
/// bytes) ‖ the number of records (4 bytes) ‖ for each: key (16 bytes) ‖ stamp (8) ‖ origin's
/// index (2) ‖ flags (1: bit 0 deleted, bit 1 a photo follows) ‖ merge digest (8) ‖ the photo
/// ID (32, if flagged). 35 bytes a record, 67 with a photo.
struct BlindPackIndex: Equatable {
    struct Entry: Equatable {
        var key: ItemKey
        var version: Version
        var deleted: Bool
        var mergeDigest: UInt64
        /// The sealed photo the record names (`BlindRecordSeal.photo`), if any.
        var photo: BlindID? = nil
    }

    var entries: [Entry]

    init(entries: [Entry]) { self.entries = entries }

    /// The index of a pack holding `items`, their photos named as `seal` names them.
    init(_ items: [Item], seal: BlindRecordSeal) {
        entries = items.map {
            Entry(
                key: $0.key, version: $0.version, deleted: $0.deleted, mergeDigest: $0.mergeDigest,
                photo: $0.image.map { seal.photo($0).id })
        }
    }

    static let format: UInt8 = 1
    private static let entryBytes = 16 + 8 + 2 + 1 + 8

    func encoded() -> [UInt8] {
        var origins: [NodeID] = []
        var originIndex: [NodeID: Int] = [:]
        for entry in entries where originIndex[entry.version.origin] == nil {
            originIndex[entry.version.origin] = origins.count
            origins.append(entry.version.origin)
        }
        precondition(origins.count <= Int(UInt16.max), "a pack's records come from at most 65,535 nodes")
        var bytes: [UInt8] = [Self.format]
        bytes.reserveCapacity(7 + origins.count * 32 + entries.count * Self.entryBytes)
        Self.append(UInt64(origins.count), width: 2, to: &bytes)
        for origin in origins { bytes += origin.bytes }
        Self.append(UInt64(entries.count), width: 4, to: &bytes)
        for entry in entries {
            bytes += entry.key.bytes
            Self.append(entry.version.stamp.rawValue, width: 8, to: &bytes)
            Self.append(UInt64(originIndex[entry.version.origin]!), width: 2, to: &bytes)
            bytes.append((entry.deleted ? 1 : 0) | (entry.photo == nil ? 0 : 2))
            Self.append(entry.mergeDigest, width: 8, to: &bytes)
            if let photo = entry.photo { bytes += photo.bytes }
        }
        return bytes
    }

    /// Whether the index `bytes` names any of `photos`.
    static func names(anyOf photos: Set<BlindID>, _ bytes: [UInt8]) -> Bool {
        var found = false
        _ = scan(bytes) { record in
            if let photo = record.photo, photos.contains(photo) { found = true }
            return !found
        }
        return found
    }

    /// One record of an index, read without making its item key (a push reads every pack's).
    struct RawRecord {
        /// The key's 128 bits, as `ItemKey.bits` gives them.
        var key: (high: UInt64, low: UInt64)
        var version: Version
        var deleted: Bool
        var mergeDigest: UInt64
        var photo: BlindID?
    }

    /// Calls `visit` with each record of the index `bytes`, in order; false when the bytes are
    /// not an index (or `visit` said so), which may come after some records were visited.
    static func scan(_ bytes: [UInt8], _ visit: (RawRecord) -> Bool) -> Bool {
        var offset = 0
        func integer(_ width: Int) -> UInt64? {
            guard offset + width <= bytes.count else { return nil }
            defer { offset += width }
            var value: UInt64 = 0
            for index in offset..<offset + width { value = value << 8 | UInt64(bytes[index]) }
            return value
        }
        guard bytes.first == Self.format else { return false }
        offset = 1
        guard let originCount = integer(2), offset + Int(originCount) * 32 <= bytes.count else { return false }
        var origins: [NodeID] = []
        for _ in 0..<originCount {
            guard let origin = NodeID(bytes: bytes[offset..<offset + 32]) else { return false }
            origins.append(origin)
            offset += 32
        }
        guard let count = integer(4), bytes.count - offset >= Int(count) * Self.entryBytes else { return false }
        for _ in 0..<count {
            guard let high = integer(8), let low = integer(8), let stamp = integer(8), stamp > 0,
                let origin = integer(2), Int(origin) < origins.count, let flags = integer(1), flags <= 3,
                let digest = integer(8)
            else { return false }
            var photo: BlindID?
            if flags & 2 != 0 {
                guard offset + BlindID.byteCount <= bytes.count else { return false }
                photo = BlindID(bytes: bytes[offset..<offset + BlindID.byteCount])
                offset += BlindID.byteCount
            }
            let record = RawRecord(
                key: (high, low),
                version: Version(stamp: VersionStamp(rawValue: stamp), origin: origins[Int(origin)]),
                deleted: flags & 1 == 1, mergeDigest: digest, photo: photo)
            guard visit(record) else { return false }
        }
        return offset == bytes.count
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: 8 * (width - 1), through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
