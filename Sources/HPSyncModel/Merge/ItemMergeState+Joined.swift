/// The joined flag (Protocol.md 5.9 "Older peers"): whether a state's contents may not be the
/// record its version's edit made. A version-4 peer tells records apart by version only, so a
/// version-5 node restamps a joined live item before it sends one such a peer.
///
/// The invariant: an unflagged state shows, at its version, the record that version's edit
/// made. A local edit, a whole record taken from a record-level peer and a restamp make
/// unflagged states; a join is unflagged only when an unflagged input vouches for it. A wrong
/// flag is thus only ever a spurious `true`, which costs an unneeded restamp.
extension ItemMergeState {
    /// Whether `self`, the join of `inputs` (each state with its flag), is joined: false
    /// exactly when an unflagged input of the same version shows the same contents (its
    /// fields' winners, or a tombstone).
    public func isJoined(from inputs: [(state: ItemMergeState, joined: Bool)]) -> Bool {
        let version = self.version
        // The contents built only for an input that could vouch: a sink joins every record.
        var shown: Item?
        for input in inputs where !input.joined && input.state.version == version {
            if shown == nil { shown = item }
            if input.state.item == shown { return false }
        }
        return true
    }

    /// The state after a restamp stamped `version`: every field set to its value again, based
    /// on the field's version, so the item shows at `version` exactly what it showed before, as
    /// the record of a local edit (unflagged). Any open conflict is resolved in favour of the
    /// value shown. Throws for a deleted item (a joined tombstone cannot arise; see Protocol.md
    /// 5.9) and for a version not above the state's.
    public func restamped(at version: Version) throws(FieldMergeError) -> ItemMergeState {
        guard !isDeleted else { throw .malformed("a deleted item is not restamped") }
        var result = self
        try result.apply(FieldEdit(settingAllOf: item), at: version)
        return result
    }

    /// The state `clock reset` writes for a deleted item that holds fields: each field that
    /// holds a value set to it again at `fieldsVersion` as a whole record sets it (its base
    /// unknown, so it replaces every older candidate of the field wherever it arrives), then
    /// the item deleted at `deletion`, above it. Like a live item's restamp it is a whole edit:
    /// no field's value is lost, and the field edits of other nodes the tombstone held are
    /// replaced by it rather than dropped (a tombstone without them would differ from the nodes
    /// that still hold them). Throws for a live item and for versions not in that order.
    public func restampedTombstone(fieldsAt fieldsVersion: Version, deletedAt deletion: Version) throws(FieldMergeError)
        -> ItemMergeState
    {
        guard isDeleted else { throw .malformed("a live item is restamped whole") }
        guard fieldsVersion < deletion else { throw .staleEdit(version: deletion, seen: fieldsVersion) }
        func restamped<Value>(_ field: FieldState<Value>) -> FieldState<Value> {
            field.winner.map { FieldState(value: $0.value, version: fieldsVersion) } ?? FieldState()
        }
        return ItemMergeState(
            holding: key, name: restamped(name), serialNumber: restamped(serialNumber),
            valueInDollars: restamped(valueInDollars), dateCreated: restamped(dateCreated),
            photo: restamped(photo), deletion: deletion)
    }

    /// Whether the join of this state with the live whole record `record` is this state
    /// unchanged: each field holds the record's own candidate (its value at the record's
    /// version, base unknown), or a candidate that dominates it and none of that version.
    /// (Whatever the record's candidate would dominate, the dominating one does too, so this
    /// state, whose candidates are maximal, holds none of it.) A sink whose item is such a
    /// record, receiving a state made from it, writes the state as received without building
    /// its own or joining; a false answer only means "join as usual".
    public func absorbs(wholeRecord record: Item) -> Bool {
        guard !record.deleted, record.key == key else { return false }
        let version = record.version
        func absorbs<Value>(_ field: FieldState<Value>, _ value: Value) -> Bool {
            var dominated = false
            for candidate in field.candidates {
                if candidate.version == version { return candidate.base == nil && candidate.value == value }
                if !dominated {
                    dominated = candidate.base.map { version <= $0 } ?? (version < candidate.version)
                }
            }
            return dominated
        }
        return absorbs(name, record.name) && absorbs(serialNumber, record.serialNumber)
            && absorbs(valueInDollars, record.valueInDollars) && absorbs(dateCreated, record.dateCreatedMilliseconds)
            && absorbs(photo, record.image)
    }
}
