import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// The sink's reads during a full reconciliation (`ReconcileStep`, applied by `RemoteApply`).
extension Store {
    /// The horizon of the reconciliation in progress with `source`, or nil.
    package func reconciliationInProgress(source: StoreID) throws -> VersionStamp? {
        try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT horizon FROM reconcile WHERE peerStoreID = ?", arguments: [Data(source.bytes)]
            ).map { VersionStamp(rawValue: UInt64(bitPattern: $0)) }
        }
    }

    /// How many live items the final page of a reconciliation with `source` at `horizon` will
    /// delete: those stamped before the horizon that no page listed (`countRecorded`: the pages
    /// an earlier transaction recorded count as listed) and that are not in `alsoListed`.
    package func reconciliationVictimCount(
        source: StoreID, horizon: VersionStamp, countRecorded: Bool, alsoListed: [ItemKey]
    ) throws -> Int {
        try read { db in
            let recorded =
                countRecorded
                ? "AND NOT EXISTS (SELECT 1 FROM reconcileListed r WHERE r.peerStoreID = ? AND r.key = item.key)" : ""
            let stamp = Int64(bitPattern: horizon.rawValue)
            var arguments: StatementArguments = [stamp]
            if countRecorded { arguments += [Data(source.bytes)] }
            var count =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM item WHERE deleted = 0 AND stamp < ? \(recorded)",
                    arguments: arguments) ?? 0
            for chunk in stride(from: 0, to: alsoListed.count, by: 500) {
                let keys = alsoListed[chunk..<min(chunk + 500, alsoListed.count)].map(\.rawValue)
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
                var listed = arguments
                listed += StatementArguments(keys)
                count -=
                    try Int.fetchOne(
                        db,
                        sql:
                            "SELECT count(*) FROM item WHERE deleted = 0 AND stamp < ? \(recorded) AND key IN (\(marks))",
                        arguments: listed) ?? 0
            }
            return count
        }
    }
}
