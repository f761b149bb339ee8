import HPSyncEngine
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@Suite struct ProgressBytesTests {
    /// The progress line shows the images' bytes, the figure the summary shows at the end.
    @Test(arguments: [SyncDirection.pull, .push])
    func progressCarriesTheImagesBytes(_ direction: SyncDirection) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let source = direction == .pull ? a : b
        for i in 0..<3 { try source.add("item \(i)", image: jpeg(UInt8(i), size: 5000)) }
        let updates = try RetryPolicyTests().progressUpdates(b, a, direction)
        #expect(updates.last?.images == 3)
        #expect(updates.last?.imageBytes == 15_000)
        #expect((updates.last?.bytes ?? 0) > 15_000, "the wire carries more than the images")
        // A pull learns the images' total from the first page, a push from its own feed.
        #expect(updates.allSatisfy { $0.totalImageBytes == 15_000 })
    }
}
