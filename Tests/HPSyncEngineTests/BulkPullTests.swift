import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Testing

@testable import HPSyncEngine

/// A bulk pull: no merge lookups where the store began empty.
@Suite struct BulkPullTests {
    typealias Machine = SinkStateMachineTests

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
        #expect(driver.machine.state.isFinished)
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
}
