import Foundation
import HPSyncModel

/// An item's merge state (`ItemMergeState`) as the store keeps it: the `item` row holds the
/// item as a whole record (each field's winner at the item's version, or a tombstone), its
/// `fields` column what the row cannot say, and `conflict` the losing candidates.
///
/// `fields` is NULL for most items: every field at the row's version with its base unknown,
/// or a tombstone without fields (`ItemMergeState.isWholeRecord`). Otherwise it holds a format
/// byte (3; plus 1 when `conflict` has rows for the item: most have none, and a reader then
/// skips that lookup; plus 2 when the state is joined, Protocol.md 5.9 "Older peers", which the
/// index `item_on_joined` finds by `fields >= x'05'`; 1 and 2 were development builds' and are
/// refused), a table of the origins it names other than the row's, a table of the versions it
/// names other than the row's (each a stamp, 8 bytes little-endian, and an origin index, 0 for
/// the row's origin), then one entry per field in `ItemField` order: a flags byte (1: the
/// field's own version follows, 2: its base follows, 4: the field holds nothing, 8: its value
/// follows, for the fields a tombstone keeps, 16: candidates that agree with the value follow),
/// then those versions as indexes into the version table; with 16, their count (1 byte) and
/// each one's flags byte (2: its base follows), version and base. An edit of two fields names
/// one other version five times: in the table once, the row grows by about 22 bytes, not 52
/// (rows that grow split their pages).
struct StoredMergeState {
    var item: Item
    var fields: Data?
    var conflicts: [ConflictRecord]
    /// The state's joined flag (Protocol.md 5.9 "Older peers"); never set on a whole record.
    var joined: Bool

    static let format: UInt8 = 3
    private static let conflictsBit: UInt8 = 1
    private static let joinedBit: UInt8 = 2

    /// Whether a row's `fields` say that `conflict` has rows for it.
    static func hasConflictRows(_ fields: Data?) -> Bool {
        guard let byte = fields?.first, byte >= format else { return false }
        return (byte - format) & conflictsBit != 0
    }

    /// Whether a row's `fields` say that its state is joined.
    static func isJoined(_ fields: Data?) -> Bool {
        guard let byte = fields?.first, byte >= format else { return false }
        return (byte - format) & joinedBit != 0
    }

    /// `fields` of a joined state, the flag cleared.
    static func clearingJoined(_ fields: Data) -> Data {
        var cleared = fields
        cleared[cleared.startIndex] -= joinedBit
        return cleared
    }

    init(item: Item, fields: Data?, conflicts: [ConflictRecord]) {
        self.item = item
        self.fields = fields
        self.conflicts = conflicts
        joined = Self.isJoined(fields)
    }

    /// `state` as stored, with its joined flag; a whole record is never joined (what makes one,
    /// Protocol.md 5.9 says, is a record made at its version), so it keeps no `fields`.
    init(_ state: ItemMergeState, joined: Bool = false) {
        item = state.item
        conflicts = Self.conflictRecords(state)
        guard !state.isWholeRecord else {
            fields = nil
            self.joined = false
            return
        }
        self.joined = joined
        var origins: [NodeID] = []
        var versions: [Version] = []
        var body = MergeByteWriter()
        let record = item.version
        let keepsValues = state.isDeleted
        func index(_ node: NodeID) -> UInt8 {
            if node == record.origin { return 0 }
            if let found = origins.firstIndex(of: node) { return UInt8(found + 1) }
            origins.append(node)
            return UInt8(origins.count)
        }
        func versionIndex(_ version: Version) -> UInt8 {
            if let found = versions.firstIndex(of: version) { return UInt8(found) }
            versions.append(version)
            return UInt8(versions.count - 1)
        }
        func entry<Value>(_ field: FieldState<Value>, _ write: (inout MergeByteWriter, Value) -> Void) {
            guard let winner = field.winner else { return body.u8(4) }
            let ownVersion = winner.version != record
            let agreeing = field.agreeing
            body.u8(
                (ownVersion ? 1 : 0) | (winner.base != nil ? 2 : 0) | (keepsValues ? 8 : 0)
                    | (agreeing.isEmpty ? 0 : 16))
            if ownVersion { body.u8(versionIndex(winner.version)) }
            if let base = winner.base { body.u8(versionIndex(base)) }
            if keepsValues { write(&body, winner.value) }
            guard !agreeing.isEmpty else { return }
            body.u8(UInt8(truncatingIfNeeded: agreeing.count))
            for candidate in agreeing {
                body.u8(candidate.base != nil ? 2 : 0)
                body.u8(versionIndex(candidate.version))
                if let base = candidate.base { body.u8(versionIndex(base)) }
            }
        }
        entry(state.name) { $0.text($1) }
        entry(state.serialNumber) { Self.write(optional: $1, into: &$0) { $0.text($1) } }
        entry(state.valueInDollars) { $0.i64($1) }
        entry(state.dateCreated) { $0.i64($1) }
        entry(state.photo) { writer, ref in
            Self.write(optional: ref, into: &writer) {
                $0.raw($1.digest.bytes)
                $0.i64($1.size)
            }
        }
        // A 255-origin table would take a history no household makes; past it, indexes wrap
        // and the check on reading refuses the row rather than misread it.
        var writer = MergeByteWriter()
        writer.u8(Self.format + (conflicts.isEmpty ? 0 : Self.conflictsBit) + (joined ? Self.joinedBit : 0))
        // The origins first: the version table names them.
        let indexes = versions.map { index($0.origin) }
        writer.u8(UInt8(truncatingIfNeeded: origins.count))
        for origin in origins { writer.raw(origin.bytes) }
        writer.u8(UInt8(versions.count))
        for (version, origin) in zip(versions, indexes) {
            writer.u64(version.stamp.rawValue)
            writer.u8(origin)
        }
        writer.raw(body.bytes)
        fields = Data(writer.bytes)
    }

