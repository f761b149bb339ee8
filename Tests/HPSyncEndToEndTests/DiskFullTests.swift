import Foundation
import HPSyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Regression (issue 13 §3): a pull that hit ENOSPC at commit exited 70 with SQLite's text, and a
/// server whose disk filled during a push dropped the connection (the client exited 69 with
/// "closed abruptly"). Runs on size-limited tmpfs mounts; needs root (as in CI).
@Suite(.serialized, .enabled(if: SmallDisk.canMount, "cannot mount a tmpfs here (needs root and mount(8))"))
struct DiskFullTests {
    /// `count` items with distinct images of `size` bytes each on `runner`'s store.
    static func addImages(_ runner: BinaryRunner, count: Int, size: Int) throws {
        for index in 0..<count {
            let bytes = Images.jpeg + (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            let photo = try runner.file("photo\(index).jpg", bytes)
            try #require(try runner.run(["add", "--name", "Photo \(index)", "--image", photo.path]).status == 0)
        }
    }

    /// Exit 74, naming the full disk and the store, without SQLite's text.
    static func expectDiskFull(_ result: BinaryRunner.Result, store: URL) throws {
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("disk is full"), "\(result.stderr)")
        #expect(result.stderr.contains(store.path), "\(result.stderr)")
        #expect(!result.stderr.contains("SQLite") && !result.stderr.contains("executing"), "\(result.stderr)")
    }

    @Test func aPullThatFillsTheDiskExits74NamingTheDiskAndTheStore() throws {
        let pair = try Pair(smallDiskFor: \.backup, size: "1m")
        defer { pair.cleanUp() }
        try Self.addImages(pair.primary, count: 12, size: 200_000)
        try pair.serve()
        try Self.expectDiskFull(try pair.backup.run(["pull", "primary"]), store: pair.backup.store)
        #expect(try pair.backup.run(["verify"]).status == 0)
        try SmallDisk.resize(pair.backup.store, to: "16m")
        let again = try pair.backup.run(["pull", "primary"])
        #expect(again.status == 0, "\(again.stderr)")
    }

    /// The database, not an image, fills the disk: SQLite reports SQLITE_FULL at commit (70 and
    /// SQLite's text before).
    @Test func aPullWhoseCommitFillsTheDiskExits74WithoutSQL() throws {
        let pair = try Pair(smallDiskFor: \.backup, size: "1m")
        defer { pair.cleanUp() }
        let origin = try pair.primary.nodeID()
        let name = String(repeating: "n", count: 400)
        let items = (0..<6_000).map { index in
            "{\"key\": \"\(UUID().uuidString)\", \"name\": \"\(name) \(index)\", \"valueInDollars\": \(index), "
                + "\"dateCreatedMilliseconds\": 1795427989188, \"stamp\": \(117_665_168_699_424_768 + index), "
                + "\"origin\": \"\(origin)\", \"deleted\": false}"
        }
        let export = "{\"format\": \"hp-sync-export\", \"version\": 1, \"items\": [\(items.joined(separator: ",\n"))]}"
        let file = try pair.primary.file("items.json", Array(export.utf8))
        let imported = try pair.primary.run(["import", file.path])
        try #require(imported.status == 0, "\(imported.stderr)")
        try pair.serve()
        try Self.expectDiskFull(try pair.backup.run(["pull", "primary"]), store: pair.backup.store)
        try SmallDisk.resize(pair.backup.store, to: "64m")
        #expect(try pair.backup.run(["verify"]).status == 0)
        let again = try pair.backup.run(["pull", "primary"])
        #expect(again.status == 0, "\(again.stderr)")
    }

    @Test func aServerWhoseDiskFillsDuringAPushSaysSoAndTheClientRetriesLater() throws {
        let pair = try Pair(smallDiskFor: \.primary, size: "1m")
        defer { pair.cleanUp() }
        try Self.addImages(pair.backup, count: 12, size: 200_000)
        try pair.serve(allow: "read-write")
        let pushed = try pair.backup.run(["push", "primary"])
        #expect(pushed.status == 75, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("disk") && pushed.stderr.contains("full"), "\(pushed.stderr)")
        #expect(!pushed.stderr.contains("SQLite") && !pushed.stderr.contains("executing"), "\(pushed.stderr)")
        try SmallDisk.resize(pair.primary.store, to: "16m")
        let again = try pair.backup.run(["push", "primary"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try pair.primary.run(["list"]).text.contains("Photo 11"))
    }

    /// Regression (issue 13 §4): a store on a read-only mount exited 70 with an SQL statement.
    @Test func aReadOnlyStoreExits74NamingThePathAndInitBelowItExits73() throws {
        let runner = try BinaryRunner()
        try SmallDisk.mount(runner.store, size: "4m")
        defer {
            SmallDisk.unmount(runner.store)
            runner.cleanUp()
        }
        try #require(try runner.run(["init"]).status == 0)
        try #require(try runner.run(["add", "--name", "Lamp"]).status == 0)
        try SmallDisk.remount(runner.store, options: "ro")
        let added = try runner.run(["add", "--name", "Chair"])
        #expect(added.status == 74, "\(added.stderr)")
        #expect(added.stderr.contains(runner.store.path) && added.stderr.contains("read-only"), "\(added.stderr)")
        #expect(!added.stderr.contains("INSERT") && !added.stderr.contains("executing"), "\(added.stderr)")
        #expect(try runner.run(["list"]).text.contains("Lamp"), "reading still works")
        let nested = runner.store.appendingPathComponent("inner")
        let created = try runner.run(["init", "--store", nested.path], withStore: false)
        #expect(created.status == 73, "\(created.stderr)")
        #expect(created.stderr.contains(nested.path) && !created.stderr.contains("Error Domain"), "\(created.stderr)")
    }
}

extension Pair {
    /// A pair whose primary or backup store lives on a fresh tmpfs of `size`, unmounted by `cleanUp`.
    convenience init(smallDiskFor side: KeyPath<Pair, BinaryRunner>, size: String) throws {
        let primary = try BinaryRunner()
        let backup = try BinaryRunner()
        let store = (side == \.primary ? primary : backup).store
        try SmallDisk.mount(store, size: size)
        try self.init(primary: primary, backup: backup, mounts: [store])
    }
}
