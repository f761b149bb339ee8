import Foundation
import HPSyncTesting
import Testing

/// Issue 14 §1: images lost or damaged on one node are fetched again by digest from a peer,
/// by `verify --repair --from` and by a normal pull, in either direction.
@Suite(.serialized) struct HealingCommandTests {
    static func add(_ runner: BinaryRunner, _ name: String, image: [UInt8]) throws -> String {
        let photo = try runner.file("\(name).jpg", image)
        let added = try runner.run(["add", "--name", name, "--image", photo.path])
        try #require(added.status == 0, "\(added.stderr)")
        return added.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func imageURL(_ runner: BinaryRunner, _ key: String) -> URL {
        runner.store.appendingPathComponent("images/\(key)")
    }

    /// The primary serves the backup, which pulls everything once.
    static func serveAndPull(_ pair: Pair) throws {
        try pair.serve()
        try #require(try pair.backup.run(["pull", "primary"]).status == 0)
    }

    /// Same size, one byte flipped: only the SHA-256 tells.
    static func rot(_ url: URL) throws {
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: url)
    }

    @Test func verifyRepairFromAPeerFetchesMissingAndDamagedImages() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let lost = try Self.add(pair.primary, "lost", image: jpeg(1))
        let rotten = try Self.add(pair.primary, "rotten", image: jpeg(2))
        let twin = try Self.add(pair.primary, "twin", image: jpeg(2))
        let gone = try Self.add(pair.primary, "gone everywhere", image: jpeg(3))
        try Self.serveAndPull(pair)

        try FileManager.default.removeItem(at: Self.imageURL(pair.backup, lost))
        // The twins' files are one inode (a pull links equal images): both rot at once.
        try Self.rot(Self.imageURL(pair.backup, rotten))
        try FileManager.default.removeItem(at: Self.imageURL(pair.backup, gone))
        try FileManager.default.removeItem(at: Self.imageURL(pair.primary, gone))
        #expect(try pair.backup.run(["verify"]).status == 1)
        #expect(try pair.backup.run(["verify", "--repair"]).status == 1)

