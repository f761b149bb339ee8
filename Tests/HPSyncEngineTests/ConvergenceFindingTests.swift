import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Histories `ConvergencePropertyTests` found and shrank, kept as focused tests.
@Suite struct ConvergenceFindingTests {
    /// Runs `steps` over three nodes on one clock, the final round, and the property's checks.
    static func run(_ steps: [HistoryStep]) throws -> HistoryRun {
        let run = try HistoryRun(History(nodeCount: 3, offsets: [0, 0, 0, 0, 0], steps: steps))
        for step in steps { try run.perform(step) }
        try run.fixClocks()
        try run.fullRound()
        return run
    }

    /// n1 adds k1 (t+0), n0 adds k1 too (t+74, not having seen n1's: every base unknown) and
    /// deletes it (t+74), n1 edits k1's name (t+111, base its own add). By 5.9 the join is live
    /// (the name edit is above the deletion), with the name of n1's edit (n0's add's name as an
    /// open conflict) and every other field from n0's add (a newer version, base unknown, which
    /// dominates n1's add). Every node ends with n1's add's value, date and photo instead.
    @Test func aConcurrentAddThatWasDeletedLosesItsFieldsToAnOlderAdd() throws {
        try withKnownIssue("the tombstone of n0's add does not bring its fields into the join (found by the property)")
        {
            let run = try Self.run([
                HistoryStep(kind: .add, node: 1, peer: 0, slot: 1, parameter: 0),
                HistoryStep(kind: .add, node: 0, peer: 0, slot: 1, parameter: 2),
                HistoryStep(kind: .delete, node: 0, peer: 0, slot: 1, parameter: 0),
                HistoryStep(kind: .edit, node: 1, peer: 0, slot: 1, parameter: 1),
            ])
            let (expected, conflicts) = run.expected
            let item = try #require(expected.first)
            #expect(item.valueInDollars == 2 && !item.deleted, "the oracle's answer, as 5.9 reads")
            for node in run.nodes {
                #expect(try node.snapshot() == expected, "\(node.name):\n  \(run.transcript)")
                #expect(Set(try node.store.conflicts()) == conflicts)
            }
        }
    }
}
