import Foundation
import HPSyncTesting
import Testing

/// `hp-sync gc` through the binary: it never outruns a peer that has not synced (unless forced),
/// and the stale peer's next pull is a full reconciliation that cannot revive the deletion.
@Suite(.serialized) struct GCCommandTests {
    @Test func gcRefusesToOutrunAStalePeer() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(3)
        try pair.serve()
        let (primary, backup) = (pair.primary, pair.backup)

        // backup is listed on primary but never synced: gc refuses entirely.
        let blocked = try primary.run(["gc", "--older-than", "1s"])
        #expect(blocked.status == 80, "\(blocked.stderr)")
        #expect(blocked.stderr.contains("peer backup never synced with this store"))
        #expect(blocked.stderr.contains("--force"))

        #expect(try backup.run(["pull", "primary"]).status == 0)
        #expect(try primary.run(["rm", keys[0]]).status == 0)
        // backup last pulled before the deletion: gc, a few seconds later, holds back to that moment.
        let clamped = try primary.later(["gc", "--older-than", "1s"])
        #expect(clamped.status == 0, "\(clamped.stderr)")
        #expect(clamped.text.contains("dropped 0 tombstones"), "\(clamped.text)")
        #expect(clamped.text.contains("held back by peer backup"))
        #expect(clamped.text.contains("hp-sync peer rm backup"))
        #expect(try primary.run(["status"]).text.contains("tombstones: 1"))

        let preview = try primary.later(["gc", "--older-than", "1s", "--force", "--dry-run"])
        #expect(preview.text.contains("would drop 1 tombstone "), "\(preview.text)")
        #expect(try primary.run(["status"]).text.contains("tombstones: 1"))

        let forced = try primary.later(["gc", "--older-than", "1s", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.text.contains("dropped 1 tombstone "), "\(forced.text)")
        #expect(forced.text.contains("GC horizon: "))
        #expect(try primary.run(["status"]).text.contains("tombstones: 0"))

        // backup's checkpoint predates the dropped tombstone: a full reconciliation trashes its copy.
        let pulled = try backup.run(["pull", "primary"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.text.contains("0 inserted, 0 updated, 1 deleted"), "\(pulled.text)")
        #expect(pulled.text.contains("full reconciliation: primary discarded deletions older than "))
        #expect(pulled.text.contains("1 local item it no longer has was moved to the trash"))
        #expect(!(try backup.run(["list"]).text.contains("Item 0")))
        #expect(try backup.run(["trash", "list"]).text.contains(keys[0]))

        // Pushing everything backup has (its first push) does not bring it back on primary.
        try primary.run(["peer", "rm", "backup"])
        try primary.run(["peer", "add", "backup", pair.backupID, "--allow", "read-write"])
        let pushed = try backup.run(["push", "primary", "--json"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(!(try primary.run(["list"]).text.contains("Item 0")))
        #expect(try primary.run(["status"]).text.contains("last pushed to us:"))

        // Both synced since the deletion: gc no longer needs --force.
        #expect(try backup.run(["pull", "primary"]).status == 0)
        let again = try primary.run(["gc", "--older-than", "1s"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.text.contains("held back"), "\(again.text)")
    }
}
