/// An item's merge state in its compact form, beside the whole record that shows each field's
/// winner (Protocol.md 5.9, "The fields bytes"): what a version-5 Record carries in `fields`
/// and `conflicts`, and what a store keeps beside the item's row.
///
/// The body holds a table of the origins it names other than the record's, a table of the
/// versions it names other than the record's (each a stamp, 8 bytes little-endian, and an
/// origin index, 0 for the record's origin), then one entry per field in `ItemField` order: a
/// flags byte (1: the field's own version follows, else it is the record's; 2: its base
/// follows, else unknown; 4: the field holds nothing; 8: its value follows, on a deleted item
/// only, whose record shows no field; 16: candidates that agree with the value follow), then
/// those versions as indexes into the version table, the value, and with 16 their count
/// (1 byte) and each one's flags byte (2: its base follows), version and base. An edit of two
/// fields names one other version five times: in the table once, so the body is about 20
/// bytes. The open conflicts (losing candidates with another value) travel apart, as
/// `ListedCandidate`s: most items have none.
public struct MergeFields: Hashable, Sendable {
    public var body: [UInt8]
    public var conflicts: [ListedCandidate]
    /// The state's joined flag (Protocol.md 5.9 "Older peers"); never set on a whole record.
    public var joined: Bool

    public init(body: [UInt8], conflicts: [ListedCandidate], joined: Bool) {
        self.body = body
        self.conflicts = conflicts
        self.joined = joined
    }

    private enum Flag {
        static let ownVersion: UInt8 = 1
        static let base: UInt8 = 2
        static let empty: UInt8 = 4
        static let value: UInt8 = 8
        static let agreeing: UInt8 = 16
    }

