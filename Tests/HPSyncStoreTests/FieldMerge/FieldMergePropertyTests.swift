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

@Suite("Field merge converges")
struct FieldMergePropertyTests {
    /// Random histories on three nodes (edits of random fields, deletions, revivals, skewed
    /// clocks, random sync order on a mesh, a line or a hub), then syncs until nothing changes:
    /// every node holds the same states, each field its latest edit, and the open conflicts are
    /// exactly the concurrent edits of a field.
    @Test(arguments: 0..<2)
    func randomHistoriesConverge(shard: Int) async throws {
        await propertyCheck(count: (mergeHistoryCount + 1) / 2, input: Gen.int(in: 0...Int.max)) { seed in
            var simulation = MergeSimulation(seed: UInt64(seed))
            let steps = Int.random(in: 5...60, using: &simulation.generator)
            do {
                for _ in 0..<steps { try simulation.step() }
                _ = try simulation.settle()
                try simulation.check()
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
            simulation.counts.histories = 1
            mergeStats.withLock { $0.add(simulation.counts) }
        }
        let stats = mergeStats.current
        print(
            "field merge (after shard \(shard)): \(stats.histories) histories, \(stats.edits) edits, "
                + "\(stats.deletions) deletions, \(stats.revivals) revivals, \(stats.syncs) syncs, "
                + "\(stats.clashesSeen) conflicts reaching a node, \(stats.clashesOpen) open at the end, "
                + "\(stats.resolved) resolved by an edit, \(stats.algebraChecks) join-law checks")
        #expect(stats.edits > 0)
    }
}
