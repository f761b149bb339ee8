import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import PropertyBased
import Testing

@testable import HPSyncEngine

/// The mass-deletion guard judges the deletions that arrive, not what the source announces
/// (issue 12 §2).
@Suite struct DeletionGuardTests {
    /// A source with `live` items a sink has pulled, of which it then deletes `deleted`.
    struct Setup {
        let source: TestNode
        let sink: TestNode
        let keys: [ItemKey]

        init(live: Int, deleted: Int, added: Int = 0, seed: Int = 0, in base: URL? = nil) throws {
            source = try TestNode("source", in: base)
            sink = try TestNode("sink", in: base)
            try source.allow(sink)
            var keys: [ItemKey] = []
            for index in 0..<live { keys.append(try source.add("item \(index)").key) }
            self.keys = keys
            try Sync.pull(sink, from: source)
            // Deletions in an order of the seed's choosing, interleaved with additions.
            var order = keys
            var state = UInt64(truncatingIfNeeded: seed) &* 6_364_136_223_846_793_005 &+ 1
            for index in order.indices.reversed() where index > 0 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                order.swapAt(index, Int(state >> 33) % (index + 1))
            }
            for (index, key) in order.prefix(deleted).enumerated() {
                _ = try source.store.delete([key])
                if index < added { try source.add("new \(index)") }
            }
            for index in min(deleted, added)..<added { try source.add("new \(index)") }
        }

        /// How many of the original items the sink has deleted.
        func deletedAtSink() throws -> Int {
            try keys.filter { try sink.store.item($0)?.deleted == true }.count
        }

        /// A guarded pull from a source that announces `announce(honest)` tombstones.
        func pull(
            rule: MassDeleteGuard, pageSize: Int, announce: @escaping @Sendable (Int64) -> Int64
        ) throws -> SyncReport {
            var hooks = EngineTestHooks()
            hooks.announcing = announce
            hooks.pageSize = pageSize
            let dialer = Dialer(sink, to: source, testHooks: hooks)
            defer { dialer.finish() }
            return try runPull(sink, from: source, over: dialer, peerName: "source", guard: rule)
        }
    }

    @Test func aSourceThatAnnouncesNoDeletionsAndSendsThirtyIsStopped() throws {
        let setup = try Setup(live: 40, deleted: 30)
        #expect {
            try setup.pull(rule: MassDeleteGuard(), pageSize: 7) { _ in 0 }
        } throws: { error in
            guard let refused = error as? MassDeleteRefused else { return false }
            return refused.description.contains("announced only 0 deletions") && refused.stoppedAfter != nil
        }
        let applied = try setup.deletedAtSink()
        #expect(MassDeleteGuard().violation(deleting: applied, liveItems: 40) == nil, "\(applied) applied")
        #expect(try setup.sink.store.verify(repair: false).isClean)
        // What was applied is committed with its checkpoint: an allowed pull finishes the rest.
        let dialer = Dialer(setup.sink, to: setup.source)
        defer { dialer.finish() }
        let rest = try runPull(setup.sink, from: setup.source, over: dialer, peerName: "source", guard: nil)
        #expect(rest.deleted.count == 30 - applied)
        #expect(try setup.sink.snapshot() == setup.source.snapshot())
    }

    /// For any announcement, honest or not, and any history: the verdict is the guard's verdict
    /// over the real deletions, and a refused pull leaves at most what the guard allows applied.
    @Test(.shrinking) func theVerdictIsTheVerdictOverTheRealDeletions() async throws {
        let generator = zip(
            Gen.int(in: 1...40), Gen.int(in: 0...100), Gen.int(in: 0...4), Gen.int(in: 1...12),
            zip(Gen.int(in: 0...3), Gen.int(in: 0...40), Gen.int(in: -1...25), Gen.int(in: 0...1000)))
        let stats = Locked((histories: 0, refused: 0, lies: 0))
        let base = HistoryRun.memoryFolder("deletion-guard")
        defer { if let base { try? FileManager.default.removeItem(at: base) } }
        await propertyCheck(count: guardHistoryCount, input: generator) { input in
            let (live, percent, added, pageSize, (lieKind, lie, cap, seed)) = input
            let deleted = live * percent / 100
            let setup = try Setup(live: live, deleted: deleted, added: added, seed: seed, in: base)
            let rule = MassDeleteGuard(maxDelete: cap < 0 ? nil : cap)
            // 0: honest; 1: says none; 2: says some other number; 3: says far more.
            let announce: @Sendable (Int64) -> Int64 = { honest in
                switch lieKind {
                case 0: return honest
                case 1: return 0
                case 2: return Int64(lie)
                default: return honest + 1000
                }
            }
            let expected = rule.violation(deleting: deleted, liveItems: live)
            var refused = false
            do {
                let report = try setup.pull(rule: rule, pageSize: pageSize, announce: announce)
                #expect(report.deleted.count == deleted)
                #expect(try setup.sink.snapshot() == setup.source.snapshot())
            } catch is MassDeleteRefused {
                refused = true
            }
            #expect(refused == (expected != nil), "live \(live), deleted \(deleted), cap \(cap), lie \(lieKind)")
            if refused {
                let applied = try setup.deletedAtSink()
                #expect(rule.violation(deleting: applied, liveItems: live) == nil, "\(applied) applied of \(deleted)")
                #expect(try setup.sink.store.verify(repair: false).isClean)
            }
            stats.withLock {
                $0.histories += 1
                if refused { $0.refused += 1 }
                if lieKind != 0 { $0.lies += 1 }
            }
        }
        let totals = stats.current
        print(
            "deletion guard: \(totals.histories) histories, \(totals.lies) with a false announcement, "
                + "\(totals.refused) refused, 0 wrong verdicts unless reported above")
    }
}

/// How many guard histories to check: `HP_SYNC_GUARD_HISTORIES`, else 150.
let guardHistoryCount: Int = {
    let text = ProcessInfo.processInfo.environment["HP_SYNC_GUARD_HISTORIES"]
    return text.flatMap(Int.init) ?? 150
}()
