import Foundation
import GRDB
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
    public func recordSyncSuccess(peer: String, direction: SyncDirection) throws {
        let now = Int64(clock.nowMilliseconds())
        try write { db in
            var record = try fetchPeerSync(db, peer: peer, direction: direction)
            record.lastSuccessAt = now
            record.lastError = nil
            try record.save(db)
        }
    }

    /// Records that the peer completed a session this store served (`direction` is the peer's
    /// intent: it pulled from us or pushed to us), for `status` and the gc clamp.
    public func recordServed(peer: String, direction: SyncDirection) throws {
        let now = Int64(clock.nowMilliseconds())
        try write { db in
            var record = try fetchPeerSync(db, peer: peer, direction: direction)
            record.lastServedAt = now
            try record.save(db)
        }
    }

    /// Records a failed run and its message.
    public func recordSyncFailure(peer: String, direction: SyncDirection, message: String) throws {
        let now = Int64(clock.nowMilliseconds())
        try write { db in
            var record = try fetchPeerSync(db, peer: peer, direction: direction)
            record.lastFailureAt = now
            record.lastError = String(message.prefix(1000))
            try record.save(db)
        }
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

    private func fetchPeerSync(_ db: Database, peer: String, direction: SyncDirection) throws -> PeerSyncRecord {
        try PeerSyncRecord.fetchOne(db, key: ["peerName": peer, "direction": direction.rawValue])
            ?? PeerSyncRecord(peerName: peer, direction: direction.rawValue)
    }
}
