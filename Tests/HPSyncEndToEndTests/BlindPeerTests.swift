import Foundation
import HPSyncCrypto
import HPSyncTesting
import Testing

/// Blind peers through the binary (issue 37, Protocol.md 5.8): a trusted node pushes to a blind
/// store that must hold nothing in the clear; a new node restores from it with only the recovery
/// key; tampered, withheld and rolled-back packs are detected; the mass-deletion guard holds.
@Suite(.serialized) struct BlindPeerTests {
    /// A trusted node `home` with items and photos, and a blind store `offsite` serving it.
    final class Offsite {
        let home: BinaryRunner
        let offsite: BinaryRunner
        var server: ServeProcess
        let homeID: String
        let offsiteID: String
        var names: [String] = []
        var serials: [String] = []
        var keys: [String] = []
        var photos: [[UInt8]] = []
        private var others: [BinaryRunner] = []

        init(items: Int = 6) throws {
            home = try BinaryRunner()
            offsite = try BinaryRunner()
            try #require(try home.run(["init"]).status == 0)
            let made = try offsite.run(["init", "--blind"])
            try #require(made.status == 0, "\(made.stderr)")
            homeID = try home.nodeID()
            offsiteID = try offsite.nodeID()
            for index in 0..<items {
                let name = "Heirloom-\(index)-\(UUID().uuidString.prefix(8))"
                let serial = "SER-\(index)-\(UUID().uuidString.prefix(6))"
                var arguments = ["add", "--name", name, "--serial", serial, "--value", "\(1000 + index)"]
                if index % 2 == 0 {
                    let photo = HPSyncTesting.jpeg(UInt8(index + 1), size: 20_000 + index * 7_919)
                    photos.append(photo)
                    arguments += ["--image", try home.file("photo\(index).jpg", photo).path]
                }
                let added = try home.run(arguments)
                try #require(added.status == 0, "\(added.stderr)")
                keys.append(added.text.trimmingCharacters(in: .whitespacesAndNewlines))
                names.append(name)
                serials.append(serial)
            }
            try #require(try offsite.run(["peer", "add", "home", homeID, "--allow", "read-write"]).status == 0)
            server = try ServeProcess(offsite)
            let added = try home.run(["peer", "add", "offsite", offsiteID, "--address", server.address, "--blind"])
            try #require(added.status == 0, "\(added.stderr)")
        }

        /// A new node that has only the recovery key, listed on the blind store by a shell there.
        func newNode(name: String = "newnode") throws -> BinaryRunner {
            let node = try BinaryRunner()
            others.append(node)
            let recovery = try home.run(["key", "show"]).text.split(separator: "\n")[0]
            let file = try node.file("recovery.txt", Array("\(recovery)\n".utf8))
            let made = try node.run(["init", "--recovery-key-file", file.path])
            try #require(made.status == 0, "\(made.stderr)")
            try #require(
                try offsite.run(["peer", "add", name, try node.nodeID(), "--allow", "read-write"]).status == 0)
            let added = try node.run(["peer", "add", "offsite", offsiteID, "--address", server.address, "--blind"])
            try #require(added.status == 0, "\(added.stderr)")
            return node
        }

        /// Pushes home's items, then restores a second node from the blind store: two trusted
        /// nodes that meet only there.
        func pushedAndRestored() throws -> BinaryRunner {
            try #require(try home.run(["push", "offsite"]).status == 0)
            let node = try newNode()
            try #require(try node.run(["pull", "offsite"]).status == 0)
            return node
        }

        /// Repairs the blind store after `finder` found damage there: the finder's push (which
        /// reports the packs it cannot read: exit 81) leaves the damaged packs out of the head,
        /// home's push stores what they held again, and a new node restores all of it, clean.
        /// Returns home's push.
        func repaired(by finder: BinaryRunner) throws -> BinaryRunner.Result {
            let dropping = try finder.run(["push", "offsite"])
            #expect(dropping.status == 81, "the push reports what it could not read: \(dropping.stderr)")
            let repaired = try home.run(["push", "offsite"])
            #expect(repaired.status == 0, "\(repaired.stderr)")
            let fresh = try newNode(name: "fresh")
            let clean = try fresh.run(["pull", "offsite"])
            #expect(clean.status == 0, "\(clean.stderr)")
            #expect(try Offsite.items(fresh) == Offsite.items(home))
            #expect(try fresh.run(["verify"]).status == 0)
            return repaired
        }