    /// The merge state the row, its `fields` and its conflicts describe.
    func state() throws -> ItemMergeState {
        guard let fields else {
            if conflicts.isEmpty { return ItemMergeState(record: item) }
            throw StoreError.database("item \(item.key) has conflicts but no field versions")
        }
        var reader = MergeByteReader(fields)
        guard (Self.format...Self.format + Self.conflictsBit + Self.joinedBit).contains(try reader.u8()) else {
            throw StoreError.database("item \(item.key) has field versions in an unknown format")
        }
        let record = item.version
        var origins = [record.origin]
        for _ in 0..<(try reader.u8()) {
            guard let node = NodeID(bytes: try reader.raw(NodeID.byteCount)) else { throw MergeByteReader.truncated }
            origins.append(node)
        }
        let key = item.key
        var versions: [Version] = []
        for _ in 0..<(try reader.u8()) {
            let stamp = VersionStamp(rawValue: try reader.u64())
            let index = Int(try reader.u8())
            guard index < origins.count else { throw StoreError.database("item \(key) names an unknown origin") }
            versions.append(Version(stamp: stamp, origin: origins[index]))
        }
        func version(_ reader: inout MergeByteReader) throws -> Version {
            let index = Int(try reader.u8())
            guard index < versions.count else { throw StoreError.database("item \(key) names an unknown version") }
            return versions[index]
        }
        func field<Value>(
            _ name: ItemField, winner: Value, read: (inout MergeByteReader) throws -> Value,
            conflict: (ConflictRecord) -> Value
        ) throws -> FieldState<Value> {
            let flags = try reader.u8()
            var candidates: [FieldCandidate<Value>] = []
            if flags & 4 == 0 {
                let own = flags & 1 != 0 ? try version(&reader) : record
                let base = flags & 2 != 0 ? try version(&reader) : nil
                let value = flags & 8 != 0 ? try read(&reader) : winner
                guard let candidate = FieldCandidate(value: value, version: own, base: base) else {
                    throw StoreError.database("item \(key) has a field base above its version")
                }
                candidates.append(candidate)
                if flags & 16 != 0 {
                    for _ in 0..<(try reader.u8()) {
                        let hasBase = try reader.u8() & 2 != 0
                        let agreeing = try version(&reader)
                        guard
                            let candidate = FieldCandidate(
                                value: value, version: agreeing, base: hasBase ? try version(&reader) : nil)
                        else { throw StoreError.database("item \(key) has a field base above its version") }
                        candidates.append(candidate)
                    }
                }
            }
            for row in conflicts where try row.itemField == name { candidates.append(try row.candidate(conflict(row))) }
            return FieldState(candidates)
        }
        let name = try field(.name, winner: item.name, read: { try $0.text() }, conflict: { $0.text ?? "" })
        let serial = try field(
            .serialNumber, winner: item.serialNumber, read: { try Self.read(optional: &$0) { try $0.text() } },
            conflict: { $0.text })
        let value = try field(
            .valueInDollars, winner: item.valueInDollars, read: { try $0.i64() }, conflict: { $0.integer ?? 0 })
        let date = try field(
            .dateCreated, winner: item.dateCreatedMilliseconds, read: { try $0.i64() }, conflict: { $0.integer ?? 0 })
        let photo = try field(
            .photo, winner: item.image,
            read: {
                try Self.read(optional: &$0) { reader in
                    guard let digest = SHA256Digest(bytes: try reader.raw(32)) else { throw MergeByteReader.truncated }
                    return ImageRef(digest: digest, size: try reader.i64())
                }
            }, conflict: { $0.photo })
        guard reader.isAtEnd,
            let state = ItemMergeState(
                key: key, name: name, serialNumber: serial, valueInDollars: value, dateCreated: date, photo: photo,
                deletion: item.deleted ? record : nil)
        else { throw StoreError.database("item \(key) has malformed field versions") }
        return state
    }

    private static func conflictRecords(_ state: ItemMergeState) -> [ConflictRecord] {
        var rows: [ConflictRecord] = []
        func add<Value>(_ field: ItemField, _ values: FieldState<Value>, _ content: (Value) -> FieldContent) {
            // Most fields have no conflict: no slice of them made, no generic walk.
            guard values.candidates.count > 1 else { return }
            for candidate in values.conflicts {
                rows.append(
                    ConflictRecord(
                        key: state.key, field: field, candidate: candidate, content: content(candidate.value)))
            }
        }
        add(.name, state.name) { .text($0) }
        add(.serialNumber, state.serialNumber) { .optionalText($0) }
        add(.valueInDollars, state.valueInDollars) { .integer($0) }
        add(.dateCreated, state.dateCreated) { .integer($0) }
        add(.photo, state.photo) { .photo($0) }
        return rows
    }

    private static func write<Value>(
        optional value: Value?, into writer: inout MergeByteWriter, _ body: (inout MergeByteWriter, Value) -> Void
    ) {
        guard let value else { return writer.u8(0) }
        writer.u8(1)
        body(&writer, value)
    }

    private static func read<Value>(
        optional reader: inout MergeByteReader, _ body: (inout MergeByteReader) throws -> Value
    ) throws -> Value? {
        try reader.u8() == 0 ? nil : try body(&reader)
    }
}
