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
    package func recordSyncSuccess(peer: String, direction: SyncDirection) throws {
        try record(Outcome.success, peer: peer, direction: direction, message: nil)
    }

    /// Records that the peer completed a session this store served (`direction` is the peer's
    /// intent: it pulled from us or pushed to us), for `status` and the gc clamp.
    package func recordServed(peer: String, direction: SyncDirection) throws {
        try record(Outcome.served, peer: peer, direction: direction, message: nil)
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
    private func record(_ outcome: String, peer: String, direction: SyncDirection, message: String?) throws {
        let now = Int64(clock.nowMilliseconds())
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
