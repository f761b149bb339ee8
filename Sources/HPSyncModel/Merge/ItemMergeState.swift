/// Everything the merge knows of one item: each field's candidates and the item's deletion.
///
/// The item is deleted when its deletion version is above every field's version (a newer edit
/// revives it, an older one does not), and its version, what manifests and tombstone GC go by,
/// is the greatest of them all. A deleted item keeps its fields' candidates: they are what a
/// later revival brings back, and dropping them would make the result depend on the order of
/// syncs (a tombstone that swallowed one node's fields before a revival arrived would disagree
/// with a node that met the revival first).
public struct ItemMergeState: Hashable, Sendable {
    public let key: ItemKey
    public private(set) var name: FieldState<String>
    public private(set) var serialNumber: FieldState<String?>
    public private(set) var valueInDollars: FieldState<Int64>
    public private(set) var dateCreated: FieldState<Int64>
    public private(set) var photo: FieldState<ImageRef?>
    /// The version of the deletion, on a deleted item only: once an edit revives the item,
    /// no later join can make an older deletion count again, so a live item forgets it (and
    /// two nodes that met the revival by different ways hold equal states).
    public private(set) var deletion: Version?

    /// A state from its parts; nil when it holds neither a field nor a deletion.
    public init?(
        key: ItemKey, name: FieldState<String>, serialNumber: FieldState<String?>,
        valueInDollars: FieldState<Int64>, dateCreated: FieldState<Int64>, photo: FieldState<ImageRef?>,
        deletion: Version?
    ) {
        guard
            deletion != nil || !name.isEmpty || !serialNumber.isEmpty || !valueInDollars.isEmpty
                || !dateCreated.isEmpty || !photo.isEmpty
        else { return nil }
        self.init(
            holding: key, name: name, serialNumber: serialNumber, valueInDollars: valueInDollars,
            dateCreated: dateCreated, photo: photo, deletion: deletion)
    }

    /// The state of a whole-record version: every field at the record's version with its base
    /// unknown, or a tombstone without fields. Two such states merge as whole records do: the
    /// newer wins, with no conflict.
    public init(record item: Item) {
        key = item.key
        deletion = item.deleted ? item.version : nil
        if item.deleted {
            name = FieldState()
            serialNumber = FieldState()
            valueInDollars = FieldState()
            dateCreated = FieldState()
            photo = FieldState()
        } else {
            name = FieldState(value: item.name, version: item.version)
            serialNumber = FieldState(value: item.serialNumber, version: item.version)
            valueInDollars = FieldState(value: item.valueInDollars, version: item.version)
            dateCreated = FieldState(value: item.dateCreatedMilliseconds, version: item.version)
            photo = FieldState(value: item.image, version: item.version)
        }
    }

    /// The greatest version of any field, nil when no field holds anything.
    public var fieldVersion: Version? {
        // Without an array: the merge asks for it several times per record.
        Self.later(
            Self.later(
                Self.later(name.version, serialNumber.version), Self.later(valueInDollars.version, dateCreated.version)),
            photo.version)
    }

    /// The item's version: the greatest of its fields' versions and its deletion's.
    public var version: Version {
        guard let fields = fieldVersion else { return deletion! }
        guard let deletion else { return fields }
        return max(fields, deletion)
    }

    public var isDeleted: Bool {
        guard let deletion else { return false }
        guard let fields = fieldVersion else { return true }
        return deletion > fields
    }

    /// The item as a whole record: each field's winner at the item's version, or a tombstone.
    public var item: Item {
        if isDeleted { return .tombstone(key: key, version: version) }
        return Item(
            key: key, name: name.winner?.value ?? "", serialNumber: serialNumber.winner?.value ?? nil,
            valueInDollars: valueInDollars.winner?.value ?? 0, dateCreatedMilliseconds: dateCreated.winner?.value ?? 0,
            image: photo.winner?.value ?? nil, version: version)
    }

    /// The item its fields' winners show, deleted or not: what a revival that sets no field
    /// would bring back. Nil when no field holds anything (a tombstone without fields).
    public var fieldsShown: Item? {
        guard let version = fieldVersion else { return nil }
        return Item(
            key: key, name: name.winner?.value ?? "", serialNumber: serialNumber.winner?.value ?? nil,
            valueInDollars: valueInDollars.winner?.value ?? 0, dateCreatedMilliseconds: dateCreated.winner?.value ?? 0,
            image: photo.winner?.value ?? nil, version: version)
    }

