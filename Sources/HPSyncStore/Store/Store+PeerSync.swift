import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// When each pull and push with each peer last succeeded or failed: what `status` shows and
/// `status --check` alerts on.
public struct PeerSyncState: Sendable, Equatable {
    public var peer: String
    public var direction: SyncDirection
    /// Milliseconds since 1970.
    public var lastSuccessAt: Int64?
    public var lastFailureAt: Int64?
    /// The message of the last failure, kept until a later success clears it.
    public var lastError: String?
    /// When this store, serving, last completed a session in which the peer pulled (`.pull`) or
    /// pushed (`.push`). Milliseconds since 1970.
    public var lastServedAt: Int64?

    /// The latest successful session of either kind: ours with the peer, or the peer's with us.
    public var lastSyncedAt: Int64? {
        [lastSuccessAt, lastServedAt].compactMap { $0 }.max()
    }
}

extension Store {
    /// Records a successful run; clears the last error of that peer and direction.
    ///
    /// `peerClock` is the peer's clock as its Hello told it, given when it differed from this
    /// store's by more than the allowed skew: the run is then recorded at the earlier of the two
    /// clocks. What `gc` infers from a sync (every version the peer stamps later is stamped
    /// after it) holds only for a time the peer's clock has reached; on a clock a day ahead, a
    /// sync recorded at this clock's time would let `gc` set a horizon a day ahead, below which
    /// the other nodes' new items count as collected deletions.
    package func recordSyncSuccess(peer: String, direction: SyncDirection, peerClock: UInt64? = nil) throws {
        try record(Outcome.success, peer: peer, direction: direction, message: nil, peerClock: peerClock)
    }

    /// Records that the peer completed a session this store served (`direction` is the peer's
    /// intent: it pulled from us or pushed to us), for `status` and the gc clamp; `peerClock` as
    /// for `recordSyncSuccess`.
    package func recordServed(peer: String, direction: SyncDirection, peerClock: UInt64? = nil) throws {
        try record(Outcome.served, peer: peer, direction: direction, message: nil, peerClock: peerClock)
    }

    /// Records a failed run and its message.
    package func recordSyncFailure(peer: String, direction: SyncDirection, message: String) throws {
        try record(Outcome.failure, peer: peer, direction: direction, message: String(message.prefix(1000)))
    }

    /// The recorded outcomes of listed peers, by peer name then direction.
    public func peerSyncStates() throws -> [PeerSyncState] {
        try read { db in
            let names = Set(try String.fetchAll(db, PeerRecord.select(PeerRecord.Columns.name)))
            return try PeerSyncRecord.order(PeerSyncRecord.Columns.peerName, PeerSyncRecord.Columns.direction)
                .fetchAll(db)
                .filter { names.contains($0.peerName) }
                .compactMap { record in
                    guard let direction = SyncDirection(rawValue: record.direction) else { return nil }
                    return PeerSyncState(
                        peer: record.peerName, direction: direction, lastSuccessAt: record.lastSuccessAt,
                        lastFailureAt: record.lastFailureAt, lastError: record.lastError,
                        lastServedAt: record.lastServedAt)
                }
        }
    }

    /// Writes one outcome in one statement: the row is made if missing (its other columns
    /// NULL) and only the outcome's own columns change. Every pull, push and served session ends
    /// here; GRDB's fetch and `save` of the record built, prepared and ran two or three queries
    /// for it.
    private func record(
        _ outcome: String, peer: String, direction: SyncDirection, message: String?, peerClock: UInt64? = nil
    ) throws {
        let now = Int64(min(clock.nowMilliseconds(), peerClock ?? .max))
        try write { db in
            let statement = try RawStatement(db, sql: outcome)
            statement.bind(peer, at: 1)
            statement.bind(direction.rawValue, at: 2)
            statement.bind(now, at: 3)
            if let message { statement.bind(message, at: 4) }
            _ = try statement.step()
        }
    }

    /// The upserts of `record`: ?1 peer, ?2 direction, ?3 now, ?4 the failure's message.
    private enum Outcome {
        static let success = """
            INSERT INTO peerSync (peerName, direction, lastSuccessAt) VALUES (?1, ?2, ?3)
            ON CONFLICT(peerName, direction) DO UPDATE SET lastSuccessAt = ?3, lastError = NULL
            """
        static let served = """
            INSERT INTO peerSync (peerName, direction, lastServedAt) VALUES (?1, ?2, ?3)
            ON CONFLICT(peerName, direction) DO UPDATE SET lastServedAt = ?3
            """
        static let failure = """
            INSERT INTO peerSync (peerName, direction, lastFailureAt, lastError) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(peerName, direction) DO UPDATE SET lastFailureAt = ?3, lastError = ?4
            """
    }
}

