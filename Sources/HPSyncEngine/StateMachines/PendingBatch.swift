import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// What a sink has received and checked but not committed yet: the next transaction. A
/// version-1 sink commits one page's worth; a version-2 sink gathers pages until one of
/// `BatchPolicy`'s limits or the final page.
struct PendingBatch {
    var records: [IncomingRecord] = []
    var keys = Set<ItemKey>()
    var imageBytes: Int64 = 0
    /// Bytes an earlier page of this batch fetched, by digest: a later page naming the same
    /// image uses them instead of asking again.
    var images: [SHA256Digest: StagedImage] = [:]
    var reconcile: ReconcileStep?
    /// Whether applying may unlink or replace image files already in place (an existing key
    /// changes, or a reconciliation deletes): a later page must not copy from those meanwhile.
    var mayRemoveImages = false
    /// The entries of the pages held, applied or not: the batch commits once they reach
    /// `commitEvery`.
    var entries = 0
    /// The last page held: its `through_seq` (and the holds) give the batch's checkpoint.
    var lastPage: ManifestPage?
    /// When the batch's first page was held (`SinkStateMachine.uptime`).
    var startedAt: UInt64 = 0
    /// Temporaries of this batch, removed once it is committed or abandoned.
    var staged: [StagedImage] = []
    /// The newest stamp among the entries of the pages held, fetched or not: a version this
    /// store declined (its own is newer) still lives on the source, and `clock reset` must
    /// restamp above it.
    var newestRemoteStamp = VersionStamp.zero
    /// The lowest and highest stamps of the entries declined as older than this store's own
    /// versions: not kept here, they may still live on their makers (`ChangeClock.noteUnkept`).
    var declinedStamps: ClosedRange<VersionStamp>?

    /// One transaction's worth, as the committer writes it.
    struct Sealed {
        var records: [IncomingRecord]
        var checkpoint: CheckpointUpdate?
        var reconcile: ReconcileStep?
        var throughSeq: Int64
        var keys: Set<ItemKey>
        var mayRemoveImages: Bool
        var staged: [StagedImage]
        var newestRemoteStamp: VersionStamp
        var declinedStamps: ClosedRange<VersionStamp>?
    }

    /// Makes room for a batch of up to `entries` entries at once, instead of growing the records
    /// and keys by doubling (each step a copy, the old and new buffers alive together). The
    /// caller's bound is its own batch limit, never a number the source announced.
    mutating func reserve(entries: Int) {
        records.reserveCapacity(entries)
        keys.reserveCapacity(entries)
    }

    /// Adds one page's records, checked and with their images; `local` is this store's rows of
    /// the page's keys. Returns how many items they insert, update or delete here.
    mutating func add(_ incoming: [IncomingRecord], local: [ItemKey: Item]) -> Int {
        var items = 0
        for var record in incoming {
            let mine = local[record.item.key]
            record.likelyNew = mine == nil
            records.append(record)
            keys.insert(record.item.key)
            imageBytes += record.image?.ref.size ?? 0
            let liveHere = mine.map { !$0.deleted } ?? false
            if liveHere, mine?.image != nil { mayRemoveImages = true }
            // A tombstone for a key this store never had live records a deletion, not an item.
            if !record.item.deleted || liveHere { items += 1 }
        }
        return items
    }

    /// Adds a page's part in a reconciliation, which may delete items with images.
    mutating func add(_ step: ReconcileStep) {
        reconcile = reconcile.map { $0.followed(by: step) } ?? step
        mayRemoveImages = true
    }

    /// The transaction, with `checkpoint` (for its last page); nil when no page is held. Its
    /// records go in key order (a batch holds each key once): the store then reads and writes
    /// each leaf of its random-key index once, in order, instead of at random.
    mutating func sealed(checkpoint: CheckpointUpdate?) -> Sealed? {
        guard let lastPage else { return nil }
        var batch = sealed(throughSeq: lastPage.throughSeq)
        batch?.checkpoint = checkpoint
        return batch
    }

    /// The transaction without a checkpoint, reporting `throughSeq` as durable once committed;
    /// nil when it holds no record.
    mutating func sealed(throughSeq: Int64) -> Sealed? {
        guard lastPage != nil || !records.isEmpty else { return nil }
        Self.sortByKey(&records)
        return Sealed(
            records: records, checkpoint: nil, reconcile: reconcile, throughSeq: throughSeq, keys: keys,
            mayRemoveImages: mayRemoveImages, staged: staged, newestRemoteStamp: newestRemoteStamp,
            declinedStamps: declinedStamps)
    }

    /// Puts `records` in key order. Their keys' 128-bit values are sorted with their places
    /// (integers compared, not strings), then each record is swapped into place along the
    /// cycles of that order: a record is moved, never copied. Equal keys keep their order.
    static func sortByKey(_ records: inout [IncomingRecord]) {
        var order = [(high: UInt64, low: UInt64, index: Int)]()
        order.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            let value = record.item.key.orderValue
            order.append((value.high, value.low, index))
        }
        order.sort { ($0.high, $0.low, $0.index) < ($1.high, $1.low, $1.index) }
        // source[i]: where the record that belongs at i is now; settled places point to themselves.
        var source = order.map(\.index)
        for start in source.indices where source[start] != start {
            var place = start
            while source[place] != start {
                let next = source[place]
                records.swapAt(place, next)
                source[place] = place
                place = next
            }
            source[place] = place
        }
    }
}
