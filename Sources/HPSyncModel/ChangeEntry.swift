/// Which way a sync session moves changes, as seen from this store.
public enum SyncDirection: String, Sendable, Codable, CaseIterable {
    case pull, push
}

/// One entry of the change feed: the current version of a key, as of `seq`.
public struct ChangeEntry: Sendable, Hashable {
    public var key: ItemKey
    public var version: Version
    public var deleted: Bool
    public var seq: Int64
    /// Version 5: the digest of the key's merge state (`ItemMergeState.digestBytes`), or 0
    /// for a whole record, which its version alone identifies.
    public var mergeDigest: UInt64 = 0

    public init(key: ItemKey, version: Version, deleted: Bool, seq: Int64, mergeDigest: UInt64 = 0) {
        self.key = key
        self.version = version
        self.deleted = deleted
        self.seq = seq
        self.mergeDigest = mergeDigest
    }
}