        /// The blind store's pack files, oldest first.
        func packFiles() throws -> [URL] {
            let folder = offsite.store.appendingPathComponent("packs")
            return try FileManager.default.contentsOfDirectory(
                at: folder, includingPropertiesForKeys: [.contentModificationDateKey]
            ).filter { !$0.lastPathComponent.hasPrefix(".") }.map { url in
                (url, try url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate!)
            }.sorted { $0.1 < $1.1 }.map(\.0)
        }

        /// Restarts the blind store's server (on a new port, told to every node given).
        func restartServer(telling nodes: [BinaryRunner]) throws {
            _ = server.stop()
            server = try ServeProcess(offsite)
            for node in nodes {
                try #require(try node.run(["peer", "set", "offsite", "--address", server.address]).status == 0)
            }
        }

        /// Every item as `list --json --deleted` shows it, without this store's own seq.
        static func items(_ node: BinaryRunner) throws -> [String] {
            let listed = try node.run(["list", "--json", "--deleted"])
            let rows = try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]] ?? []
            return try rows.map { row in
                let data = try JSONSerialization.data(
                    withJSONObject: row.filter { $0.key != "seq" }, options: [.sortedKeys])
                return String(decoding: data, as: UTF8.self)
            }.sorted()
        }

        func cleanUp() {
            _ = server.stop()
            home.cleanUp()
            offsite.cleanUp()
            others.forEach { $0.cleanUp() }
        }
    }

    @Test func pushHoldsNothingInTheClearAndTheRecoveryKeyRestoresEverything() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        // An invitation made on the host beforehand: the restore after the fire needs no shell there.
        let invitation = try setup.offsite.run([
            "invite", "create", "--allow", "read-write", "--address", setup.server.address,
        ])
        try #require(invitation.status == 0, "\(invitation.stderr)")
        let token = try #require(invitation.text.split(separator: "\n").first { $0.hasPrefix("hpsync://") })

        let pushed = try setup.home.run(["push", "offsite"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.text.contains("pushed to offsite: 6 inserted, 0 updated, 0 deleted, 3 images"))

        // Nothing the host keeps holds a name, serial, key, photo slice or photo digest.
        var secrets: [(String, [UInt8])] = []
        for (index, key) in setup.keys.enumerated() {
            secrets.append(("name \(index)", Array(setup.names[index].utf8)))
            secrets.append(("serial \(index)", Array(setup.serials[index].utf8)))
            secrets.append(("key \(index)", Array(key.utf8)))
            secrets.append(("lower-case key \(index)", Array(key.lowercased().utf8)))
            let uuid = try #require(UUID(uuidString: key)).uuid
            secrets.append(("key \(index) as 16 bytes", withUnsafeBytes(of: uuid) { Array($0) }))
        }
        for (index, photo) in setup.photos.enumerated() {
            secrets.append(("photo \(index) slice", Array(photo[photo.count / 2..<photo.count / 2 + 64])))
            let digest = SHA256.hash(photo)
            secrets.append(("photo \(index) digest", digest.bytes))
            secrets.append(("photo \(index) digest in hex", Array(digest.hex.utf8)))
            secrets.append(("photo \(index) digest in upper-case hex", Array(digest.hex.uppercased().utf8)))
        }
        let files = FileManager.default.enumerator(at: setup.offsite.store, includingPropertiesForKeys: nil)!
        var scanned = 0
        for case let url as URL in files {
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            scanned += 1
            let bytes = [UInt8](data)
            for (what, needle) in secrets {
                #expect(!bytes.contains(needle), "\(what) is in the clear in \(url.lastPathComponent)")
            }
        }
        #expect(scanned >= 4)
        #expect(try setup.packFiles().count == 1, "the six records in one pack, scanned with the rest")
        let hostVerify = try setup.offsite.run(["verify"])
        #expect(hostVerify.status == 0, "\(hostVerify.text)\(hostVerify.stderr)")

        // After the fire: a new machine, the recovery key, the host's address and node ID.
        let restored = try setup.newNode()
        let pulled = try restored.run(["pull", "offsite"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.text.contains("6 inserted"))
        #expect(try Offsite.items(restored) == Offsite.items(setup.home))
        #expect(try restored.run(["verify"]).status == 0)

        // The same with an invitation the host made beforehand, and the key from the command line.
        let other = try BinaryRunner()
        defer { other.cleanUp() }
        let recovery = String(try setup.home.run(["key", "show"]).text.split(separator: "\n")[0])
        try #require(try other.run(["init", "--recovery-key", recovery.uppercased()]).status == 0)
        let joined = try other.run(["peer", "join", String(token), "--name", "offsite"])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.text.contains("blind"))
        let second = try other.run(["pull", "offsite"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Offsite.items(other) == Offsite.items(setup.home))
    }

    @Test func editsAndDeletionsReachTheRestoredNodeAndBothNodesWrite() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        let other = try setup.pushedAndRestored()
        try #require(try setup.home.run(["edit", setup.keys[1], "--name", "Renamed at home"]).status == 0)
        try #require(try setup.home.run(["rm", setup.keys[2]]).status == 0)
        let photo = try setup.home.file("new.jpg", HPSyncTesting.jpeg(99, size: 30_000))
        try #require(try setup.home.run(["image", "set", setup.keys[3], photo.path]).status == 0)
        let pushed = try setup.home.run(["push", "offsite"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.text.contains("0 inserted, 2 updated, 1 deleted, 1 image"), "\(pushed.text)")
        // The other node writes too; the head both seal stays consistent.
        try #require(try other.run(["edit", setup.keys[4], "--value", "77"]).status == 0)
        let synced = try other.run(["sync", "offsite"])
        #expect(synced.status == 0, "\(synced.stderr)")
        let back = try setup.home.run(["pull", "offsite"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try Offsite.items(other) == Offsite.items(setup.home))
        #expect(try setup.home.run(["verify"]).status == 0)
        #expect(try setup.offsite.run(["verify"]).status == 0)
    }

    /// Field merge through a blind peer (Protocol.md 5.9): two nodes that meet only there edit
    /// items concurrently, one the name and the other the value of one, and both the name of
    /// another. Both edits of the first survive on both nodes; the clash is listed on both.
    @Test func editsOfTwoFieldsSurviveThroughABlindPeerAndAClashIsListedOnBoth() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        let other = try setup.pushedAndRestored()
        try #require(try setup.home.run(["edit", setup.keys[1], "--name", "Renamed at home"]).status == 0)
        try #require(try setup.home.run(["edit", setup.keys[3], "--name", "Named at home"]).status == 0)
        try #require(try other.run(["edit", setup.keys[1], "--value", "77"]).status == 0)
        try #require(try other.run(["edit", setup.keys[3], "--name", "Named on the other node"]).status == 0)
        for node in [setup.home, other, setup.home] {
            let synced = try node.run(["sync", "offsite"])
            #expect(synced.status == 0, "\(synced.stderr)")
        }
        #expect(try Offsite.items(other) == Offsite.items(setup.home))
        for node in [setup.home, other] {
            let shown = try node.run(["show", setup.keys[1]]).text
            #expect(shown.contains("Renamed at home") && shown.contains("77"), "\(shown)")
            let listed = try node.run(["conflicts", "--json"])
            let conflicts = try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]] ?? []
            #expect(conflicts.count == 1, "\(listed.text)")
            #expect(conflicts.first?["key"] as? String == setup.keys[3], "\(listed.text)")
            #expect(conflicts.first?["field"] as? String == "name", "\(listed.text)")
            #expect(try node.run(["verify"]).status == 0)
        }
        #expect(try setup.offsite.run(["verify"]).status == 0)
    }

    @Test func tamperedSwappedAndCutPacksAreRefusedAndTheRestLands() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        // Five pushes, five packs: the six items, an edit, then three new items one at a time.
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        try #require(try setup.home.run(["edit", setup.keys[1], "--name", "Edited"]).status == 0)
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        for name in ["Later-1", "Later-2", "Later-3"] {
            try #require(try setup.home.run(["add", "--name", name]).status == 0)
            #expect(try setup.home.run(["push", "offsite"]).status == 0)
        }
        let packs = try setup.packFiles()
        try #require(packs.count == 5)
        // The first altered in place, the third's and fourth's bytes swapped (each is a sealed
        // pack, under the other's name), the fifth cut short. The second, the edit, is untouched.
        var altered = try Data(contentsOf: packs[0])
        altered[altered.count / 2] ^= 0x5A
        try altered.write(to: packs[0])
        let third = try Data(contentsOf: packs[2])
        try Data(contentsOf: packs[3]).write(to: packs[2])
        try third.write(to: packs[3])
        let fifth = try Data(contentsOf: packs[4])
        try fifth.prefix(fifth.count - 100).write(to: packs[4])

        let restored = try setup.newNode()
        let pulled = try restored.run(["pull", "offsite"])
        #expect(pulled.status == 81, "\(pulled.text)\(pulled.stderr)")
        #expect(pulled.stderr.contains("failed authentication"), "\(pulled.stderr)")
        #expect(pulled.stderr.contains("not served at its size"), "the cut pack: \(pulled.stderr)")
        // Only the untouched pack landed: the edited item, alone (its photo-less version).
        let items = try Offsite.items(restored)
        #expect(items.count == 1 && items[0].contains("Edited"), "\(items)")
        #expect(try restored.run(["verify"]).status == 0)
        // Reported again by the next pull: the refused packs were not applied.
        let again = try restored.run(["pull", "offsite"])
        #expect(again.status == 81)
        #expect(again.stderr.contains("failed authentication"))

        // The node that found them leaves the refused packs out of the head at its next push
        // (and says so); the node that holds everything then finds its packs gone from the head
        // and stores what they held again. A new node restores all of it.
        let repaired = try setup.repaired(by: restored)
        #expect(repaired.stderr.contains("stores again"), "\(repaired.stderr)")
    }

    @Test func anAlteredPackOrPhotoIsRefusedAloneAndTheRestLands() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        try #require(try setup.home.run(["add", "--name", "Pushed later"]).status == 0)
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        // The later pack altered in place, and one photo the first pack's records name.
        let packs = try setup.packFiles()
        try #require(packs.count == 2)
        var bytes = try Data(contentsOf: packs[1])
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: packs[1])
        let photos = try FileManager.default.contentsOfDirectory(
            at: setup.offsite.store.appendingPathComponent("sealed"), includingPropertiesForKeys: nil)
        let photo = try #require(photos.first { !$0.lastPathComponent.hasPrefix(".") })
        bytes = try Data(contentsOf: photo)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: photo)
        let restored = try setup.newNode()
        let pulled = try restored.run(["pull", "offsite"])
        #expect(pulled.status == 81, "\(pulled.text)\(pulled.stderr)")
        #expect(pulled.stderr.contains("failed authentication"))
        let items = try Offsite.items(restored)
        // The later pack refused, one photo's item withheld; the other five landed.
        #expect(items.count == 5, "\(items)")
        #expect(try restored.run(["verify"]).status == 0)
        // Reported again by the next pull, until a push stores good copies.
        let again = try restored.run(["pull", "offsite"])
        #expect(again.status == 81)
        #expect(again.stderr.contains("failed authentication"))

        // The finder's push leaves out the altered pack and the pack naming the damaged photo;
        // home, which holds both, then stores them (and the photo) again; a new node has all.
        let repaired = try setup.repaired(by: restored)
        #expect(repaired.text.contains("1 image"), "the photo uploaded again: \(repaired.text)")
    }

    @Test func rollbackAndWithheldPacksAreDetectedAndNothingOlderIsApplied() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        // The host keeps a copy of its store as it is now...
        _ = setup.server.stop()
        let snapshot = setup.offsite.root.appendingPathComponent("snapshot")
        try FileManager.default.copyItem(at: setup.offsite.store, to: snapshot)
        try setup.restartServer(telling: [setup.home])
        try #require(try setup.home.run(["edit", setup.keys[0], "--name", "Newer"]).status == 0)
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        // ...and later serves it again.
        _ = setup.server.stop()
        try FileManager.default.removeItem(at: setup.offsite.store)
        try FileManager.default.copyItem(at: snapshot, to: setup.offsite.store)
        try setup.restartServer(telling: [setup.home])
        let pulled = try setup.home.run(["pull", "offsite"])
        #expect(pulled.status == 81, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("older copy"))
        let pushed = try setup.home.run(["push", "offsite"])
        #expect(pushed.status == 81, "\(pushed.stderr)")
        #expect(try setup.home.run(["show", setup.keys[0]]).text.contains("Newer"))

        // Withheld: a host that drops a pack the sealed head names is caught by a node that
        // never saw it before; nothing of it is applied.
        _ = setup.server.stop()
        try FileManager.default.removeItem(at: setup.offsite.store)
        try FileManager.default.moveItem(at: snapshot, to: setup.offsite.store)
        try setup.restartServer(telling: [setup.home])
        for pack in try setup.packFiles() { try FileManager.default.removeItem(at: pack) }
        let fresh = try setup.newNode()
        let withheld = try fresh.run(["pull", "offsite"])
        #expect(withheld.status == 81, "\(withheld.stderr)")
        #expect(withheld.stderr.contains("not served"), "\(withheld.stderr)")
        #expect(try fresh.run(["list", "--json"]).text.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    /// A host that makes its store again (same node identity, new store ID, nothing in it)
    /// after a trusted node saw an epoch there: a rollback to nothing, refused before anything
    /// is applied or sent.
    @Test func aBlindStoreMadeAgainIsARollback() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        _ = setup.server.stop()
        let identity = setup.offsite.store.appendingPathComponent("identity")
        let kept = setup.offsite.root.appendingPathComponent("identity-kept")
        try FileManager.default.copyItem(at: identity, to: kept)
        try FileManager.default.removeItem(at: setup.offsite.store)
        try #require(try setup.offsite.run(["init", "--blind"]).status == 0)
        try FileManager.default.removeItem(at: identity)
        try FileManager.default.copyItem(at: kept, to: identity)
        try #require(try setup.offsite.nodeID() == setup.offsiteID)
        try #require(
            try setup.offsite.run(["peer", "add", "home", setup.homeID, "--allow", "read-write"]).status == 0)
        try setup.restartServer(telling: [setup.home])

        let pulled = try setup.home.run(["pull", "offsite"])
        #expect(pulled.status == 81, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("made again"), "\(pulled.stderr)")
        let pushed = try setup.home.run(["push", "offsite"])
        #expect(pushed.status == 81, "\(pushed.stderr)")
        // Nothing was sent: the new store holds no entry and no head.
        #expect(try setup.offsite.run(["verify"]).text.contains("checked 0 sealed entries, 0 packs, 0 photos"))
        #expect(try Offsite.items(setup.home).count == setup.keys.count)
    }

    @Test func theMassDeletionGuardHoldsThroughABlindPeer() throws {
        let setup = try Offsite(items: 12)
        defer { setup.cleanUp() }
        let restored = try setup.pushedAndRestored()
        try #require(try setup.home.run(["rm"] + Array(setup.keys.prefix(11))).status == 0)
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        let pulled = try restored.run(["pull", "offsite"])
        #expect(pulled.status == 80, "\(pulled.stderr)")
        #expect(try Offsite.items(restored).filter { $0.contains("\"deleted\":false") }.count == 12)
    }

    @Test func trustedPeersHandTheKeyOverAndBlindMarksAreChecked() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        let laptop = try BinaryRunner()
        defer { laptop.cleanUp() }
        try #require(try laptop.run(["init"]).status == 0)
        try #require(try setup.home.run(["peer", "add", "laptop", try laptop.nodeID()]).status == 0)
        let homeServer = try ServeProcess(setup.home)
        defer { _ = homeServer.stop() }
        try #require(
            try laptop.run(["peer", "add", "home", setup.homeID, "--address", homeServer.address]).status == 0)
        #expect(try laptop.run(["pull", "home"]).status == 0)
        let fingerprint = try setup.home.run(["key", "show", "--fingerprint"]).text
        #expect(try laptop.run(["key", "show", "--fingerprint"]).text == fingerprint)

        // A trusted server marked blind by mistake, and a blind one not marked: refused, said why.
        try #require(try laptop.run(["peer", "set", "home", "--blind"]).status == 0)
        let wrong = try laptop.run(["pull", "home"])
        #expect(wrong.status == 76, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("not blind"))
        try #require(try setup.offsite.run(["peer", "add", "laptop", try laptop.nodeID()]).status == 0)
        try #require(
            try laptop.run(["peer", "add", "offsite", setup.offsiteID, "--address", setup.server.address]).status == 0)
        let unmarked = try laptop.run(["pull", "offsite"])
        #expect(unmarked.status == 76, "\(unmarked.stderr)")
        #expect(unmarked.stderr.contains("is blind"))
    }

    @Test func aBlindStoreServesOnlyAndVerifiesWhatItCan() throws {
        let setup = try Offsite()
        defer { setup.cleanUp() }
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        for command in [["list"], ["add", "--name", "x"], ["key", "show"], ["pull", "home"], ["web"]] {
            let refused = try setup.offsite.run(command)
            #expect(refused.status == 64, "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains("blind"), "\(command): \(refused.stderr)")
        }
        let clean = try setup.offsite.run(["verify"])
        #expect(clean.status == 0)
        #expect(clean.text.contains("1 packs, 3 photos"), "\(clean.text)")
        // Packs and photos are named only inside sealed data: the host checks each file's name
        // and that its size can be a sealed one (a missing file only a trusted node can tell).
        let photos = try FileManager.default.contentsOfDirectory(
            at: setup.offsite.store.appendingPathComponent("sealed"), includingPropertiesForKeys: nil)
        let photo = try Data(contentsOf: try #require(photos.first))
        try photo.dropLast(1).write(to: try #require(photos.first))
        let pack = try #require(try setup.packFiles().first)
        try (Data(contentsOf: pack) + [0]).write(to: pack)
        let damaged = try setup.offsite.run(["verify"])
        #expect(damaged.status == 1)
        #expect(
            damaged.text.contains("is not a sealed photo") && damaged.text.contains("is not a sealed pack"),
            "\(damaged.text)")
    }

    @Test func aReadOnlyNodeCannotWriteAKeylessNodeIsToldAndABadRecoveryKeyMakesNothing() throws {
        let setup = try Offsite(items: 2)
        defer { setup.cleanUp() }
        #expect(try setup.home.run(["push", "offsite"]).status == 0)
        let reader = try BinaryRunner()
        defer { reader.cleanUp() }
        let recovery = String(try setup.home.run(["key", "show"]).text.split(separator: "\n")[0])
        // One character off: the checksum catches it, and no store is made.
        let typo = String(recovery.dropLast()) + (recovery.last == "0" ? "1" : "0")
        let refused = try reader.run(["init", "--recovery-key", typo])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: reader.store.appendingPathComponent("store.sqlite").path))
        try #require(try reader.run(["init", "--recovery-key", recovery]).status == 0)
        try #require(try setup.offsite.run(["peer", "add", "reader", try reader.nodeID()]).status == 0)
        try #require(
            try reader.run(["peer", "add", "offsite", setup.offsiteID, "--address", setup.server.address, "--blind"])
                .status == 0)
        #expect(try reader.run(["pull", "offsite"]).status == 0)
        try #require(try reader.run(["add", "--name", "Reader's lamp"]).status == 0)
        let pushed = try reader.run(["push", "offsite"])
        #expect(pushed.status == 77, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("may only read"))
        try FileManager.default.removeItem(
            at: reader.store.appendingPathComponent("identity").appendingPathComponent("inventory.key"))
        let keyless = try reader.run(["pull", "offsite"])
        #expect(keyless.status == 77, "\(keyless.stderr)")
        #expect(keyless.stderr.contains("no inventory key"))
    }
}
