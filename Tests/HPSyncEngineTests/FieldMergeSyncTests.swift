import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import HPSyncTransfer
import Testing

@testable import HPSyncEngine

/// Field merge over real sessions (protocol version 5, Protocol.md 5.9).
@Suite struct FieldMergeSyncTests {
    /// Pulls with the client offering at most `maxVersion`.
    @discardableResult
    static func pull(_ client: TestNode, from server: TestNode, maxVersion: UInt32 = ProtocolLimits.maxVersion)
        throws -> SyncReport
    {
        try Sync.session(client, server, .pipe) { channel in
            var hooks = EngineTestHooks()
            hooks.maxVersion = maxVersion
            return try SyncClient(store: client.store, logger: quietLogger, testHooks: hooks).pull(
                over: channel, serverNodeID: server.nodeID, peerName: server.name)
        } wrap: {
            $0
        }
    }

    /// Two nodes that pull from each other, sharing one clock (advanced between edits).
    func pair() throws -> (TestNode, TestNode, TestClock) {
        let clock = TestClock()
        let laptop = try TestNode("laptop", clock: clock)
        let desktop = try TestNode("desktop", clock: clock)
        try laptop.allow(desktop)
        try desktop.allow(laptop)
        return (laptop, desktop, clock)
    }

    /// Both set the guitar's photo, the laptop first (`jpeg(1)`, which loses), then sync both ways.
    func photoClash() throws -> (TestNode, TestNode, TestClock, Item) {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar")
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        try laptop.setImage(guitar.key, jpeg(1))
        clock.advance(milliseconds: 10)
        try desktop.setImage(guitar.key, jpeg(2))
        try Sync.pull(laptop, from: desktop)
        try Sync.pull(desktop, from: laptop)
        return (laptop, desktop, clock, guitar)
    }

