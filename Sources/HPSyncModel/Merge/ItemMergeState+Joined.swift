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
}