    /// Whether the state says no more than a whole record: every field's only candidate at the
    /// item's version with its base unknown (or no fields at all, for a tombstone). Most items
    /// of a store are in this state, which needs nothing beyond the record to store or send.
    public var isWholeRecord: Bool {
        let version = self.version
        func plain<Value>(_ field: FieldState<Value>) -> Bool {
            field.candidates.count == 1 && field.winner!.version == version && field.winner!.base == nil
        }
        if isDeleted, fieldVersion == nil { return true }
        return deletion == nil && plain(name) && plain(serialNumber) && plain(valueInDollars) && plain(dateCreated)
            && plain(photo)
    }

    /// The state that holds what both hold: each field joined, the later deletion.
    public func joined(with other: ItemMergeState) throws(FieldMergeError) -> ItemMergeState {
        guard key == other.key else { throw .differentKeys(key, other.key) }
        if self == other { return self }
        return ItemMergeState(
            holding: key,
            name: name.joined(with: other.name), serialNumber: serialNumber.joined(with: other.serialNumber),
            valueInDollars: valueInDollars.joined(with: other.valueInDollars),
            dateCreated: dateCreated.joined(with: other.dateCreated), photo: photo.joined(with: other.photo),
            deletion: Self.later(deletion, other.deletion))
    }

    /// A state known to hold a field or a deletion.
    init(
        holding key: ItemKey, name: FieldState<String>, serialNumber: FieldState<String?>,
        valueInDollars: FieldState<Int64>, dateCreated: FieldState<Int64>, photo: FieldState<ImageRef?>,
        deletion: Version?
    ) {
        self.key = key
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
        self.dateCreated = dateCreated
        self.photo = photo
        self.deletion = deletion
        forgetOvertakenDeletion()
    }

    private mutating func forgetOvertakenDeletion() {
        if let deletion, let fields = fieldVersion, fields > deletion { self.deletion = nil }
    }

    /// Deletes the item by a local change stamped `version`, above everything the item holds.
    public mutating func delete(at version: Version) throws(FieldMergeError) {
        let seen = self.version
        guard seen < version else { throw .staleEdit(version: version, seen: seen) }
        deletion = version
    }

    /// Sets the fields `edit` names by one local change stamped `version`; each new value
    /// resolves its field's conflicts. Setting a field of a deleted item revives the item.
    public mutating func apply(_ edit: FieldEdit, at version: Version) throws(FieldMergeError) {
        let seen = self.version
        guard seen < version else { throw .staleEdit(version: version, seen: seen) }
        if let value = edit.name { try name.set(value, at: version) }
        if let value = edit.serialNumber { try serialNumber.set(value, at: version) }
        if let value = edit.valueInDollars { try valueInDollars.set(value, at: version) }
        if let value = edit.dateCreated { try dateCreated.set(value, at: version) }
        if let value = edit.photo { try photo.set(value, at: version) }
        if !edit.isEmpty { deletion = nil }
    }

    /// The open conflicts of a live item, field by field; none for a deleted one.
    public var conflicts: [FieldConflict] {
        guard !isDeleted else { return [] }
        var result: [FieldConflict] = []
        func collect<Value>(_ field: ItemField, _ state: FieldState<Value>, _ wrap: (Value) -> FieldContent) {
            guard let winner = state.winner else { return }
            for loser in state.conflicts {
                result.append(
                    FieldConflict(
                        key: key, field: field, kept: wrap(winner.value), keptVersion: winner.version,
                        losing: wrap(loser.value), losingVersion: loser.version))
            }
        }
        collect(.name, name) { .text($0) }
        collect(.serialNumber, serialNumber) { .optionalText($0) }
        collect(.valueInDollars, valueInDollars) { .integer($0) }
        collect(.dateCreated, dateCreated) { .integer($0) }
        collect(.photo, photo) { .photo($0) }
        return result
    }

    private static func later(_ one: Version?, _ other: Version?) -> Version? {
        guard let one else { return other }
        guard let other else { return one }
        return max(one, other)
    }
}
