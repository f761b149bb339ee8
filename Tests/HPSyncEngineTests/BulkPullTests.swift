import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Testing

@testable import HPSyncEngine

/// A bulk pull: no merge lookups where the store began empty, batches that grow, a commit at
/// least every interval, and `durable_seq` that says only what is committed.
@Suite struct BulkPullTests {
    typealias Machine = SinkStateMachineTests

    /// A clock the test moves by hand.
    final class ManualClock: @unchecked Sendable {
        var now: UInt64 = 0
    }

    static func items(_ count: Int) -> [Item] {
        (0..<count).map { _ in Machine.item(.random(), at: 10, deleted: true) }
    }

    @Test func aStoreThatBeganEmptyReadsNoRowsForKeysTheSessionNeverCommitted() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.startsEmpty = true
        var driver = Machine.Driver(configuration)
        let pages = Machine.pages(Self.items(6), perPage: 2)
        for page in pages { _ = try driver.feed(page) }
        #expect(driver.reads.isEmpty)
        #expect(driver.machine.isFinished)
    }

    /// `entries_ahead` is the source's word: a huge one must neither trap on overflow nor
    /// allocate a filter beyond its cap.
    @Test func aHugeAnnouncedEntryCountGetsAFilterOfBoundedSize() throws {
        #expect(SessionKeys(capacity: .max).bitCount == SessionKeys.maxBits)
        #expect(SessionKeys(capacity: -1).bitCount == 1 << 16)
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.startsEmpty = true
        var driver = Machine.Driver(configuration)
        var pages = Machine.pages(Self.items(4), perPage: 2)
        pages[0].entriesAhead = .max
        for page in pages { _ = try driver.feed(page) }
        #expect(driver.machine.isFinished)
        #expect(try #require(driver.machine.sessionKeys).bitCount == SessionKeys.maxBits)
    }

    @Test func aKeyListedAgainIsReadOnceItsFirstChangeIsCommitted() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.startsEmpty = true
        var driver = Machine.Driver(configuration)
        let key = ItemKey.random()
        let other = Machine.item(.random(), at: 10, deleted: true)
        let first = ManifestPage(
            entries: [Machine.entry(Machine.item(key, at: 10, deleted: true), seq: 1)], throughSeq: 1, isFinal: false)
        let again = ManifestPage(
            entries: [
                Machine.entry(other, seq: 2), Machine.entry(Machine.item(key, at: 20, deleted: true), seq: 3),
            ], throughSeq: 3, isFinal: true)
        _ = try driver.feed(first)
        _ = try driver.feed(again)
        // Only the key this session committed is read; the merge rule meets its first change.
        #expect(driver.reads == [[key]])
        #expect(driver.local[key]?.version == Machine.version(20))
        #expect(driver.local[other.key] != nil)
    }

    @Test func aStoreWithRowsReadsEveryKey() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var driver = Machine.Driver(configuration)
        let page = Machine.pages(Self.items(3), perPage: 3)[0]
        _ = try driver.feed(page)
        #expect(driver.reads == [page.entries.map(\.key)])
    }

    @Test func aBulkPullsBatchesGrowUpToTheBulkSize() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.startsEmpty = true
        var driver = Machine.Driver(configuration, batches: BatchPolicy(commitEvery: 2, bulkLimit: 8))
        for page in Machine.pages(Self.items(40), perPage: 2) { _ = try driver.feed(page) }
        #expect(driver.commits.map(\.batch.records.count) == [2, 4, 8, 8, 8, 8, 2])
    }

    /// 40 entries in pages of 2, batches of up to 8, a tail of 4: once 36 are listed, the 6
    /// held commit at once (in the background), so the final commit holds the last 4, not 8
    /// and then 2. Without the source's announcement the batches are as before.
    static let tailCases: [(announced: Int64, batches: [Int])] = [
        (40, [2, 4, 8, 8, 8, 6, 4]), (0, [2, 4, 8, 8, 8, 8, 2]),
    ]

    @Test(arguments: tailCases)
    func theBatchBeforeTheAnnouncedTailCommitsSoTheFinalCommitIsSmall(announced: Int64, batches: [Int]) throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.startsEmpty = true
        var driver = Machine.Driver(configuration, batches: BatchPolicy(commitEvery: 2, bulkLimit: 8, tailEntries: 4))
        var pages = Machine.pages(Self.items(40), perPage: 2)
        pages[0].entriesAhead = announced
        for page in pages { _ = try driver.feed(page) }
        #expect(driver.commits.map(\.batch.records.count) == batches)
        #expect(driver.commits.map(\.wait) == batches.indices.map { $0 == batches.count - 1 })
    }

    @Test func aPullIntoAStoreWithRowsKeepsItsBatchSize() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var driver = Machine.Driver(configuration, batches: BatchPolicy(commitEvery: 2, bulkLimit: 8))
        for page in Machine.pages(Self.items(8), perPage: 2) { _ = try driver.feed(page) }
        #expect(driver.commits.map(\.batch.records.count) == [2, 2, 2, 2])
    }

    @Test func aBatchCommitsOnceItHasGatheredForTheIntervalAndDurableSeqWaitsForTheCommit() throws {
        let clock = ManualClock()
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var driver = Machine.Driver(configuration, batches: BatchPolicy(commitEvery: 100, interval: 50)) { clock.now }
        let pages = Machine.pages(Self.items(8), perPage: 2)
        clock.now = 1_000
        #expect(Machine.durableSeq(try driver.feed(pages[0])) == 0)
        clock.now = 1_040
        #expect(Machine.durableSeq(try driver.feed(pages[1])) == 0)
        #expect(driver.commits.isEmpty)
        clock.now = 1_050
        // The interval has passed: the batch goes to the committer, and PageDone still says
        // nothing is durable until the committer reports it.
        #expect(Machine.durableSeq(try driver.feed(pages[2])) == 0)
        #expect(driver.commits.map(\.batch.records.count) == [6])
        #expect(driver.commits.map(\.wait) == [false])
        // The next batch's interval starts with its first page.
        clock.now = 1_060
        #expect(Machine.durableSeq(try driver.feed(pages[3])) == 8)
        #expect(driver.commits.map(\.batch.records.count) == [6, 2])
    }
}
