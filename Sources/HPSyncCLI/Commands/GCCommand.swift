import ArgumentParser
import HPSyncModel
import HPSyncStore

/// `hp-sync gc [--older-than 180d] [--force] [--dry-run]`: drops old tombstones.
struct GCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc", abstract: "Drop tombstones (records of deletions) older than --older-than.",
        discussion: """
            Never drops a tombstone newer than the oldest last successful sync (pull, push, or a \
            session this store served) of any listed peer, unless --force; a listed peer that never \
            synced stops gc entirely (exit 80). Unknown keys older than the dropped tombstones stay \
            deleted: a peer that syncs again later cannot bring them back. A peer whose checkpoint \
            predates them is sent a full listing on its next sync and moves the items it still has, \
            but this store no longer does, to its trash.
            """)

    @OptionGroup var options: StoreOptions

    @Option(help: ArgumentHelp("Drop tombstones older than this (180d, 26w, 12h).", valueName: "duration"))
    var olderThan = Age(argument: "180d")!

    @Flag(help: "Ignore peers that have not synced since (they get a full reconciliation later).") var force = false

    @Flag(name: [.customShort("n"), .long], help: "Show what would be dropped and drop nothing.") var dryRun = false

    @Flag(help: "Print JSON: dropped, kept, cutoff, horizon, the peer that held it back.") var json = false

    struct Document: Encodable {
        var dryRun: Bool
        var dropped: Int
        var kept: Int
        var cutoff: String
        var horizon: String?
        var heldBackBy: String?
        var heldBackByLastSync: String?
        var forcedPast: [String]
    }

    func run() throws {
        let (lock, store) = try options.lockAndOpenStore()
        try withExtendedLifetime(lock) {
            let now = Int64(store.nowMilliseconds())
            let requested = now - olderThan.milliseconds
            let cutoff = GCCutoff.decide(
                requested: requested, peers: try store.peers().map(\.name), states: try store.peerSyncStates(),
                force: force)
            guard let milliseconds = cutoff.cutoffMilliseconds else {
                throw GCRefused(neverSynced: cutoff.neverSynced)
            }
            let outcome = try store.collectGarbage(
                before: VersionStamp(milliseconds: UInt64(max(milliseconds, 0))), dryRun: dryRun)
            if json {
                return try Output.json(
                    Document(
                        dryRun: dryRun, dropped: outcome.dropped, kept: outcome.kept,
                        cutoff: DateText.iso8601(milliseconds: milliseconds),
                        horizon: outcome.horizon.isSet
                            ? DateText.iso8601(milliseconds: Int64(outcome.horizon.stamp.milliseconds)) : nil,
                        heldBackBy: cutoff.heldBackBy?.peer,
                        heldBackByLastSync: Output.isoDate(cutoff.heldBackBy?.lastSyncedAt),
                        forcedPast: force ? cutoff.neverSynced : []))
            }
            Output.write(Self.describe(outcome, cutoff: milliseconds, heldBackBy: cutoff.heldBackBy, dryRun: dryRun))
            if force, !cutoff.neverSynced.isEmpty {
                Output.warning(
                    "forced past \(cutoff.neverSynced.joined(separator: ", ")), which never synced with this store")
            }
        }
    }

    static func describe(
        _ outcome: GCOutcome, cutoff: Int64, heldBackBy: (peer: String, lastSyncedAt: Int64)?, dryRun: Bool
    ) -> String {
        let verb = dryRun ? "would drop" : "dropped"
        var lines = [
            "\(verb) \(outcome.dropped) tombstone\(outcome.dropped == 1 ? "" : "s") older than "
                + "\(DateText.iso8601(milliseconds: cutoff)); kept \(outcome.kept) newer"
        ]
        if outcome.horizon.isSet {
            lines.append(
                "GC horizon: \(DateText.iso8601(milliseconds: Int64(outcome.horizon.stamp.milliseconds))) "
                    + "(seq \(outcome.horizon.seq)); a peer whose checkpoint is older gets a full reconciliation")
        }
        if let heldBackBy {
            lines.append(
                "held back by peer \(heldBackBy.peer), last synced "
                    + "\(DateText.iso8601(milliseconds: heldBackBy.lastSyncedAt)): to go further, sync "
                    + "\(heldBackBy.peer), remove it (`hp-sync peer rm \(heldBackBy.peer)`) or use --force")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `gc` dropped nothing because a listed peer never synced with this store (exit 80).
struct GCRefused: Error, CustomStringConvertible {
    var neverSynced: [String]
    var description: String {
        let names = neverSynced.joined(separator: ", ")
        return "gc refused: peer\(neverSynced.count == 1 ? "" : "s") \(names) never synced with this store, so "
            + "nothing was dropped; sync \(neverSynced.count == 1 ? "it" : "them") first, remove "
            + "\(neverSynced.count == 1 ? "it" : "them") with `hp-sync peer rm NAME`, or use --force"
    }
}
