import Foundation
import HPSyncCrypto
import HPSyncModel

/// An item's merge state (`ItemMergeState`) as the store keeps it: the `item` row holds the
/// item as a whole record (each field's winner at the item's version, or a tombstone), the
/// `fields` bytes what the row cannot say, and `conflict` the losing candidates.
///
/// The bytes are nil for most items: every field at the row's version with its base unknown,
/// or a tombstone without fields (`ItemMergeState.isWholeRecord`). Otherwise they live in
/// `itemFields` (the row's `fields` column is only a marker: `ItemRecord`) and hold a format
/// byte (8; plus 1 when `conflict` has rows for the item: most have none, and a reader then
/// skips that lookup; plus 2 when the state is joined, Protocol.md 5.9 "Older peers", which the
/// index `itemFields_on_joined` finds by `fields >= x'0A'`; earlier formats were development
/// builds' and are refused), the state's merge digest (8 bytes, little-endian: a source's
/// manifest reads it without reading the state), then the compact form's body
/// (`MergeFields`), which is what a version-5 Record carries: a source sends it as it is
/// stored.
struct StoredMergeState {
    var item: Item
    var fields: Data?
    var conflicts: [ConflictRecord]
    /// The state's joined flag (Protocol.md 5.9 "Older peers"); never set on a whole record.
    var joined: Bool

    static let format: UInt8 = 8
    private static let conflictsBit: UInt8 = 1
    private static let joinedBit: UInt8 = 2
    /// The format byte and the digest before the body.
    private static let headerSize = 9

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

    /// The merge digest a row's `fields` hold (Protocol.md 5.9); 0 for a whole record.
    static func mergeDigest(_ fields: Data?) -> UInt64 {
        guard let fields, fields.count >= headerSize else { return 0 }
        return fields.dropFirst().prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
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
        guard let compact = MergeFields(state, joined: joined) else {
            fields = nil
            conflicts = []
            self.joined = false
            return
        }
        self.joined = joined
        conflicts = compact.conflicts.map { ConflictRecord(key: state.key, listed: $0) }
        var bytes = [Self.format + (conflicts.isEmpty ? 0 : Self.conflictsBit) + (joined ? Self.joinedBit : 0)]
        bytes.reserveCapacity(Self.headerSize + compact.body.count)
        let digest = state.mergeDigest
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: digest >> UInt64(shift))) }
        bytes += compact.body
        fields = Data(bytes)
    }

    /// The compact form as stored, unread: what a source sends (nil for a whole record).
    func compact() throws -> MergeFields? {
        guard let fields else {
            if conflicts.isEmpty { return nil }
            throw StoreError.database("item \(item.key) has conflicts but no field versions")
        }
        guard fields.count >= Self.headerSize,
            (Self.format...Self.format + Self.conflictsBit + Self.joinedBit).contains(fields[fields.startIndex])
        else {
            throw StoreError.database("item \(item.key) has field versions in an unknown format")
        }
        // In the order `MergeFields(_:joined:)` lists them (the rows come in the table's), so a
        // stored state and a read one have one compact form.
        let order = ItemField.allCases
        let listed = try conflicts.map { try $0.listed() }.sorted {
            ($0.field == $1.field)
                ? $0.version > $1.version
                : order.firstIndex(of: $0.field)! < order.firstIndex(of: $1.field)!
        }
        return MergeFields(body: Array(fields.dropFirst(Self.headerSize)), conflicts: listed, joined: joined)
    }

    /// The merge state the row, its `fields` and its conflicts describe.
    func state() throws -> ItemMergeState {
        guard let compact = try compact() else { return ItemMergeState(record: item) }
        do {
            return try compact.state(of: item)
        } catch {
            throw StoreError.database("item \(item.key) has malformed field versions: \(error)")
        }
    }
}
