import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Local changes")
struct LocalChangeTests {
    @Test func everyChangeTakesTheNextSeq() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(try store.lastSeq == 0)
        let item = try store.add(ItemDraft(name: "Lamp", serialNumber: "S1", valueInDollars: 30))
        #expect(try store.lastSeq == 1)
        _ = try store.edit(item.key, ItemEdit(name: "Desk lamp", serialNumber: .clear))
        #expect(try store.lastSeq == 2)
        let edited = try #require(try store.item(item.key))
        #expect(edited.name == "Desk lamp" && edited.serialNumber == nil && edited.valueInDollars == 30)
        #expect(edited.version > item.version)
        _ = try store.delete([item.key])
        #expect(try store.lastSeq == 3)
        let feed = try store.changes(after: 0, limit: 10)
        #expect(feed.map(\.seq) == [3])
        #expect(feed.first?.deleted == true)
    }

    @Test func deleteOfSeveralKeysWithOneUnknownAppliesNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let a = try store.add(ItemDraft(name: "a")).key
        let b = try store.add(ItemDraft(name: "b")).key
        let unknown = ItemKey.random()
        #expect(throws: StoreError.unknownKey(unknown.rawValue)) { try store.delete([a, unknown, b]) }
        #expect(try store.items().count == 2)
        #expect(try store.lastSeq == 2)
        let changes = try store.delete([a, b])
        #expect(Set(changes.deleted) == [a, b])
        #expect(try store.items().isEmpty)
        #expect(try store.items(includeDeleted: true).count == 2)
        #expect(throws: StoreError.alreadyDeleted(a)) { try store.delete([a]) }
    }

    @Test func imagesAreCheckedForFormatAndSize() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(
            dir, configuration: StoreConfiguration(maxImageBytes: 100, sweepAgeSeconds: 0))
        let text = dir.file("notes.txt", Array("hello, not an image".utf8))
        #expect(throws: StoreError.notAnImage(path: text.path)) { try store.add(ItemDraft(name: "x", imageFile: text)) }
        let big = dir.file("big.jpg", jpeg(size: 200))
        #expect(throws: StoreError.self) { try store.add(ItemDraft(name: "x", imageFile: big)) }
        #expect(try store.items().isEmpty)
        #expect(Fixtures.imageFiles(store).isEmpty)
        let ok = dir.file("ok.png", Fixtures.png())
        let item = try store.add(ItemDraft(name: "x", imageFile: ok))
        #expect(item.image == Fixtures.ref(Fixtures.png()))
        #expect(Fixtures.bytes(store.imageFileURL(for: item.key)) == Fixtures.png())
        #expect(try store.imageFile(withDigest: item.image!.digest) == store.imageFileURL(for: item.key))
    }

    /// One read answers a page's digests: a file for each digest a live item's image has, the
    /// same file for the items that share one, none for a deleted item's or an unknown digest.
    @Test func imageFilesAreFoundForManyDigestsAtOnce() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let first = try store.add(ItemDraft(name: "a", imageFile: dir.file("a.jpg", jpeg(1))))
        let same = try store.add(ItemDraft(name: "b", imageFile: dir.file("b.jpg", jpeg(1))))
        let gone = try store.add(ItemDraft(name: "c", imageFile: dir.file("c.jpg", jpeg(2))))
        _ = try store.delete([gone.key])
        let unknown = Fixtures.ref(jpeg(3)).digest
        let digests = [unknown, gone.image!.digest, first.image!.digest, same.image!.digest]
        let files = try store.imageFiles(withDigests: digests)
        #expect(Set(files.keys) == [first.image!.digest])
        let file = try #require(files[first.image!.digest])
        #expect([store.imageFileURL(for: first.key), store.imageFileURL(for: same.key)].contains(file))
        #expect(try store.imageFiles(withDigests: []).isEmpty)
    }

    @Test func setAndRemoveImage() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x"))
        let first = try store.setImage(item.key, from: dir.file("1.jpg", jpeg(1)))
        #expect(first.image == Fixtures.ref(jpeg(1)))
        let second = try store.setImage(item.key, from: dir.file("2.jpg", jpeg(2)))
        #expect(Fixtures.bytes(store.imageFileURL(for: item.key)) == jpeg(2))
        #expect(second.version > first.version)
        let removed = try store.removeImage(item.key)
        #expect(removed.image == nil)
        #expect(Fixtures.imageFiles(store).isEmpty)
        #expect(try store.verify(repair: false).isClean)
    }

    @Test func namesAndSerialsAreLimited() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(throws: StoreError.self) { try store.add(ItemDraft(name: "")) }
        #expect(throws: StoreError.self) {
            try store.add(ItemDraft(name: String(repeating: "n", count: ItemLimits.maxNameBytes + 1)))
        }
        #expect(throws: StoreError.self) {
            try store.add(ItemDraft(name: "x", serialNumber: String(repeating: "s", count: 300)))
        }
    }

    @Test func createRefusesAnExistingStoreAndOpenNeedsOne() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(throws: StoreError.storeExists(path: store.directory.path)) { try Fixtures.makeStore(dir) }
        let missing = dir.url.appendingPathComponent("nothing")
        #expect(throws: StoreError.noStore(path: missing.path)) {
            try Store.open(at: missing, logger: quietLogger)
        }
        let reopened = try Fixtures.reopen(store)
        #expect(reopened.storeID == store.storeID && reopened.nodeID == store.nodeID)
        try reopened.setNodeID(Fixtures.nodeB)
        #expect(try Fixtures.reopen(store).nodeID == Fixtures.nodeB)
    }

    @Test func peers() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        try store.addPeer(Peer(name: "backup-1", nodeID: Fixtures.nodeB, address: "host:7878", permission: .readWrite))
        #expect(throws: StoreError.peerExists("other")) {
            try store.addPeer(Peer(name: "other", nodeID: Fixtures.nodeB))
        }
        #expect(throws: StoreError.invalidPeerName("-bad")) {
            try store.addPeer(Peer(name: "-bad", nodeID: Fixtures.nodeA))
        }
        #expect(try store.peer(nodeID: Fixtures.nodeB)?.name == "backup-1")
        #expect(try store.peers().map(\.permission) == [.readWrite])
        try store.removePeer(named: "backup-1")
        #expect(throws: StoreError.unknownPeer("backup-1")) { try store.removePeer(named: "backup-1") }
    }
}
