import Foundation
import HPSyncModel

/// Decodes the messages a transfer is mostly made of, ManifestPage and Records (and the
/// FetchRecords that asks for them), straight from the wire bytes into the model's types.
///
/// The generic route builds SwiftProtobuf's message values first and then converts them; for a
/// page of 1,000 entries that was 4,000 instructions per entry in the client of a full copy.
/// This one reads each field once. It takes only what it is sure of: a well-formed envelope
/// holding just one of these bodies, every rule of `Message(decoding:)` met. For anything else
/// it returns nil, and the generic route decodes the payload and says what is wrong. So every
/// payload it accepts yields what the generic route would (a differential test checks it).
///
/// The tests run a debug build, and an optimizer fault has bitten this code once (`RawEntry`),
/// so the release build checks itself too: `audit` has the generic route decode the first
/// payload the direct one takes, and every 64th after, and turns the direct route off for the
/// rest of the process at the first disagreement.
enum BulkMessageDecoder {
    static let audit = Audit()

    /// Which payloads the generic route decodes again, and whether the direct one is still on.
    final class Audit: @unchecked Sendable {
        enum Decision { case use, check, off }

        private let lock = NSLock()
        /// How many payloads the direct route took.
        private(set) var decoded = 0
        private(set) var disagreements = 0

        func next() -> Decision {
            lock.lock()
            defer { lock.unlock() }
            guard disagreements == 0 else { return .off }
            defer { decoded += 1 }
            return decoded % 64 == 0 ? .check : .use
        }

        func disagreed() {
            lock.lock()
            disagreements += 1
            lock.unlock()
        }
    }

    static func decode(_ payload: UnsafeRawBufferPointer) -> Message? {
        var envelope = ProtobufReader(payload)
        guard let (number, type) = envelope.field(), type == .lengthDelimited,
            let body = envelope.lengthDelimited(), envelope.isAtEnd
        else { return nil }
        switch number {
        case 4: return manifestPage(body).map { .manifestPage($0) }
        case 5: return fetchRecords(body).map { .fetchRecords($0) }
        case 6: return records(body).map { .records($0) }
        default: return nil
        }
    }

    // MARK: - ManifestPage

