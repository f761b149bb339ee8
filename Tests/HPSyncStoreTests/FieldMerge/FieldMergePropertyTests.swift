import Foundation
import HPSyncModel
import HPSyncTesting
import PropertyBased
import Testing

/// How many histories: `HP_SYNC_MERGE_HISTORIES`, else 4,000.
let mergeHistoryCount: Int = {
    let text = ProcessInfo.processInfo.environment["HP_SYNC_MERGE_HISTORIES"]
    return text.flatMap(Int.init) ?? 4_000
}()

let mergeStats = Locked(MergeCounts())
let olderPeerStats = Locked(MergeCounts())

@Suite("Field merge converges")
struct FieldMergePropertyTests {
    /// Random histories on three nodes (edits of random fields, deletions, revivals, skewed
    /// clocks, random sync order on a mesh, a line or a hub), then syncs until nothing changes:
    /// every node holds the same states, each field its latest edit, and the open conflicts are
    /// exactly the concurrent edits of a field.
    @Test(arguments: 0..<2)
    func randomHistoriesConverge(shard: Int) async throws {
        await runShard(into: mergeStats, olderPeer: false)
        let stats = mergeStats.current
        print(
            "field merge (after shard \(shard)): \(stats.histories) histories, \(stats.edits) edits, "
                + "\(stats.deletions) deletions, \(stats.revivals) revivals, \(stats.syncs) syncs, "
                + "\(stats.clashesSeen) conflicts reaching a node, \(stats.clashesOpen) open at the end, "
                + "\(stats.resolved) resolved by an edit, \(stats.algebraChecks) join-law checks")
        #expect(stats.edits > 0)
    }

    /// The same with one node a version-4 peer (whole records, record-level syncs with it;
    /// Protocol.md 5.9 "Older peers"), which the others send to only after restamping their
    /// joined items: after the final syncs every node holds each item at its latest change (a
    /// deletion, or an edit whose fields it holds), every field a value some edit set, and all
    /// nodes the same items. It prints how many fields ended without their latest edit, how many
    /// restamps were made, and how many histories diverged.
    @Test(arguments: 0..<2)
    func randomHistoriesWithAVersion4PeerConverge(shard: Int) async throws {
        await runShard(into: olderPeerStats, olderPeer: true)
        let stats = olderPeerStats.current
        print(
            "field merge with a version-4 peer (after shard \(shard)): \(stats.histories) histories, "
                + "\(stats.edits) edits (\(stats.olderEdits) whole records by the version-4 peer), "
                + "\(stats.deletions) deletions, \(stats.revivals) revivals, \(stats.syncs) syncs "
                + "(\(stats.recordSyncs) record-level), \(stats.fieldsLost) fields without their latest edit at the end, "
                + "\(stats.restamps) joined items restamped, \(stats.diverged) histories whose nodes hold different items"
        )
        #expect(stats.olderEdits > 0 && stats.recordSyncs > 0)
        // Without the restamp, about 1 history in 40 diverged: a join of two version-5 states
        // can hold, at the version of one of its records, other values than that record, which
        // a version-4 peer holding that record at that version never replaces.
        #expect(stats.diverged == 0)
    }

    /// Half of the histories (one shard): random steps, the final syncs, the checks; their
    /// counts go to `stats`. A divergence (`MergeViolation.diverged`) is counted, the first one
    /// printed; any other violation is an issue.
    func runShard(into stats: Locked<MergeCounts>, olderPeer: Bool) async {
        await propertyCheck(count: (mergeHistoryCount + 1) / 2, input: Gen.int(in: 0...Int.max)) { seed in
            var simulation = MergeSimulation(seed: UInt64(seed), olderPeer: olderPeer)
            let steps = Int.random(in: 5...60, using: &simulation.generator)
            let peers = olderPeer ? ", version-4 peer" : ""
            do {
                for _ in 0..<steps { try simulation.step() }
                _ = try simulation.settle()
                if olderPeer { try simulation.checkWithOlderPeer() } else { try simulation.check() }
            } catch let violation as MergeViolation where violation.diverged {
                simulation.counts.diverged = 1
                if stats.current.diverged == 0 { print("seed \(seed)\(peers): \(violation)") }
            } catch {
                Issue.record("seed \(seed)\(peers): \(error)")
            }
            simulation.counts.histories = 1
            stats.withLock { $0.add(simulation.counts) }
        }
    }
}
