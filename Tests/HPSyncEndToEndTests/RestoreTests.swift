import Foundation
import HPSyncTesting
import Testing

/// Issue 14 §2: Docs/restore.md, command for command, with the built binary (issue 35 §4: with
/// `peer set` where it works, and what another peer of the lost primary must do).
@Suite(.serialized) struct RestoreTests {
    typealias Node = InviteCommandTests.Node

    /// Every item and tombstone as `list --json --deleted` prints it, by key.
    static func inventory(_ node: Node) throws -> [String: [String: AnyHashable]] {
        let listed = try node.run(["list", "--json", "--deleted"])
        let items = try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]] ?? []
        var byKey: [String: [String: AnyHashable]] = [:]
        for item in items {
            guard let key = item["key"] as? String else { continue }
            byKey[key] = item.compactMapValues { $0 as? AnyHashable }
        }
        return byKey
    }

    static func images(_ node: Node) throws -> [String: Data] {
        let folder = node.runner.store.appendingPathComponent("images")
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix(".") {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    @Test func theDayThePrimaryDies() throws {
        let primary = try Node()
        let backup = try Node()
        let laptop = try Node()
        let fresh = try BinaryRunner()
        defer { [primary.runner, backup.runner, laptop.runner, fresh].forEach { $0.cleanUp() } }
        // Before: the primary serves, the backup pulls it every hour.
        var keys: [String] = []
        for index in 0..<4 {
            let photo = try primary.runner.file("p\(index).jpg", jpeg(UInt8(index + 20)))
            let added = try primary.run(["add", "--name", "Item \(index)", "--image", photo.path])
            keys.append(added.text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try primary.run(["add", "--name", "No photo"])
        try primary.run(["edit", keys[1], "--name", "Renamed"])
        try primary.run(["rm", keys[2]])
        // Most of the inventory deleted once: many tombstones, enough to alarm the guard if the
        // backup counted them as deletions.
        var sold: [String] = []
        for index in 0..<20 {
            sold.append(try primary.run(["add", "--name", "Sold \(index)"]).text.trimmingCharacters(in: .newlines))
        }
        try primary.run(["rm"] + sold)
        try primary.run(["peer", "add", "backup", backup.id])
        let old = try ServeProcess(primary.runner)
        try backup.run(["peer", "add", "primary", primary.id, "--address", old.address])
        try #require(try backup.run(["pull", "primary"]).status == 0)
        let before = try Self.inventory(backup)
        let photosBefore = try Self.images(backup)
        #expect(before.count == 25 && photosBefore.count == 3)
        // A laptop syncs with the primary too; its last edit reached the primary after the
        // backup's last pull, so the backup never saw it.
        try primary.run(["peer", "add", "laptop", laptop.id, "--allow", "read-write"])
        try laptop.run(["peer", "add", "primary", primary.id, "--address", old.address])
        let laptopEdit = try laptop.run(["add", "--name", "Made on the laptop"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(try laptop.run(["sync", "primary"]).status == 0)

        // The primary's disk dies: its store, identity included, is gone.
        _ = old.stop()
        try FileManager.default.removeItem(at: primary.runner.store)

        // 1. On the backup: let the new machine in.
        #expect(try backup.run(["peer", "rm", "primary"]).status == 0)
        let occasion = try ServeProcess(backup.runner)
        let invited = try backup.run(["invite", "--name", "primary", "--allow", "read", "--address", occasion.address])
        try #require(invited.status == 0, "\(invited.stderr)")
        let invitation = invited.text.trimmingCharacters(in: .whitespacesAndNewlines)

        // 2. On the new primary: a fresh store, filled from the backup.
        let newPrimary = try Node(fresh)
        let joined = try newPrimary.run(["peer", "join", invitation, "--name", "backup"])
        #expect(joined.status == 0, "\(joined.stderr)")
        let restored = try newPrimary.run(["pull", "backup"])
        #expect(restored.status == 0, "\(restored.stderr)")
        let verified = try newPrimary.run(["verify"])
        #expect(verified.status == 0, "\(verified.text)")
        // Three live photos, and the one the deleted item 2 keeps for a revival (Protocol.md
        // 5.9): a restore fetches it with the tombstone.
        #expect(verified.text.contains("checked 25 items, 4 images: clean"))
        #expect(try Self.inventory(newPrimary) == before)
        #expect(try Self.images(newPrimary) == photosBefore)
        _ = occasion.stop()
        let serving = try ServeProcess(newPrimary.runner)
        defer { _ = serving.stop() }

        // 3. On the backup: pull from the new primary again, as cron does every hour.
        #expect(try backup.run(["peer", "set", "primary", "--address", serving.address]).status == 0)
        let hourly = try backup.run(["pull", "primary", "--json"])
        #expect(hourly.status == 0, "the mass-deletion guard must not trip: \(hourly.stderr)")
        let report = try JSONSerialization.jsonObject(with: hourly.stdout) as? [String: Any]
        #expect(report?["imagesTransferred"] as? Int == 0, "no photo is sent again")
        #expect(report?["insertedCount"] as? Int == 0)
        #expect(report?["updatedCount"] as? Int == 0)
        #expect(report?["deletedCount"] as? Int == 0)
        #expect(try Self.inventory(backup) == before, "nothing deleted comes back, nothing is lost")
        #expect(try backup.run(["verify"]).status == 0)

        // And the next change on the new primary reaches the backup.
        let later = try newPrimary.run(["add", "--name", "Bought after the restore"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let next = try backup.run(["pull", "primary"])
        #expect(next.status == 0)
        #expect(try backup.run(["show", later]).status == 0)

        // 4. On the laptop: the new machine answers where the old one did (here it listens on
        // another port, so the laptop is pointed there first) and the pin refuses it.
        try laptop.run(["peer", "set", "primary", "--address", serving.address])
        let pinned = try laptop.run(["pull", "primary"])
        #expect(pinned.status == 77, "\(pinned.stderr)")
        #expect(pinned.stderr.contains("server identity changed"), "\(pinned.stderr)")
        #expect(try laptop.run(["peer", "rm", "primary"]).status == 0)
        #expect(
            try laptop.run(["peer", "add", "primary", newPrimary.id, "--address", serving.address]).status == 0)
        #expect(try newPrimary.run(["peer", "add", "laptop", laptop.id, "--allow", "read-write"]).status == 0)
        let synced = try laptop.run(["sync", "primary"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try backup.run(["pull", "primary"]).status == 0)
        #expect(try backup.run(["show", laptopEdit]).status == 0, "the laptop's edit outlived the old primary")
    }
}