    @Test(arguments: Transport.allCases) func theGuitarKeepsBothEdits(_ transport: Transport) throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 0)
        try Sync.pull(desktop, from: laptop, over: transport)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(name: "Fender Stratocaster"))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 1_200))
        try Sync.pull(desktop, from: laptop, over: transport)
        try Sync.pull(laptop, from: desktop, over: transport)
        for node in [laptop, desktop] {
            let item = try #require(try node.store.item(guitar.key))
            #expect(item.name == "Fender Stratocaster")
            #expect(item.valueInDollars == 1_200)
            #expect(try node.store.conflictCount() == 0)
        }
        #expect(try laptop.store.mergeState(guitar.key) == desktop.store.mergeState(guitar.key))
        // Converged: neither side has anything for the other.
        #expect(try Sync.pull(desktop, from: laptop, over: transport).recordsTransferred == 0)
        #expect(try Sync.pull(laptop, from: desktop, over: transport).recordsTransferred == 0)
    }

    @Test func aClashIsListedOnBothUntilAnEditResolvesIt() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar")
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(name: "Strat"))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(name: "Telecaster"))
        try Sync.pull(desktop, from: laptop)
        try Sync.pull(laptop, from: desktop)
        for node in [laptop, desktop] {
            #expect(try node.store.item(guitar.key)?.name == "Telecaster")
            let conflicts = try node.store.conflicts()
            #expect(conflicts.map(\.losing) == [.text("Strat")])
        }
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(name: "Strat"))
        #expect(try laptop.store.conflictCount() == 0)
        try Sync.pull(desktop, from: laptop)
        #expect(try desktop.store.conflictCount() == 0)
        #expect(try desktop.store.item(guitar.key)?.name == "Strat")
        try Sync.pull(laptop, from: desktop)
        #expect(try laptop.store.mergeState(guitar.key) == desktop.store.mergeState(guitar.key))
    }

    /// What a source sends (the stored compact form, unread) is the state a node reads: one
    /// form, conflicts in the order the wire lists them, whatever order the store keeps them in
    /// (a clash of the value and of the photo: the table sorts "photo" first).
    @Test func theFormASourceSendsIsTheStateItHolds() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 1)
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(valueInDollars: 2))
        try laptop.setImage(guitar.key, jpeg(1))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 3))
        try desktop.setImage(guitar.key, jpeg(2))
        try Sync.pull(desktop, from: laptop)
        let state = try #require(try desktop.store.mergeState(guitar.key))
        #expect(state.listedConflicts.map(\.field) == [.valueInDollars, .photo])
        let sent = try #require(try desktop.store.records([guitar.key]).first)
        var read = state.item
        read.mergeState = state
        #expect(sent.mergeFields == read.mergeFields)
        #expect(sent == read)
        #expect(sent.mergeState == state)
    }

    /// A session of an older version is exactly that version's (Protocol.md 9, 5.9 "Older
    /// peers"): no merge digest in the manifest, and every record a whole record or a tombstone
    /// without fields, even from a store whose items hold field versions, conflicts and the
    /// fields a tombstone keeps. (An independent client found both on the wire of version-1 and
    /// version-4 sessions.)
    @Test func anOlderSessionCarriesNoFieldMergeData() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 1)
        let amp = try laptop.add("Amp", value: 1)
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(name: "Fender"))
        _ = try laptop.store.edit(amp.key, ItemEdit(valueInDollars: 2))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(name: "Gibson"))
        _ = try desktop.store.edit(amp.key, ItemEdit(name: "Marshall"))
        try Sync.pull(laptop, from: desktop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.delete([amp.key])
        #expect(try laptop.store.conflictCount() == 1)
        #expect(try laptop.store.mergeState(amp.key) != nil, "the tombstone keeps its fields")
        let old = try TestNode("old", clock: clock)
        try laptop.allow(old)
        var digests: [UInt64] = []
        var withFields: [ItemKey] = []
        var records = 0
        _ = try Sync.session(old, laptop, .pipe) { channel in
            var hooks = EngineTestHooks()
            hooks.maxVersion = 4
            let observed = ObservingChannel(channel) { frame in
                guard case .message(let message) = frame else { return }
                switch message {
                case .manifestPage(let page): digests += page.entries.map(\.mergeDigest)
                case .records(let items):
                    records += items.count
                    withFields += items.filter { $0.mergeFields != nil || $0.joined }.map(\.key)
                default: break
                }
            }
            return try SyncClient(store: old.store, logger: quietLogger, testHooks: hooks).pull(
                over: observed, serverNodeID: laptop.nodeID, peerName: laptop.name)
        } wrap: {
            $0
        }
        #expect(records == 1, "the tombstone comes with the manifest")
        #expect(digests.count == 2 && digests.allSatisfy { $0 == 0 }, "\(digests)")
        #expect(withFields.isEmpty, "\(withFields)")
        #expect(try old.store.item(guitar.key)?.name == laptop.store.item(guitar.key)?.name)
        #expect(try old.store.item(amp.key)?.deleted == true)
    }

    /// A CSV row (which names no version) is a local edit of the cells it changes, on the store's
    /// own versions of those fields: a date changed in a spreadsheet and a value set on another
    /// node both survive, with no clash; and a row that revives a deleted item edits each field on
    /// the version its deletion kept, so a concurrent edit elsewhere is a clash that is listed,
    /// not lost. (An independent client found both imported as whole records, bases unknown.)
    @Test func aCSVRowEditsOnlyTheCellsItChanges() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 100)
        let amp = try laptop.add("Amp", value: 50)
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 121))
        _ = try laptop.store.delete([amp.key])
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(amp.key, ItemEdit(name: "Marshall"))
        clock.advance(milliseconds: 10)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rows-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: file) }
        let date = DateText.iso8601(milliseconds: 1_700_000_000_000)
        try """
        key,name,dateCreated,valueInDollars
        \(guitar.key.rawValue),Guitar,\(date),100
        \(amp.key.rawValue),Amp head,\(date),50

        """.write(to: file, atomically: true, encoding: .utf8)
        _ = try laptop.store.importCSV(from: file, imagesDirectory: nil)
        try Sync.pull(laptop, from: desktop)
        try Sync.pull(desktop, from: laptop)
        for node in [laptop, desktop] {
            let item = try #require(try node.store.item(guitar.key))
            #expect(item.valueInDollars == 121, "the other node's value survives on \(node.name)")
            #expect(item.dateCreatedMilliseconds == 1_700_000_000_000)
            let revived = try #require(try node.store.item(amp.key))
            #expect(!revived.deleted)
            #expect(revived.name == "Amp head", "the later edit wins on \(node.name)")
            let conflicts = try node.store.conflicts()
            #expect(conflicts.map(\.key) == [amp.key], "\(conflicts)")
            #expect(conflicts.first?.field == .name)
        }
    }

    /// An unversioned record is stamped when it is applied, above whatever came first: here a
    /// record of the same key in the same file, stamped a day ahead (an import has no clock
    /// guard). The stamp reserved before the apply lies below it, and the whole import used to
    /// fail on a stale edit.
    @Test func anUnversionedRecordAfterANewerOneOfItsKeyStillApplies() throws {
        let (laptop, desktop, _) = try pair()
        let lamp = try laptop.add("Lamp", value: 5)
        let ahead = VersionStamp(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000) + 86_400_000)
        let file = try Self.exportFile(
            """
            {"key": "\(lamp.key.rawValue)", "name": "Ahead", "valueInDollars": 5, "dateCreatedMilliseconds": 1000,
             "stamp": \(ahead.rawValue), "origin": "\(desktop.nodeID)", "deleted": false},
            {"key": "\(lamp.key.rawValue)", "name": "Desk lamp", "valueInDollars": 5, "dateCreatedMilliseconds": 1000}
            """)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try laptop.store.importPreview(from: file, csv: false).updated == [lamp.key, lamp.key])
        _ = try laptop.store.importJSON(from: file, imagesDirectory: nil)
        let item = try #require(try laptop.store.item(lamp.key))
        #expect(item.name == "Desk lamp")
        #expect(item.version.stamp > ahead)
    }

    /// A preview counts what the import does: an unversioned record equal to the item is an
    /// empty edit, which changes nothing.
    @Test func aPreviewSkipsAnUnversionedRecordEqualToTheItem() throws {
        let (laptop, _, _) = try pair()
        let lamp = try laptop.add("Lamp", value: 5)
        let file = try Self.exportFile(
            """
            {"key": "\(lamp.key.rawValue)", "name": "Lamp", "valueInDollars": 5,
             "dateCreatedMilliseconds": \(lamp.dateCreatedMilliseconds)}
            """)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try laptop.store.importPreview(from: file, csv: false).isEmpty)
        #expect(try laptop.store.importJSON(from: file, imagesDirectory: nil).isEmpty)
    }

    /// A CSV row without image columns revives a deleted item with the photo its deletion kept,
    /// copied from the trash folder, even when `--images` names a folder without it.
    @Test func aCSVRevivalTakesTheKeptPhotoFromTheTrash() throws {
        let (laptop, _, _) = try pair()
        let lamp = try laptop.add("Lamp", value: 5, image: jpeg(3))
        _ = try laptop.store.delete([lamp.key])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("images-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("rows.csv")
        defer { try? FileManager.default.removeItem(at: folder) }
        try "key,name\n\(lamp.key.rawValue),Lamp again\n".write(to: file, atomically: true, encoding: .utf8)
        let changes = try laptop.store.importCSV(from: file, imagesDirectory: folder)
        #expect(changes.imagesMissing.isEmpty)
        let item = try #require(try laptop.store.item(lamp.key))
        #expect(!item.deleted && item.name == "Lamp again" && item.valueInDollars == 5)
        #expect(item.image == lamp.image)
        #expect(laptop.imageBytes(lamp.key) == jpeg(3))
    }

    /// An unversioned tombstone is a local delete: the tombstone keeps the fields and the photo
    /// (copied to the trash folder) that a revival brings back, and a second one changes nothing.
    @Test func anUnversionedTombstoneKeepsWhatARevivalBringsBack() throws {
        let (laptop, _, _) = try pair()
        let lamp = try laptop.add("Lamp", value: 5, image: jpeg(4))
        let file = try Self.exportFile(#"{"key": "\#(lamp.key.rawValue)", "name": "", "deleted": true}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try laptop.store.importJSON(from: file, imagesDirectory: nil)
        #expect(try laptop.store.item(lamp.key)?.deleted == true)
        let kept = try #require(try laptop.store.mergeState(lamp.key)?.fieldsShown)
        #expect(kept.name == "Lamp" && kept.valueInDollars == 5 && kept.image == lamp.image)
        #expect(try laptop.store.importJSON(from: file, imagesDirectory: nil).isEmpty)
        let csv = file.deletingPathExtension().appendingPathExtension("csv")
        defer { try? FileManager.default.removeItem(at: csv) }
        try "key,name\n\(lamp.key.rawValue),Lamp\n".write(to: csv, atomically: true, encoding: .utf8)
        _ = try laptop.store.importCSV(from: csv, imagesDirectory: nil)
        #expect(try laptop.store.item(lamp.key)?.image == lamp.image)
        #expect(laptop.imageBytes(lamp.key) == jpeg(4))
    }

    static func exportFile(_ items: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).json")
        try """
        {"format": "hp-sync-export", "version": 1, "items": [
        \(items)
        ]}
        """.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A peer of version 4 merges whole records: the newer record wins, as before field merge.
    @Test func aVersion4SessionMergesWholeRecords() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 0)
        try Self.pull(desktop, from: laptop, maxVersion: 4)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(name: "Fender Stratocaster"))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 1_200))
        try Self.pull(laptop, from: desktop, maxVersion: 4)
        let item = try #require(try laptop.store.item(guitar.key))
        #expect(item.valueInDollars == 1_200)
        #expect(item.name == "Guitar")
    }

    /// Three nodes, one of which syncs in version 4 only (every session with it is record-level):
    /// after every pair has synced both ways until nothing moves, all three hold one item. The
    /// case the property with a version-4 node found (`FieldMergePropertyTests`), with real
    /// sessions: the laptop and the desktop join to the old node's name and the desktop's value
    /// at the desktop's version, which the old node holds with the name it lost to the desktop's
    /// record; record-level sessions compare versions only, so without the restamp before a
    /// version-4 session (Protocol.md 5.9 "Older peers") nothing would move again.
    @Test func aVersion4PeerInTheMixConverges() throws {
        let (laptop, desktop, clock) = try pair()
        let old = try TestNode("old", clock: clock)
        for node in [laptop, desktop] {
            try node.allow(old)
            try old.allow(node)
        }
        let guitar = try laptop.add("Guitar", value: 0)
        try Sync.pull(desktop, from: laptop)
        try Self.pull(old, from: laptop, maxVersion: 4)
        clock.advance(milliseconds: 10)
        _ = try old.store.edit(guitar.key, ItemEdit(name: "Old name"))
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 1_200))
        // The laptop takes the old node's record whole (newer); the old node takes the
        // desktop's whole (newer still), losing its own rename there.
        try Self.pull(laptop, from: old, maxVersion: 4)
        try Self.pull(old, from: desktop, maxVersion: 4)
        let desktopVersion = try #require(try desktop.store.item(guitar.key)).version
        try Sync.pull(laptop, from: desktop)
        try Sync.pull(desktop, from: laptop)
        // Joined at the desktop's version, with the old node's name: flagged on both.
        for node in [laptop, desktop] {
            let item = try #require(try node.store.records([guitar.key]).first)
            #expect(item.version == desktopVersion && item.name == "Old name" && item.joined)
        }
        for _ in 0..<2 {
            try Sync.pull(laptop, from: desktop)
            try Sync.pull(desktop, from: laptop)
            for node in [laptop, desktop] {
                try Self.pull(old, from: node, maxVersion: 4)
                try Self.pull(node, from: old, maxVersion: 4)
            }
        }
        let items = try [laptop, desktop, old].map { try #require(try $0.store.item(guitar.key)) }
        #expect(items[0] == items[1])
        #expect(items[0].name == "Old name" && items[0].valueInDollars == 1_200)
        #expect(items[0].version > desktopVersion, "restamped before the old node pulled")
        #expect(items[2] == items[0], "the version-4 node holds \(items[2]), the others \(items[0])")
        for node in [laptop, desktop] {
            #expect(try node.store.conflictCount() == 0)
            #expect(try node.store.conflicts().isEmpty)
            #expect(try node.store.records([guitar.key]).first?.joined == false)
        }
        #expect(try laptop.store.mergeState(guitar.key) == desktop.store.mergeState(guitar.key))
    }

    /// A deletion on one node and an edit of another field on the other: the newer wins the
    /// item, and a revival brings back every field, the deleting node's own edits included.
    @Test func aRevivalBringsBackTheFieldsATombstoneKept() throws {
        let (laptop, desktop, clock) = try pair()
        let guitar = try laptop.add("Guitar", value: 0)
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.edit(guitar.key, ItemEdit(serialNumber: .set("SN-1")))
        clock.advance(milliseconds: 10)
        _ = try laptop.store.delete([guitar.key])
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 7))
        try Sync.pull(desktop, from: laptop)
        try Sync.pull(laptop, from: desktop)
        for node in [laptop, desktop] {
            let item = try #require(try node.store.item(guitar.key))
            #expect(!item.deleted)
            #expect(item.serialNumber == "SN-1")
            #expect(item.valueInDollars == 7)
        }
    }

    /// A tombstone keeps its photo (Protocol.md 5.9 "A tombstone's photo"), and a sink that
    /// never held the item asks for those bytes with the page's images. When the source has
    /// lost its copy and answers "missing", the tombstone still applies (the pull finishes
    /// clean), and the revival that a later edit on a third node brings shows the photo again,
    /// with bytes from the node that sends the revival.
    @Test func aTombstoneWhosePhotoTheSourceLostStillAppliesAndTheRevivalBringsIt() throws {
        let clock = TestClock()
        let laptop = try TestNode("laptop", clock: clock)
        let desktop = try TestNode("desktop", clock: clock)
        let hub = try TestNode("hub", clock: clock)
        for (one, other) in [(laptop, desktop), (hub, laptop), (hub, desktop)] {
            try one.allow(other)
            try other.allow(one)
        }
        let guitar = try laptop.add("Guitar", image: jpeg(1))
        try Sync.pull(desktop, from: laptop)
        clock.advance(milliseconds: 10)
        _ = try laptop.store.delete([guitar.key])
        clock.advance(milliseconds: 10)
        _ = try desktop.store.edit(guitar.key, ItemEdit(valueInDollars: 7))
        // The laptop's kept copy of the photo is gone (a disk error, a hand in the trash folder).
        let kept = laptop.directory.appendingPathComponent("store/trash/\(SHA256.hash(jpeg(1)).hex)")
        #expect(FileManager.default.fileExists(atPath: kept.path), "the delete kept the photo")
        try FileManager.default.removeItem(at: kept)

        let report = try Sync.pull(hub, from: laptop)
        #expect(report.refused.isEmpty && report.withheld.isEmpty)
        #expect(try hub.store.item(guitar.key)?.deleted == true)
        #expect(
            !FileManager.default.fileExists(
                atPath: hub.directory.appendingPathComponent("store/trash/\(SHA256.hash(jpeg(1)).hex)").path),
            "nothing to keep")
        #expect(try hub.store.verify(repair: false).isClean)

        try Sync.pull(hub, from: desktop)
        let revived = try #require(try hub.store.item(guitar.key))
        #expect(!revived.deleted && revived.valueInDollars == 7)
        #expect(hub.imageBytes(guitar.key) == jpeg(1))
        #expect(try hub.store.verify(repair: false).isClean)
    }

    /// A photo clash: the node whose photo lost keeps its bytes for the Conflicts page, and
    /// taking it back is an edit that every node then follows.
    @Test func aLosingPhotoIsKeptAndCanBeTakenBack() throws {
        let (laptop, desktop, clock, guitar) = try photoClash()
        let first = SHA256.hash(jpeg(1))
        for node in [laptop, desktop] {
            #expect(try node.store.item(guitar.key)?.image?.digest == SHA256.hash(jpeg(2)))
            #expect(try node.store.conflicts().map(\.losing) == [.photo(ImageRef(digest: first, size: 3000))])
        }
        let kept = try #require(try laptop.store.conflictPhotoFile(first))
        #expect(Array(try Data(contentsOf: kept)) == jpeg(1))
        #expect(try desktop.store.conflictPhotoFile(first) == nil, "the desktop never had those bytes")

        let losing = try #require(try laptop.store.conflicts().first).losingVersion
        clock.advance(milliseconds: 10)
        _ = try laptop.store.takeLosingValue(guitar.key, field: .photo, losing: losing)
        try Sync.pull(desktop, from: laptop)
        for node in [laptop, desktop] {
            #expect(try node.store.conflictCount() == 0)
            #expect(node.imageBytes(guitar.key) == jpeg(1))
            #expect(try node.store.verify(repair: false).isClean)
        }
    }

    /// `verify` checks the losing photo a node keeps: damaged, it is a problem that a live photo
    /// with the same digest heals; a node that never held those bytes has nothing to check.
    @Test func verifyChecksTheKeptLosingPhoto() throws {
        let (laptop, desktop, _, _) = try photoClash()
        let first = SHA256.hash(jpeg(1))
        let kept = try #require(try laptop.store.conflictPhotoFile(first))
        #expect(try laptop.store.verify(repair: false).isClean)
        #expect(try desktop.store.verify(repair: false).isClean)

        try Data(repeating: 0, count: 3000).write(to: kept)
        let found = try laptop.store.verify(repair: false)
        #expect(found.mismatchedConflictPhotos == ["trash/\(first.hex)"])
        #expect(found.problems.contains { $0.contains("lost a clash") })
        #expect(try laptop.store.conflictPhotoFile(first) == nil, "damaged bytes are not shown")
        #expect(try laptop.store.verify(repair: true).mismatchedConflictPhotos.count == 1, "no copy to heal from")

        let amp = try laptop.add("Amp")
        try laptop.setImage(amp.key, jpeg(1))
        let repaired = try laptop.store.verify(repair: true)
        #expect(repaired.isClean)
        #expect(repaired.repaired.contains { $0.contains("lost a clash") })
        #expect(Array(try Data(contentsOf: kept)) == jpeg(1))
    }
}
