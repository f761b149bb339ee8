import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// Where a source starts listing its change feed for a sink, with no I/O: after the sink's
/// checkpoint as usual, from 0 with a reconciliation horizon when the sink missed collected
/// tombstones, or not at all when the sink would need that but speaks only version 1.
public enum ListingStart: Sendable, Equatable {
    /// Pages after this seq, without a horizon.
    case after(Int64)
    /// A full listing (from 0) whose every page carries `reconcile_horizon`.
    case reconcile(horizon: VersionStamp)
    /// The session's version cannot carry the reconciliation the sink needs.
    case needsReconciliation(horizon: VersionStamp)

    /// - Parameters:
    ///   - since: the sink's checkpoint, already checked against the store ID and highest seq
    ///     (0 when it does not count in this store or is beyond its history).
    ///   - horizon: the source store's GC horizon.
    ///   - version: the session's negotiated protocol version.
    package static func decide(since: Int64, horizon: GCHorizon, version: UInt32) -> ListingStart {
        guard horizon.isSet else { return .after(since) }
        let canReconcile = version >= ProtocolLimits.reconciliationVersion
        // A checkpoint below the highest collected seq may have missed a deletion the feed no
        // longer shows: only a full listing can tell the sink what is gone.
        if since > 0 && since < horizon.seq {
            return canReconcile ? .reconcile(horizon: horizon.stamp) : .needsReconciliation(horizon: horizon.stamp)
        }
        // A listing from 0 tells a version-2 sink what is gone too; version 1 gets it without.
        if since == 0 && canReconcile { return .reconcile(horizon: horizon.stamp) }
        return .after(since)
    }

    /// Where `store`, as the source, starts for a sink whose checkpoint in this store is
    /// `checkpoint` (nil when it has none here). A checkpoint beyond the highest seq means the
    /// store lost history (restored from an older copy): its seqs will be reused, so the sink
    /// must read everything again.
    public static func decide(for store: Store, checkpoint: Int64?, version: UInt32) throws -> ListingStart {
        var since: Int64 = 0
        if let checkpoint, checkpoint <= (try store.lastSeq) { since = checkpoint }
        return decide(since: since, horizon: try store.gcHorizon(), version: version)
    }

    /// The seq pages start after.
    public var since: Int64 {
        if case .after(let seq) = self { return seq }
        return 0
    }

    /// The horizon every page carries, if any.
    public var horizon: VersionStamp? {
        if case .reconcile(let horizon) = self { return horizon }
        return nil
    }

    /// Why a version-1 session is refused, for the Error message: `source` discarded deletions
    /// `sink` has not seen, and `upgrade` must speak version 2.
    public static func refusal(horizon: VersionStamp, source: String, sink: String, upgrade: String) -> String {
        "\(source) discarded deletions older than \(DateText.iso8601(milliseconds: Int64(horizon.milliseconds))) "
            + "that \(sink) has not seen; \(upgrade) speaking protocol version 2 (hp-sync with `gc`) is needed "
            + "for the full reconciliation this requires; nothing was sent"
    }
}