/// What the sync engine needs to see of a store's configuration and clock.
extension Store {
    /// The clock guard: why a version made elsewhere is refused (stamped more than the allowed
    /// skew ahead of this store's clock), or nil when it may be applied.
    package func clockGuardRefusal(_ version: Version) -> String? {
        clockGuardRefusal(version, now: clock.nowMilliseconds())
    }

    func clockGuardRefusal(_ version: Version, now: UInt64) -> String? {
        let stamped = version.stamp.milliseconds
        guard stamped > now &+ configuration.maxClockSkewMilliseconds else { return nil }
        return "stamped \((stamped - now) / 1000) s in the future by node \(version.origin.short), beyond the "
            + "allowed clock skew of \(configuration.maxClockSkewMilliseconds / 1000) s. That node's clock is or "
            + "was ahead: fix it there; if it is right again, run `hp-sync clock reset --yes` there (its future "
            + "edits come back stamped now). The record is retried at the next sync"
    }

    /// How far ahead of this store's clock a received stamp may be.
    package var maxClockSkewMilliseconds: UInt64 { configuration.maxClockSkewMilliseconds }

    /// The largest image this store accepts.
    package var maxImageBytes: Int64 { configuration.maxImageBytes }

    /// This store's wall clock (injected in tests), in milliseconds since 1970.
    package func nowMilliseconds() -> UInt64 { clock.nowMilliseconds() }

    /// Whether this store has no item rows and no GC horizon (whose virtual tombstone every
    /// key without a row would meet): a version received now has nothing here to merge with.
    package func hasNothingToMergeWith() throws -> Bool {
        try read { db in
            guard try MetaRecord.load(db).gcHorizon.virtualTombstone == nil else { return false }
            return try !(Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item)") ?? false)
        }
    }

    /// Records how far a peer store has been synced, in one transaction of its own.
    package func setCheckpoint(_ update: CheckpointUpdate) throws {
        _ = try applyRemote([], checkpoint: update)
    }
}

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

/// The peers this node trusts, pinned by node ID.
extension Store {
    /// Adds a peer; its name and node ID must both be new.
    public func addPeer(_ peer: Peer) throws {
        guard Peer.isValidName(peer.name) else { throw StoreError.invalidPeerName(peer.name) }
        try write { db in
            let clash = try PeerRecord.filter(
                PeerRecord.Columns.name == peer.name || PeerRecord.Columns.nodeID == Data(peer.nodeID.bytes)
            ).fetchCount(db)
            guard clash == 0 else { throw StoreError.peerExists(peer.name) }
            try PeerRecord(peer, addedAt: Int64(clock.nowMilliseconds())).insert(db)
            try PeerSyncRecord.forget(peer: peer.name, db)
        }
    }

    /// Removes the peer called `name` and its sync history; an unknown name is an error.
    public func removePeer(named name: String) throws {
        let removed = try write { db in
            try PeerSyncRecord.forget(peer: name, db)
            // What this node kept of a blind peer goes with it: added again, it starts over.
            if let record = try PeerRecord.fetchOne(db, key: name) {
                for table in ["blindMirror", "blindPeerState", "blindPack", "blindDamagedPhoto"] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE peerNode = ?", arguments: [record.nodeID])
                }
            }
            return try PeerRecord.deleteOne(db, key: name)
        }
        guard removed else { throw StoreError.unknownPeer(name) }
    }

    /// Changes a peer's address (`.some(nil)` clears it) and/or permission in place, keeping its
    /// node ID, checkpoints and sync history; returns the peer as it now is.
    public func updatePeer(
        named name: String, address: String?? = nil, permission: PeerPermission? = nil, blind: Bool? = nil
    ) throws -> Peer {
        try write { db in
            guard var record = try PeerRecord.fetchOne(db, key: name) else { throw StoreError.unknownPeer(name) }
            if let address { record.address = address }
            if let permission { record.permission = permission.rawValue }
            if let blind { record.blind = blind }
            try record.update(db)
            return try record.peer()
        }
    }

    /// All peers, by name.
    public func peers() throws -> [Peer] {
        try read { db in try PeerRecord.order(PeerRecord.Columns.name).fetchAll(db).map { try $0.peer() } }
    }

    public func peer(named name: String) throws -> Peer? {
        try read { db in try PeerRecord.fetch(db, name: name)?.peer() }
    }

    public func peer(nodeID: NodeID) throws -> Peer? {
        try read { db in try PeerRecord.fetch(db, nodeID: Data(nodeID.bytes))?.peer() }
    }
}
