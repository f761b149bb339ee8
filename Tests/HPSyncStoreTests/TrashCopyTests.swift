import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// The trash's images are copies of their own: damage to a live photo in place does not reach
/// them, `verify` checks them, and a repair heals either side from an intact copy of the other.
@Suite struct TrashCopyTests {
    /// An item whose version a pull overwrote (its name only): the live photo stays, the trash
    /// keeps the old version with the same photo.
    struct Overwritten {
        let dir = TempDirectory()
        let store: Store
        let photo = jpeg(11, size: 900)
        let item: Item
        var live: URL { store.imageFileURL(for: item.key) }
        var trashed: URL { store.trashDirectory.appendingPathComponent(SHA256.hash(photo).hex) }

        init() throws {
            store = try Fixtures.makeStore(dir)
            item = try store.add(ItemDraft(name: "Clock", imageFile: dir.file("clock.jpg", photo)))
            _ = try store.applyRemote(
                [
                    IncomingRecord(
                        item: Fixtures.remoteItem(
                            item.key, name: "Clock v2", stamp: item.version.stamp.rawValue + 1,
                            image: Fixtures.ref(photo)))
                ], checkpoint: nil, keepReplaced: true)
        }
    }

    /// Overwrites one byte in the middle of `url` in place (same inode), as rot or a tool would.
    static func damageInPlace(_ url: URL) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: 450)
        try handle.write(contentsOf: Data([0xFF, 0x00, 0xFF]))
    }

    static func inode(_ url: URL) throws -> UInt64 {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? UInt64)
    }

    /// Trash files were hard links: damage to the live photo was damage to the trash.
    @Test func damageToTheLivePhotoDoesNotReachTheTrash() throws {
        let f = try Overwritten()
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
        try Self.damageInPlace(f.live)
        #expect(Fixtures.bytes(f.trashed) == f.photo)
        #expect(try f.store.restoreFromTrash(key: f.item.key).name == "Clock")
    }

    @Test func verifyFindsADamagedTrashImageAndHealsItFromTheLivePhoto() throws {
        let f = try Overwritten()
        try Self.damageInPlace(f.trashed)
        let report = try f.store.verify(repair: false)
        #expect(report.mismatchedTrashImages == ["trash/\(Fixtures.ref(f.photo).digest.hex)"])
        #expect(!report.isClean && report.imagesChecked == 2)
        #expect(report.problems.contains { $0.contains("trash image trash/") && $0.contains("--repair") })
        let repaired = try f.store.verify(repair: true)
        #expect(repaired.isClean, "\(repaired.problems)")
        #expect(repaired.repaired.contains { $0.hasPrefix("healed trash/") }, "\(repaired.repaired)")
        #expect(Fixtures.bytes(f.trashed) == f.photo)
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
    }

    @Test func aMissingTrashImageIsAProblemAndARepairPutsItBack() throws {
        let f = try Overwritten()
        try FileManager.default.removeItem(at: f.trashed)
        #expect(try f.store.verify(repair: false).missingTrashImages.count == 1)
        #expect(try f.store.verify(repair: true).isClean)
        #expect(Fixtures.bytes(f.trashed) == f.photo)
    }

    @Test func aRepairHealsTheLivePhotoFromTheTrash() throws {
        let f = try Overwritten()
        try Self.damageInPlace(f.live)
        #expect(try f.store.verify(repair: false).mismatchedImages == [f.item.key])
        let repaired = try f.store.verify(repair: true)
        #expect(repaired.isClean, "\(repaired.problems)")
        #expect(
            repaired.repaired.contains(
                "healed the image of \(f.item.key) from trash/\(Fixtures.ref(f.photo).digest.hex)"))
        #expect(Fixtures.bytes(f.live) == f.photo)
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
    }

    /// Stores trashed by earlier versions hold hard links: a repair makes each a copy.
    @Test func aRepairTurnsAnOldHardLinkIntoACopy() throws {
        let f = try Overwritten()
        try FileManager.default.removeItem(at: f.trashed)
        try FileManager.default.linkItem(at: f.live, to: f.trashed)
        #expect(try f.store.verify(repair: false).isClean, "a link is intact, only fragile")
        let repaired = try f.store.verify(repair: true)
        #expect(repaired.repaired.contains { $0.contains("hard link") }, "\(repaired.repaired)")
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
        try Self.damageInPlace(f.live)
        #expect(Fixtures.bytes(f.trashed) == f.photo)
    }

    /// A later pull that trashes the same photo again finds a hard link and replaces it too.
    @Test func trashingAgainReplacesAnOldHardLink() throws {
        let f = try Overwritten()
        try FileManager.default.removeItem(at: f.trashed)
        try FileManager.default.linkItem(at: f.live, to: f.trashed)
        let current = try #require(try f.store.item(f.item.key))
        _ = try f.store.applyRemote(
            [
                IncomingRecord(
                    item: Fixtures.remoteItem(
                        f.item.key, name: "Clock v3", stamp: current.version.stamp.rawValue + 1,
                        image: Fixtures.ref(f.photo)))
            ], checkpoint: nil, keepReplaced: true)
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
    }

    /// With no intact copy here, the bytes a peer sends by digest (`verify --repair --from`,
    /// through `heal`) put the trash image back as well as the live one.
    @Test func bytesFromAPeerHealTheTrashImageToo() throws {
        let f = try Overwritten()
        try Self.damageInPlace(f.trashed)
        try Self.damageInPlace(f.live)
        let wanted = try f.store.trashImagesToHeal()
        #expect(wanted == [ImageToHeal(key: f.item.key, ref: Fixtures.ref(f.photo))])
        let staged = try f.store.stageImage(copying: f.dir.file("from-peer", f.photo), expected: Fixtures.ref(f.photo))
        #expect(try f.store.heal(staged, for: wanted.map(\.key)) == [f.item.key])
        #expect(Fixtures.bytes(f.trashed) == f.photo && Fixtures.bytes(f.live) == f.photo)
        #expect(try Self.inode(f.trashed) != Self.inode(f.live))
        #expect(try f.store.trashImagesToHeal().isEmpty && f.store.verify(repair: false).isClean)
    }
}
