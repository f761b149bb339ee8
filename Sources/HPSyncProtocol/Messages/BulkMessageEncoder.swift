import HPSyncModel

/// Encodes the two messages a transfer is mostly made of, ManifestPage and Records, straight
/// from the model's types into their envelope's bytes: byte for byte what SwiftProtobuf writes
/// for them (fields in number order, proto3 defaults left out, a set serial number written even
/// when empty), which a test checks on random messages.
///
/// The generic route builds SwiftProtobuf's message values first; for the pages and records of a
/// full copy that was a quarter of the serving side's instructions outside TLS and hashing.
enum BulkMessageEncoder {
    /// The envelope's bytes, or nil for a message of another kind.
    static func encode(_ message: Message) -> [UInt8]? {
        switch message {
        case .manifestPage(let page):
            let size = page.entries.reduce(pageFieldsSize(page)) { $0 + nestedSize(entrySize($1)) }
            return envelope(field: 4, size: size) { writer in
                for entry in page.entries {
                    writer.header(1, length: entrySize(entry))
                    write(entry, into: &writer)
                }
                writer.field(2, UInt64(page.throughSeq))
                writer.field(3, page.isFinal ? 1 : 0)
                writer.field(4, page.reconcileHorizon?.rawValue ?? 0)
                writer.field(5, UInt64(page.tombstonesAhead))
                writer.field(6, UInt64(page.entriesAhead))
                writer.field(7, UInt64(page.imageBytesAhead))
            }
        case .records(let items):
            // Version 5: an edited item's record carries its fields bytes (a page of edits has many).
            let fields = items.map(\.mergeFields)
            let sizes = zip(items, fields).map { recordSize($0, $1) }
            let size = sizes.reduce(0) { $0 + nestedSize($1) }
            return envelope(field: 6, size: size) { writer in
                for index in items.indices {
                    writer.header(1, length: sizes[index])
                    write(items[index], fields[index], into: &writer)
                }
            }
        default:
            return nil
        }
    }

