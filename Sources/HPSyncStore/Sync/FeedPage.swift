import HPSyncModel

/// A page of the change feed as a source sends it (`Store.feedPage(after:limit:)`).
package struct FeedPage: Sendable {
    package var entries: [ChangeEntry]
    /// The current record of each live entry.
    package var records: [ItemKey: Item]
    /// The feed's last seq in the same snapshot.
    package var lastSeq: Int64
    /// When asked for (`feedPage(after:limit:counting:)`): what `feedCounts(after:)` would say
    /// for the same start, in the same snapshot.
    package var counts: FeedCounts?
}

/// How many feed entries come after a seq, how many of them are tombstones, and the bytes of
/// the live ones' images (`Store.feedCounts(after:)`).
package struct FeedCounts: Sendable, Equatable {
    package var entries: Int64
    package var tombstones: Int64
    package var imageBytes: Int64
}