    private static func manifestPage(_ bytes: UnsafeRawBufferPointer) -> ManifestPage? {
        var reader = ProtobufReader(bytes)
        var raw: [RawEntry] = []
        var throughSeq: UInt64 = 0
        var isFinal = false
        var (horizon, tombstones, entries, imageBytes): (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while !reader.isAtEnd {
            guard let (number, type) = reader.field() else { return nil }
            switch (number, type) {
            case (1, .lengthDelimited):
                guard raw.count < ProtocolLimits.maxManifestEntries, let body = reader.lengthDelimited(),
                    let entry = RawEntry.read(body)
                else { return nil }
                raw.append(entry)
            case (2, .varint): guard let value = reader.varint() else { return nil }; throughSeq = value
            case (3, .varint): guard let value = reader.varint() else { return nil }; isFinal = value != 0
            case (4, .varint): guard let value = reader.varint() else { return nil }; horizon = value
            case (5, .varint): guard let value = reader.varint() else { return nil }; tombstones = value
            case (6, .varint): guard let value = reader.varint() else { return nil }; entries = value
            case (7, .varint): guard let value = reader.varint() else { return nil }; imageBytes = value
            case (1...7, _): return nil
            default: guard reader.skip(type) else { return nil }
            }
        }
        guard let through = seq(throughSeq), let tombstonesAhead = seq(tombstones), let entriesAhead = seq(entries),
            let imageBytesAhead = seq(imageBytes)
        else { return nil }
        var list: [ManifestEntry] = []
        list.reserveCapacity(raw.count)
        var previous: Int64 = -1
        var origin: NodeID?
        for entry in raw {
            guard let entrySeq = seq(entry.seq), entrySeq > previous, entrySeq <= through,
                let key = key(entry.key), let node = node(entry.origin, reusing: &origin)
            else { return nil }
            previous = entrySeq
            list.append(
                ManifestEntry(
                    key: key, version: Version(stamp: VersionStamp(rawValue: entry.stamp), origin: node),
                    deleted: entry.deleted, seq: entrySeq))
        }
        var page = ManifestPage(
            entries: list, throughSeq: through, isFinal: isFinal,
            reconcileHorizon: horizon == 0 ? nil : VersionStamp(rawValue: horizon), tombstonesAhead: tombstonesAhead)
        page.entriesAhead = entriesAhead
        page.imageBytesAhead = imageBytesAhead
        return page
    }

    /// A ManifestEntry's fields as read, not yet checked.
    private struct RawEntry {
        var key: UnsafeRawBufferPointer
        var stamp: UInt64
        var origin: UnsafeRawBufferPointer
        var deleted: Bool
        var seq: UInt64

        /// Reads the fields into locals and makes the entry at the end: as a failable `init`
        /// that set each property in the loop, Swift 6.3.1's optimizer (`-O`) lost the
        /// assignment of `seq` (a debug build kept it).
        static func read(_ bytes: UnsafeRawBufferPointer) -> RawEntry? {
            var reader = ProtobufReader(bytes)
            var key = UnsafeRawBufferPointer(start: nil, count: 0)
            var origin = UnsafeRawBufferPointer(start: nil, count: 0)
            var (stamp, seq): (UInt64, UInt64) = (0, 0)
            var deleted = false
            while !reader.isAtEnd {
                guard let (number, type) = reader.field() else { return nil }
                switch (number, type) {
                case (1, .lengthDelimited): guard let value = reader.lengthDelimited() else { return nil }; key = value
                case (2, .varint): guard let value = reader.varint() else { return nil }; stamp = value
                case (3, .lengthDelimited):
                    guard let value = reader.lengthDelimited() else { return nil }; origin = value
                case (4, .varint): guard let value = reader.varint() else { return nil }; deleted = value != 0
                case (5, .varint): guard let value = reader.varint() else { return nil }; seq = value
                case (1...5, _): return nil
                default: guard reader.skip(type) else { return nil }
                }
            }
            return RawEntry(key: key, stamp: stamp, origin: origin, deleted: deleted, seq: seq)
        }
    }

    // MARK: - FetchRecords

    private static func fetchRecords(_ bytes: UnsafeRawBufferPointer) -> [ItemKey]? {
        var reader = ProtobufReader(bytes)
        var keys: [ItemKey] = []
        while !reader.isAtEnd {
            guard let (number, type) = reader.field() else { return nil }
            switch (number, type) {
            case (1, .lengthDelimited):
                guard keys.count < ProtocolLimits.maxRecordsPerBatch, let bytes = reader.lengthDelimited(),
                    let key = key(bytes)
                else { return nil }
                keys.append(key)
            case (1, _): return nil
            default: guard reader.skip(type) else { return nil }
            }
        }
        guard Set(keys).count == keys.count else { return nil }
        return keys
    }

    // MARK: - Records

    private static func records(_ bytes: UnsafeRawBufferPointer) -> [Item]? {
        var reader = ProtobufReader(bytes)
        var items: [Item] = []
        var origin: NodeID?
        while !reader.isAtEnd {
            guard let (number, type) = reader.field() else { return nil }
            switch (number, type) {
            case (1, .lengthDelimited):
                guard items.count < ProtocolLimits.maxRecordsPerBatch, let body = reader.lengthDelimited(),
                    let item = record(body, origin: &origin)
                else { return nil }
                items.append(item)
            case (1, _): return nil
            default: guard reader.skip(type) else { return nil }
            }
        }
        return items
    }

    private static func record(_ bytes: UnsafeRawBufferPointer, origin: inout NodeID?) -> Item? {
        var reader = ProtobufReader(bytes)
        var keyBytes = UnsafeRawBufferPointer(start: nil, count: 0)
        var originBytes = UnsafeRawBufferPointer(start: nil, count: 0)
        var digestBytes = UnsafeRawBufferPointer(start: nil, count: 0)
        var name = ""
        var serial: String?
        var (value, date, imageSize, stamp): (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var deleted = false
        while !reader.isAtEnd {
            guard let (number, type) = reader.field() else { return nil }
            switch (number, type) {
            case (1, .lengthDelimited): guard let bytes = reader.lengthDelimited() else { return nil }; keyBytes = bytes
            case (2, .lengthDelimited):
                guard let bytes = reader.lengthDelimited(), let text = text(bytes) else { return nil }
                name = text
            case (3, .lengthDelimited):
                guard let bytes = reader.lengthDelimited(), let text = text(bytes) else { return nil }
                serial = text
            case (4, .varint): guard let read = reader.varint() else { return nil }; value = read
            case (5, .varint): guard let read = reader.varint() else { return nil }; date = read
            case (6, .lengthDelimited):
                guard let bytes = reader.lengthDelimited() else { return nil }; digestBytes = bytes
            case (7, .varint): guard let read = reader.varint() else { return nil }; imageSize = read
            case (8, .varint): guard let read = reader.varint() else { return nil }; stamp = read
            case (9, .lengthDelimited):
                guard let bytes = reader.lengthDelimited() else { return nil }; originBytes = bytes
            case (10, .varint): guard let read = reader.varint() else { return nil }; deleted = read != 0
            case (1...10, _): return nil
            default: guard reader.skip(type) else { return nil }
            }
        }
        guard let key = key(keyBytes), let node = node(originBytes, reusing: &origin) else {
            return nil
        }
        let version = Version(stamp: VersionStamp(rawValue: stamp), origin: node)
        if deleted { return Item.tombstone(key: key, version: version) }
        guard name.utf8.count <= ItemLimits.maxNameBytes, (serial?.utf8.count ?? 0) <= ItemLimits.maxSerialBytes
        else { return nil }
        var image: ImageRef?
        if digestBytes.count > 0 {
            guard let size = seq(imageSize), size > 0, let digest = SHA256Digest(bytes: digestBytes) else { return nil }
            image = ImageRef(digest: digest, size: size)
        } else if imageSize != 0 {
            return nil
        }
        return Item(
            key: key, name: name, serialNumber: serial, valueInDollars: Int64(bitPattern: value),
            dateCreatedMilliseconds: Int64(bitPattern: date), image: image, version: version, deleted: false)
    }

    // MARK: - Fields

    private static func seq(_ value: UInt64) -> Int64? {
        value <= UInt64(Int64.max) ? Int64(value) : nil
    }

    /// Valid UTF-8 as a string, as protobuf requires of a string field. ASCII, what most names
    /// are, needs no more checking than its bytes' top bits.
    private static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        if high < 0x80 { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// A key is 36 ASCII bytes: bytes that are not UTF-8 decode with U+FFFD in them, which no
    /// key admits, so the key check is the string field's UTF-8 check too.
    private static func key(_ bytes: UnsafeRawBufferPointer) -> ItemKey? {
        try? ItemKey(String(decoding: bytes, as: UTF8.self))
    }

    /// The node ID, the previous entry's when the bytes are the same (see `Message`'s).
    private static func node(_ bytes: UnsafeRawBufferPointer, reusing previous: inout NodeID?) -> NodeID? {
        guard bytes.count == NodeID.byteCount else { return nil }
        if let previous,
            previous.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, NodeID.byteCount) == 0 })
        {
            return previous
        }
        guard let id = NodeID(bytes: bytes) else { return nil }
        previous = id
        return id
    }
}
