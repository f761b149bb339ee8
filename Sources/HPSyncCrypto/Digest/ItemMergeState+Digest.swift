import HPSyncModel

extension ItemMergeState {
    /// The merge digest a version-5 manifest entry carries (Protocol.md 5.9): 0 for a whole
    /// record, which its version identifies, else `candidatesDigest`.
    public var mergeDigest: UInt64 { isWholeRecord ? 0 : candidatesDigest }

    /// The first 8 bytes of the SHA-256 of `digestInput`, big-endian (1 when they are 0): with
    /// the item's version and whether it is deleted, it identifies the state.
    public var candidatesDigest: UInt64 {
        let digest = SHA256.hash(digestInput).bytes
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return value == 0 ? 1 : value
    }
}

extension Item {
    /// The merge digest of this version: its merge state's, or 0 for a whole record.
    public var mergeDigest: UInt64 { mergeState?.mergeDigest ?? 0 }

    /// The digest of this version's candidates, a whole record's included: a newer tombstone
    /// whose merge digest equals it keeps exactly this item's fields (Protocol.md 5.9).
    public var candidatesDigest: UInt64 { (mergeState ?? ItemMergeState(record: self)).candidatesDigest }
}