    /// The envelope with its one body field of `size` bytes, which `body` writes.
    private static func envelope(field: UInt64, size: Int, body: (inout ProtobufWriter) -> Void) -> [UInt8] {
        let total = nestedSize(size)
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(buffer))
            writer.header(field, length: size)
            body(&writer)
            precondition(writer.position == total, "a bulk message's size was miscounted")
            count = total
        }
    }

    // MARK: - ManifestPage

    private static func pageFieldsSize(_ page: ManifestPage) -> Int {
        varintFieldSize(UInt64(page.throughSeq)) + varintFieldSize(page.isFinal ? 1 : 0)
            + varintFieldSize(page.reconcileHorizon?.rawValue ?? 0) + varintFieldSize(UInt64(page.tombstonesAhead))
            + varintFieldSize(UInt64(page.entriesAhead)) + varintFieldSize(UInt64(page.imageBytesAhead))
    }

    private static func entrySize(_ entry: ManifestEntry) -> Int {
        bytesFieldSize(entry.key.rawValue.utf8.count) + varintFieldSize(entry.version.stamp.rawValue)
            + bytesFieldSize(NodeID.byteCount) + varintFieldSize(entry.deleted ? 1 : 0)
            + varintFieldSize(UInt64(entry.seq)) + (entry.mergeDigest == 0 ? 0 : 9)
    }

    private static func write(_ entry: ManifestEntry, into writer: inout ProtobufWriter) {
        writer.field(1, text: entry.key.rawValue)
        writer.field(2, entry.version.stamp.rawValue)
        writer.field(3, bytes: entry.version.origin.bytes)
        writer.field(4, entry.deleted ? 1 : 0)
        writer.field(5, UInt64(entry.seq))
        writer.fixed64(6, entry.mergeDigest)
    }

    // MARK: - Records

    private static func recordSize(_ item: Item, _ fields: MergeFields?) -> Int {
        var size =
            bytesFieldSize(item.key.rawValue.utf8.count) + varintFieldSize(item.version.stamp.rawValue)
            + bytesFieldSize(NodeID.byteCount) + varintFieldSize(item.deleted ? 1 : 0)
        if let fields {
            for candidate in fields.conflicts { size += nestedSize(candidateSize(candidate)) }
            size += varintFieldSize(fields.joined ? 1 : 0) + bytesFieldSize(fields.body.count)
        }
        guard !item.deleted else { return size }
        size += bytesFieldSize(item.name.utf8.count)
        if let serial = item.serialNumber { size += nestedSize(serial.utf8.count) }
        size += varintFieldSize(UInt64(bitPattern: item.valueInDollars))
        size += varintFieldSize(UInt64(bitPattern: item.dateCreatedMilliseconds))
        if let image = item.image {
            size += bytesFieldSize(SHA256Digest.byteCount) + varintFieldSize(UInt64(image.size))
        }
        return size
    }

    private static func write(_ item: Item, _ fields: MergeFields?, into writer: inout ProtobufWriter) {
        writer.field(1, text: item.key.rawValue)
        if !item.deleted {
            writer.field(2, text: item.name)
            if let serial = item.serialNumber {
                // Set, it is written even when empty (proto3 `optional`).
                writer.header(3, length: serial.utf8.count)
                writer.append(serial)
            }
            writer.field(4, UInt64(bitPattern: item.valueInDollars))
            writer.field(5, UInt64(bitPattern: item.dateCreatedMilliseconds))
            if let image = item.image {
                writer.field(6, bytes: image.digest.bytes)
                writer.field(7, UInt64(image.size))
            }
        }
        writer.field(8, item.version.stamp.rawValue)
        writer.field(9, bytes: item.version.origin.bytes)
        writer.field(10, item.deleted ? 1 : 0)
        guard let fields else { return }
        for candidate in fields.conflicts {
            writer.header(11, length: candidateSize(candidate))
            write(candidate, into: &writer)
        }
        writer.field(12, fields.joined ? 1 : 0)
        writer.field(13, bytes: fields.body)
    }

    // MARK: - FieldCandidate (version 5: an open conflict)

    private static func fieldNumber(_ field: ItemField) -> UInt64 {
        UInt64(ItemField.allCases.firstIndex(of: field)! + 1)
    }

    private static func candidateSize(_ candidate: ListedCandidate) -> Int {
        var size =
            varintFieldSize(fieldNumber(candidate.field)) + varintFieldSize(candidate.version.stamp.rawValue)
            + bytesFieldSize(NodeID.byteCount)
        if let base = candidate.base {
            size += varintFieldSize(base.stamp.rawValue) + bytesFieldSize(NodeID.byteCount)
        }
        switch candidate.content {
        // A name is set even when empty (proto3 `optional`), so it is written.
        case .text(let text): size += nestedSize(text.utf8.count)
        case .optionalText(let text): if let text { size += nestedSize(text.utf8.count) }
        case .integer(let value): size += varintFieldSize(UInt64(bitPattern: value))
        case .photo(let ref):
            if let ref { size += bytesFieldSize(SHA256Digest.byteCount) + varintFieldSize(UInt64(ref.size)) }
        }
        return size
    }

    private static func write(_ candidate: ListedCandidate, into writer: inout ProtobufWriter) {
        writer.field(1, fieldNumber(candidate.field))
        writer.field(2, candidate.version.stamp.rawValue)
        writer.field(3, bytes: candidate.version.origin.bytes)
        if let base = candidate.base {
            writer.field(4, base.stamp.rawValue)
            writer.field(5, bytes: base.origin.bytes)
        }
        func text(_ text: String) {
            writer.header(6, length: text.utf8.count)
            writer.append(text)
        }
        switch candidate.content {
        case .text(let value): text(value)
        case .optionalText(let value): if let value { text(value) }
        case .integer(let value): writer.field(7, UInt64(bitPattern: value))
        case .photo(let ref):
            if let ref {
                writer.field(8, bytes: ref.digest.bytes)
                writer.field(9, UInt64(ref.size))
            }
        }
    }

    // MARK: - Sizes (every field number here is below 16: its tag is one byte)

    static func varintSize(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// A varint field, left out at 0.
    private static func varintFieldSize(_ value: UInt64) -> Int {
        value == 0 ? 0 : 1 + varintSize(value)
    }

    /// A string or bytes field, left out when empty.
    private static func bytesFieldSize(_ count: Int) -> Int {
        count == 0 ? 0 : nestedSize(count)
    }

    /// A length-delimited field written whatever its length: tag, length, bytes.
    private static func nestedSize(_ count: Int) -> Int {
        1 + varintSize(UInt64(count)) + count
    }
}

/// Writes protobuf's wire format into memory sized beforehand.
struct ProtobufWriter {
    /// The wire types this writer writes.
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var position = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            buffer[position] = UInt8(truncatingIfNeeded: value) | 0x80
            position += 1
            value >>= 7
        }
        buffer[position] = UInt8(value)
        position += 1
    }

    mutating func tag(_ field: UInt64, _ type: WireType) {
        varint(field << 3 | UInt64(type.rawValue))
    }

    /// A length-delimited field's tag and length; its `length` bytes come next.
    mutating func header(_ field: UInt64, length: Int) {
        tag(field, .lengthDelimited)
        varint(UInt64(length))
    }

    /// A varint field, left out at 0 (proto3's default).
    mutating func field(_ number: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        tag(number, .varint)
        varint(value)
    }

    /// A fixed64 field, left out at 0 (one byte of tag, eight little-endian bytes).
    mutating func fixed64(_ number: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        tag(number, .fixed64)
        withUnsafeBytes(of: value.littleEndian) { append($0) }
    }

    /// A string field, left out when empty.
    mutating func field(_ number: UInt64, text: String) {
        guard !text.isEmpty else { return }
        header(number, length: text.utf8.count)
        append(text)
    }

    /// A bytes field, left out when empty.
    mutating func field(_ number: UInt64, bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        header(number, length: bytes.count)
        bytes.withUnsafeBytes { append($0) }
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[position..<position + bytes.count]).copyMemory(from: bytes)
        position += bytes.count
    }
}