        let repaired = try pair.backup.run(["verify", "--repair", "--from", "primary"])
        #expect(repaired.status == 1, "\(repaired.text)\(repaired.stderr)")
        for key in [lost, rotten, twin] {
            #expect(repaired.text.contains("repaired: fetched the image of \(key) again from primary"))
            let here = try Data(contentsOf: Self.imageURL(pair.backup, key))
            #expect(here == (try Data(contentsOf: Self.imageURL(pair.primary, key))))
        }
        #expect(repaired.text.contains("problem: image file of \(gone) is missing"))
        #expect(repaired.text.contains("checked 4 items, 4 images: 1 problem\n"), "\(repaired.text)")
        // The versions did not change: the primary has nothing new to offer.
        let again = try pair.backup.run(["pull", "primary", "--json"])
        let json = try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any]
        #expect(json?["manifestEntries"] as? Int == 0)
    }

    @Test func aPullHealsWhatVerifyFound() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let key = try Self.add(pair.primary, "couch", image: jpeg(4))
        try Self.serveAndPull(pair)
        try FileManager.default.removeItem(at: Self.imageURL(pair.backup, key))
        #expect(try pair.backup.run(["verify"]).status == 1)

        let pulled = try pair.backup.run(["pull", "primary", "--json"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let json = try JSONSerialization.jsonObject(with: pulled.stdout) as? [String: Any]
        #expect(json?["healed"] as? [String] == [key])
        #expect(try pair.backup.run(["verify"]).status == 0)

        try Self.rot(Self.imageURL(pair.backup, key))
        #expect(try pair.backup.run(["verify"]).status == 1)
        let plain = try pair.backup.run(["pull", "primary"])
        #expect(plain.text.contains("fetched 1 missing or damaged image(s) again from primary"), "\(plain.text)")
        #expect(try pair.backup.run(["verify"]).status == 0)
    }

    /// No `verify` in between: the pull itself notices files gone or of the wrong size.
    @Test func aPullHealsImageFilesLostSinceWithoutVerify() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let lost = try Self.add(pair.primary, "lamp", image: jpeg(6))
        let cut = try Self.add(pair.primary, "rug", image: jpeg(7))
        let whole = try Self.add(pair.primary, "desk", image: jpeg(8))
        try Self.serveAndPull(pair)
        try FileManager.default.removeItem(at: Self.imageURL(pair.backup, lost))
        try Data(jpeg(7, size: 28)).write(to: Self.imageURL(pair.backup, cut))

        let pulled = try pair.backup.run(["pull", "primary", "--json"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let json = try JSONSerialization.jsonObject(with: pulled.stdout) as? [String: Any]
        #expect((json?["healed"] as? [String])?.sorted() == [lost, cut].sorted(), "\(pulled.text)")
        #expect(json?["imagesTransferred"] as? Int == 2)
        for key in [lost, cut, whole] {
            #expect(
                try Data(contentsOf: Self.imageURL(pair.backup, key))
                    == Data(jpeg(key == lost ? 6 : key == cut ? 7 : 8)))
        }
        #expect(try pair.backup.run(["verify"]).status == 0)
    }

    /// An image the peer cannot supply either is a warning (exit 3) that says where to look.
    @Test func aPullWhosePeerCannotSupplyAnImageExits3() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let gone = try Self.add(pair.primary, "gone everywhere", image: jpeg(9))
        try Self.serveAndPull(pair)
        try FileManager.default.removeItem(at: Self.imageURL(pair.backup, gone))
        try FileManager.default.removeItem(at: Self.imageURL(pair.primary, gone))
        #expect(try pair.backup.run(["verify"]).status == 1)

        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 3, "\(pulled.text)\(pulled.stderr)")
        #expect(pulled.stderr.contains("image of \(gone) is missing or damaged here"), "\(pulled.stderr)")
        #expect(pulled.stderr.contains("hp-sync verify --repair --from OTHER-PEER"))
        #expect(pulled.stderr.contains("1 image could not be fetched again"))
        let json = try pair.backup.run(["pull", "primary", "--json", "--quiet"])
        #expect(json.status == 3)
        let report = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(report?["unhealed"] as? [String] == [gone])
    }

    /// The serving node's own image rots: it answers `missing` and logs it, then heals itself
    /// from the backup it serves (which it can pull from), and the next client gets the image.
    @Test func aDamagedServerAnswersMissingAndHealsFromItsBackup() throws {
        let pair = try Pair()
        let third = try BinaryRunner.initialized()
        defer {
            pair.cleanUp()
            third.cleanUp()
        }
        let thirdID = try third.nodeID()
        let key = try Self.add(pair.primary, "camera", image: jpeg(5))
        try pair.primary.run(["peer", "add", "third", thirdID])
        let primary = try pair.serve()
        try third.run(["peer", "add", "primary", pair.primaryID, "--address", primary.address])
        try #require(try pair.backup.run(["pull", "primary"]).status == 0)

        try Self.rot(Self.imageURL(pair.primary, key))
        _ = try third.run(["pull", "primary"])
        #expect(try third.run(["show", key]).status != 0, "a record is never applied without its image")
        let log = primary.stop().log
        #expect(log.contains("own image is missing or damaged"), "\(log)")

        let backup = try pair.start(pair.backup)
        try pair.primary.run(["peer", "rm", "backup"])
        try pair.primary.run(["peer", "add", "backup", pair.backupID, "--address", backup.address])
        let repaired = try pair.primary.run(["verify", "--repair", "--from", "backup"])
        #expect(repaired.status == 0, "\(repaired.text)\(repaired.stderr)")
        #expect(try pair.primary.run(["verify"]).status == 0)
        // Fetching images is not a sync: `status` and gc's bound do not count it as one.
        #expect(!(try pair.backup.run(["status"]).text.contains("pulled from us")))

        let again = try pair.start(pair.primary)
        try third.run(["peer", "rm", "primary"])
        try third.run(["peer", "add", "primary", pair.primaryID, "--address", again.address])
        #expect(try third.run(["pull", "primary"]).status == 0)
        #expect(try third.run(["show", key]).status == 0)
        #expect(try third.run(["verify"]).status == 0)
    }
}