    /// `state`'s compact form; nil for a whole record, which its record says in full.
    public init?(_ state: ItemMergeState, joined: Bool) {
        guard !state.isWholeRecord else { return nil }
        self.joined = joined
        let record = state.version
        let keepsValues = state.isDeleted
        var origins: [NodeID] = []
        var versions: [Version] = []
        var entries = MergeByteWriter()
        func index(_ node: NodeID) -> UInt8 {
            if node == record.origin { return 0 }
            if let found = origins.firstIndex(of: node) { return UInt8(truncatingIfNeeded: found + 1) }
            origins.append(node)
            return UInt8(truncatingIfNeeded: origins.count)
        }
        func versionIndex(_ version: Version) -> UInt8 {
            if let found = versions.firstIndex(of: version) { return UInt8(truncatingIfNeeded: found) }
            versions.append(version)
            return UInt8(truncatingIfNeeded: versions.count - 1)
        }
        func entry<Value>(_ field: FieldState<Value>, _ write: (inout MergeByteWriter, Value) -> Void) {
            guard let winner = field.winner else { return entries.u8(Flag.empty) }
            let ownVersion = winner.version != record
            let agreeing = field.agreeing
            entries.u8(
                (ownVersion ? Flag.ownVersion : 0) | (winner.base != nil ? Flag.base : 0)
                    | (keepsValues ? Flag.value : 0) | (agreeing.isEmpty ? 0 : Flag.agreeing))
            if ownVersion { entries.u8(versionIndex(winner.version)) }
            if let base = winner.base { entries.u8(versionIndex(base)) }
            if keepsValues { write(&entries, winner.value) }
            guard !agreeing.isEmpty else { return }
            entries.u8(UInt8(truncatingIfNeeded: agreeing.count))
            for candidate in agreeing {
                entries.u8(candidate.base != nil ? Flag.base : 0)
                entries.u8(versionIndex(candidate.version))
                if let base = candidate.base { entries.u8(versionIndex(base)) }
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
        // A 255-entry table would take a history no household makes; past it, indexes wrap
        // and reading refuses the bytes rather than misread them.
        var writer = MergeByteWriter()
        // The origins first: the version table names them.
        let originIndexes = versions.map { index($0.origin) }
        writer.u8(UInt8(truncatingIfNeeded: origins.count))
        for origin in origins { writer.raw(origin.bytes) }
        writer.u8(UInt8(truncatingIfNeeded: versions.count))
        for (version, origin) in zip(versions, originIndexes) {
            writer.u64(version.stamp.rawValue)
            writer.u8(origin)
        }
        writer.raw(entries.bytes)
        body = writer.bytes
        conflicts = state.listedConflicts
    }

    /// The state these bytes describe beside `record`, the item as a whole record (its key,
    /// version, deletion and, when live, each field's winning value). Throws unless the bytes
    /// are well formed (every index in its table, no unknown flag, a base below its version,
    /// values only on a deleted item and within the limits a record's fields have, text in
    /// UTF-8, nothing after the last entry) and the state shows exactly `record`.
    public func state(of record: Item) throws(FieldMergeError) -> ItemMergeState {
        var reader = MergeByteReader(body[...])
        let version = record.version
        var origins = [version.origin]
        for _ in 0..<(try reader.u8()) {
            guard let node = NodeID(bytes: try reader.raw(NodeID.byteCount)) else { throw MergeByteReader.truncated }
            origins.append(node)
        }
        var versions: [Version] = []
        for _ in 0..<(try reader.u8()) {
            let stamp = VersionStamp(rawValue: try reader.u64())
            let index = Int(try reader.u8())
            guard index < origins.count else { throw .malformed("a version names origin \(index) of \(origins.count)") }
            versions.append(Version(stamp: stamp, origin: origins[index]))
        }
        func indexed(_ reader: inout MergeByteReader) throws(FieldMergeError) -> Version {
            let index = Int(try reader.u8())
            guard index < versions.count else {
                throw .malformed("an entry names version \(index) of \(versions.count)")
            }
            return versions[index]
        }
        func candidate<Value>(_ field: ItemField, _ value: Value, _ version: Version, _ base: Version?)
            throws(FieldMergeError) -> FieldCandidate<Value>
        {
            guard let made = FieldCandidate(value: value, version: version, base: base) else {
                throw .malformed("a \(field.rawValue) candidate's base is not below its version")
            }
            return made
        }
        func field<Value>(
            _ name: ItemField, winner: Value, read: (inout MergeByteReader) throws(FieldMergeError) -> Value,
            listed: (FieldContent) -> Value?
        ) throws(FieldMergeError) -> FieldState<Value> {
            let flags = try reader.u8()
            var candidates: [FieldCandidate<Value>] = []
            if flags == Flag.empty {
                // A field that holds nothing.
            } else if flags & ~(Flag.ownVersion | Flag.base | Flag.value | Flag.agreeing) != 0 {
                throw .malformed("the \(name.rawValue) entry has unknown flags \(flags)")
            } else if (flags & Flag.value != 0) != record.deleted {
                throw .malformed("the \(name.rawValue) entry's value must follow exactly on a deleted item")
            } else {
                let own = flags & Flag.ownVersion != 0 ? try indexed(&reader) : version
                let base = flags & Flag.base != 0 ? try indexed(&reader) : nil
                let value = flags & Flag.value != 0 ? try read(&reader) : winner
                candidates.append(try candidate(name, value, own, base))
                if flags & Flag.agreeing != 0 {
                    for _ in 0..<(try reader.u8()) {
                        let agreeingFlags = try reader.u8()
                        guard agreeingFlags & ~Flag.base == 0 else {
                            throw .malformed(
                                "an agreeing \(name.rawValue) candidate has unknown flags \(agreeingFlags)")
                        }
                        let agreeing = try indexed(&reader)
                        let base = agreeingFlags & Flag.base != 0 ? try indexed(&reader) : nil
                        candidates.append(try candidate(name, value, agreeing, base))
                    }
                }
            }
            for conflict in conflicts where conflict.field == name {
                guard let value = listed(conflict.content) else {
                    throw .malformed("a \(name.rawValue) conflict holds a value of another type")
                }
                candidates.append(try candidate(name, value, conflict.version, conflict.base))
            }
            return FieldState(candidates)
        }
        let name = try field(.name, winner: record.name, read: Self.name) {
            if case .text(let text) = $0 { text } else { nil }
        }
        let serial = try field(.serialNumber, winner: record.serialNumber, read: Self.serial) {
            if case .optionalText(let text) = $0 { .some(text) } else { nil }
        }
        let value = try field(.valueInDollars, winner: record.valueInDollars, read: Self.value) {
            if case .integer(let value) = $0 { value } else { nil }
        }
        let date = try field(
            .dateCreated, winner: record.dateCreatedMilliseconds, read: { r throws(FieldMergeError) in try r.i64() }
        ) {
            if case .integer(let value) = $0 { value } else { nil }
        }
        let photo = try field(.photo, winner: record.image, read: Self.photo) {
            if case .photo(let ref) = $0 { .some(ref) } else { nil }
        }
        guard reader.isAtEnd else { throw .malformed("bytes follow the last field") }
        guard
            let state = ItemMergeState(
                key: record.key, name: name, serialNumber: serial, valueInDollars: value, dateCreated: date,
                photo: photo, deletion: record.deleted ? version : nil)
        else { throw .malformed("no field and no deletion") }
        var plain = record
        plain.mergeState = nil
        guard state.item == plain, state.isDeleted == record.deleted else {
            throw .malformed("the fields describe another version than the record")
        }
        return state
    }

    // MARK: - Values

    private static func name(_ reader: inout MergeByteReader) throws(FieldMergeError) -> String {
        let text = try reader.text()
        guard text.utf8.count <= ItemLimits.maxNameBytes else { throw .malformed("a kept name is over 1024 bytes") }
        return text
    }

    private static func serial(_ reader: inout MergeByteReader) throws(FieldMergeError) -> String? {
        guard try present(&reader) else { return nil }
        let text = try reader.text()
        guard text.utf8.count <= ItemLimits.maxSerialBytes else {
            throw .malformed("a kept serial number is over 256 bytes")
        }
        return text
    }

    private static func value(_ reader: inout MergeByteReader) throws(FieldMergeError) -> Int64 {
        let value = try reader.i64()
        guard ItemLimits.valueInDollars.contains(value) else {
            throw .malformed("a kept value \(value) is outside \(ItemLimits.valueRangeText)")
        }
        return value
    }

    private static func photo(_ reader: inout MergeByteReader) throws(FieldMergeError) -> ImageRef? {
        guard try present(&reader) else { return nil }
        guard let digest = SHA256Digest(bytes: try reader.raw(SHA256Digest.byteCount)) else {
            throw MergeByteReader.truncated
        }
        let size = try reader.i64()
        guard size > 0 else { throw .malformed("a kept photo's size \(size) is not positive") }
        return ImageRef(digest: digest, size: size)
    }

    private static func present(_ reader: inout MergeByteReader) throws(FieldMergeError) -> Bool {
        switch try reader.u8() {
        case 0: return false
        case 1: return true
        case let other: throw .malformed("a kept optional value starts with \(other), not 0 or 1")
        }
    }

    private static func write<Value>(
        optional value: Value?, into writer: inout MergeByteWriter, _ body: (inout MergeByteWriter, Value) -> Void
    ) {
        guard let value else { return writer.u8(0) }
        writer.u8(1)
        body(&writer, value)
    }
}
