import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 14 §1: a pull heals image files lost since the last `verify`, found cheaply (a listing
/// and a stat each, no hashing) by `rememberMissingImages`.
@Suite struct ImageCheckTests {
    @Test func filesGoneOrOfTheWrongSizeAreRememberedToHeal() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let photos = (1...4).map { jpeg(UInt8($0), size: 100 * $0) }
        let items = try photos.enumerated().map { index, photo in
            try store.add(ItemDraft(name: "Item \(index)", imageFile: dir.file("\(index).jpg", photo)))
        }
        let plain = try store.add(ItemDraft(name: "No photo"))
        #expect(try store.rememberMissingImages() == 0)

        try FileManager.default.removeItem(at: store.imageFileURL(for: items[0].key))
        try Data(photos[1].prefix(10)).write(to: store.imageFileURL(for: items[1].key))
        // Same size, other bytes: only `verify` (which hashes) finds that.
        var rotten = photos[2]
        rotten[rotten.count / 2] ^= 0xFF
        try Data(rotten).write(to: store.imageFileURL(for: items[2].key))
        _ = try store.delete([items[3].key])

        // The finding half writes nothing (a pull runs it while it connects); the second records.
        let lost = try store.findMissingImages()
        #expect(Set(lost) == [items[0].key, items[1].key])
        #expect(try store.imagesToHeal().isEmpty)
        #expect(try store.rememberMissingImages(lost) == 2)
        let wanted = try store.imagesToHeal()
        #expect(Set(wanted.map(\.key)) == [items[0].key, items[1].key])
        #expect(Set(wanted.map(\.ref)) == [Fixtures.ref(photos[0]), Fixtures.ref(photos[1])])
        #expect(!wanted.contains { $0.key == plain.key })
        // What is remembered already is not counted again.
        #expect(try store.rememberMissingImages() == 0)
    }

    /// Measures the check at 2,000 images (the rows and files written directly: no fsync each).
    @Test func theCheckIsCheapAtTwoThousandImages() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let photo = jpeg(5, size: 2000)
        let keys = (0..<2000).map { _ in try! ItemKey(UUID().uuidString) }
        try store.write { db in
            for (index, key) in keys.enumerated() {
                let item = Fixtures.remoteItem(key, stamp: 1 << 16, image: Fixtures.ref(photo))
                try ItemRecord(item, seq: Int64(index + 1)).write(db)
            }
        }
        for key in keys { try Data(photo).write(to: store.imageFileURL(for: key)) }
        try FileManager.default.removeItem(at: store.imageFileURL(for: keys[1234]))

        let started = ContinuousClock.now
        let found = try store.rememberMissingImages()
        let elapsed = ContinuousClock.now - started
        print("rememberMissingImages over 2,000 images: \(elapsed)")
        #expect(found == 1)
        #expect(try store.imagesToHeal().map(\.key) == [keys[1234]])
        #expect(elapsed < .seconds(5), "a listing and 2,000 stats, no hashing")
    }
}
