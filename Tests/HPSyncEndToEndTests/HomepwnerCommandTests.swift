import Foundation
import HPSyncTesting
import Testing

@Suite("import-homepwner and export-homepwner, run as a binary")
struct HomepwnerCommandTests {
    static let errorPrefix = "hp-sync: error: "

    @Test func exportThenImportIntoAnotherStoreThenReimportChangesNothing() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run([
            "add", "--name", "Camera", "--serial", "SN-1", "--value", "350", "--image", image.path, "--created",
            "2024-05-01T10:20:30.456Z",
        ]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        try runner.run(["add", "--name", "Lamp", "--value", "20"])
        let documents = runner.root.appendingPathComponent("Documents")
        for format in ["archive", "plist"] {
            let exported = try runner.run(["export-homepwner", documents.path, "--format", format])
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(exported.text.contains("2 items, images 1"))
        }
        // Both files now describe the same inventory; a second store imports it once.
        let other = runner.root.appendingPathComponent("other")
        try runner.run(["init", "--store", other.path], withStore: false)
        let imported = try runner.run(["import-homepwner", documents.path, "--store", other.path], withStore: false)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.contains("read items.archive: Item archive (Swift), 2 items"))
        #expect(imported.text.contains("inserted 2, updated 0"))
        let show = try runner.run(["show", key, "--store", other.path], withStore: false)
        #expect(show.text.contains("name:     Camera"))
        #expect(show.text.contains("created:  2024-05-01T10:20:30.456Z"))
        #expect(show.text.contains("image:    \(Images.jpeg.count) bytes"))
        let again = try runner.run(["import-homepwner", documents.path, "--store", other.path], withStore: false)
        #expect(again.text.contains("inserted 0, updated 0") && again.text.contains("unchanged 2"))
        let dry = try runner.run(["import-homepwner", documents.path, "--dry-run"])
        #expect(dry.text.contains("dry run, nothing written"))
    }

    @Test func malformedFolderIsADataErrorAndImportsNothing() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try runner.run(["add", "--name", "Lamp"])
        let documents = runner.root.appendingPathComponent("Documents")
        try runner.run(["export-homepwner", documents.path])
        let archive = documents.appendingPathComponent("items.archive")
        let bytes = try Data(contentsOf: archive)
        try bytes.prefix(bytes.count / 2).write(to: archive)
        let other = runner.root.appendingPathComponent("other")
        try runner.run(["init", "--store", other.path], withStore: false)
        let result = try runner.run(["import-homepwner", documents.path, "--store", other.path], withStore: false)
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix(Self.errorPrefix + archive.path))
        #expect(result.stderr.contains("nothing was imported"))
        #expect(try runner.run(["status", "--store", other.path], withStore: false).text.contains("items:      0"))
    }

    /// An item's image must be a regular file within the limit (64 MiB): a directory, a symbolic
    /// link or a larger file under the key's name is bad data (65), and nothing is imported.
    @Test func anImageThatIsNotARegularFileOrTooLargeImportsNothing() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "Camera", "--image", image.path]).text.trimmingCharacters(
            in: .newlines)
        try runner.run(["add", "--name", "Lamp"])
        let documents = runner.root.appendingPathComponent("Documents")
        #expect(try runner.run(["export-homepwner", documents.path]).status == 0)
        let named = documents.appendingPathComponent(key)
        let other = runner.root.appendingPathComponent("other")
        try runner.run(["init", "--store", other.path], withStore: false)
        func expectRefused(_ reason: String) throws {
            let result = try runner.run(["import-homepwner", documents.path, "--store", other.path], withStore: false)
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.hasPrefix(Self.errorPrefix + named.path), "\(result.stderr)")
            #expect(result.stderr.contains(reason) && result.stderr.contains("nothing was imported"))
            let status = try runner.run(["status", "--store", other.path], withStore: false)
            #expect(status.text.contains("items:      0"))
        }

        try FileManager.default.removeItem(at: named)
        try FileManager.default.createDirectory(at: named, withIntermediateDirectories: false)
        try expectRefused("is not a regular file")
        try FileManager.default.removeItem(at: named)
        try FileManager.default.createSymbolicLink(at: named, withDestinationURL: image)
        try expectRefused("is not a regular file")
        try FileManager.default.removeItem(at: named)
        // Sparse: the size is checked before a byte is read.
        let limit: UInt64 = 64 << 20
        try Data(Images.jpeg).write(to: named)
        let handle = try FileHandle(forWritingTo: named)
        try handle.truncate(atOffset: limit + 1)
        try handle.close()
        try expectRefused("is \(limit + 1) bytes, over the limit of \(limit)")
    }

    @Test func missingFolderIsNoInput() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let result = try runner.run(["import-homepwner", runner.root.appendingPathComponent("nope").path])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix(Self.errorPrefix + "no folder at"))
        let empty = try runner.run(["import-homepwner", runner.root.path])
        #expect(empty.status == 66)
        let badFormat = try runner.run(["export-homepwner", runner.root.path, "--format", "json"])
        #expect(badFormat.status == 64)
    }
}
