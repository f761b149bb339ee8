import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Several processes on one store")
struct ConcurrencyTests {
    @Test func twoStoreInstancesWriteAtOnce() async throws {
        let dir = TempDirectory()
        let first = try Fixtures.makeStore(dir)
        let second = try Fixtures.reopen(first)
        let image = dir.file("i.jpg", jpeg(7))
        let shared = try first.add(ItemDraft(name: "shared"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in [first, second] {
                group.addTask {
                    for index in 0..<25 {
                        let item = try store.add(
                            ItemDraft(name: "item \(index)", imageFile: index % 5 == 0 ? image : nil))
                        _ = try store.edit(item.key, ItemEdit(valueInDollars: Int64(index)))
                        _ = try store.setImage(shared.key, from: image)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try first.items().count == 51)
        #expect(try first.lastSeq == 1 + 2 * 25 * 3)
        let seqs = try first.changes(after: 0, limit: 1000).map(\.seq)
        #expect(Set(seqs).count == seqs.count)
        #expect(try first.verify(repair: false).isClean)
    }
}
