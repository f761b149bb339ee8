import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import PropertyBased
import Testing

@testable import HPSyncStore

@Suite("Merge is order-independent")
struct MergePropertyTests {
    @Test func anyOrderGivesTheSameState() async throws {
        let keys = (0..<3).map { _ in ItemKey.random() }
        let origins = [Fixtures.nodeA, Fixtures.nodeB]
        await propertyCheck(count: 20, input: Gen.int(in: 0...1_000_000)) { seed in
            var generator = SplitMix64(seed: UInt64(seed))
            var versions: [Item] = []
            for index in 0..<12 {
                let key = keys[Int.random(in: 0..<keys.count, using: &generator)]
                // The counter makes each version unique, as real stamps from one origin are.
                let stamp = VersionStamp(
                    milliseconds: 1_000 + UInt64.random(in: 0...4, using: &generator), counter: UInt16(index)
                ).rawValue
                let origin = origins[Int.random(in: 0...1, using: &generator)]
                versions.append(
                    Fixtures.remoteItem(
                        key, name: "v\(index)", stamp: stamp, origin: origin, deleted: Bool.random(using: &generator)))
            }
            let shuffled = versions.shuffled(using: &generator)
            let dirOne = TempDirectory()
            let dirTwo = TempDirectory()
            let one = try! Fixtures.makeStore(dirOne)
            let two = try! Fixtures.makeStore(dirTwo)
            for item in versions { _ = try! one.applyRemote([IncomingRecord(item: item)], checkpoint: nil) }
            _ = try! two.applyRemote(shuffled.map { IncomingRecord(item: $0) }, checkpoint: nil)
            #expect(try! one.items(includeDeleted: true) == two.items(includeDeleted: true))
            withExtendedLifetime((dirOne, dirTwo)) {}
        }
    }
}
