import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 18: a source's first page carries the feed's counts (entries, tombstones, image bytes
/// ahead), read in the page's own snapshot: the page's rows are counted as read and only what
/// lies past them is counted by SQL. They must say exactly what `feedCounts(after:)` says.
@Suite("The first page's counts")
struct FeedCountsTests {
    /// 12 items, every third with an image, every fourth deleted after: a feed of 12 entries
    /// (the deletions move their items to the end of it).
    private func store(_ dir: TempDirectory) throws -> Store {
        let store = try Fixtures.makeStore(dir)
        var keys: [ItemKey] = []
        for index in 0..<12 {
            let image = index % 3 == 0 ? dir.file("\(index).jpg", jpeg(UInt8(index), size: 1000 + index)) : nil
            keys.append(try store.add(ItemDraft(name: "item \(index)", imageFile: image)).key)
        }
        _ = try store.delete(stride(from: 0, to: 12, by: 4).map { keys[$0] })
        return store
    }

    @Test(arguments: [(0, 5), (0, 12), (0, 20), (3, 4), (3, 9), (11, 1), (20, 5)])
    func countsMatchTheScanWhateverThePageHolds(from seq: Int, limit: Int) throws {
        let dir = TempDirectory()
        let store = try store(dir)
        let page = try store.feedPage(after: Int64(seq), limit: limit, counting: true)
        let scanned = try store.feedCounts(after: Int64(seq))
        #expect(page.counts == scanned)
        #expect(try store.feedPage(after: Int64(seq), limit: limit).counts == nil, "only when asked")
    }

    @Test func theCountsSeeTombstonesAndImageBytes() throws {
        let dir = TempDirectory()
        let store = try store(dir)
        let counts = try #require(try store.feedPage(after: 0, limit: 5, counting: true).counts)
        // Items 0, 4 and 8 deleted (0 had an image); 3, 6 and 9 keep theirs.
        #expect(counts == FeedCounts(entries: 12, tombstones: 3, imageBytes: Int64(1003 + 1006 + 1009)))
    }
}
