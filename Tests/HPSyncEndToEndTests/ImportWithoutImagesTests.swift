import Foundation
import HPSyncTesting
import Testing

/// Issue 14 §3: an export without `--images` is importable; the images come back later.
@Suite(.serialized) struct ImportWithoutImagesTests {
    @Test func importWithoutImagesRecordsThemMissingAndAPullFillsThemIn() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let primary = pair.primary
        let photo = try primary.file("a.jpg", jpeg(9))
        let withImage = try primary.run(["add", "--name", "Camera", "--image", photo.path]).text
            .trimmingCharacters(in: .newlines)
        let plain = try primary.run(["add", "--name", "Lamp"]).text.trimmingCharacters(in: .newlines)
        let gone = try primary.run(["add", "--name", "Sold"]).text.trimmingCharacters(in: .newlines)
        #expect(try primary.run(["rm", gone]).status == 0)
        let export = primary.root.appendingPathComponent("inv.json")
        #expect(try primary.run(["export", "-o", export.path]).status == 0)

        let imported = try pair.backup.run(["import", export.path])
        #expect(imported.status == 3, "\(imported.stderr)")
        let lines = imported.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(imported.stderr.hasPrefix("hp-sync: warning: "), "\(imported.stderr)")
        #expect(imported.stderr.contains("1 image is missing"))
        #expect(imported.stderr.contains("--images DIR") && imported.stderr.contains("verify --repair --from PEER"))
        #expect(try pair.backup.run(["show", withImage]).status == 0)
        #expect(try pair.backup.run(["show", plain]).status == 0)
        let deleted = try pair.backup.run(["list", "--deleted", "--json"]).text
        #expect(deleted.contains(gone))

        let verify = try pair.backup.run(["verify"])
        #expect(verify.status == 1)
        #expect(verify.text.contains("image file of \(withImage) is missing"))

        try pair.serve()
        #expect(try pair.backup.run(["pull", "primary"]).status == 0)
        #expect(try pair.backup.run(["verify"]).status == 0)
        let bytes = try Data(contentsOf: pair.backup.store.appendingPathComponent("images/\(withImage)"))
        #expect(bytes == Data(jpeg(9)))
    }

    @Test func aWrongImagesDirectoryIsNamedWithTheFirstMissingFile() throws {
        let runner = try BinaryRunner.initialized()
        let source = try BinaryRunner.initialized()
        defer {
            runner.cleanUp()
            source.cleanUp()
        }
        let photo = try source.file("a.jpg", jpeg(8))
        let key = try source.run(["add", "--name", "Camera", "--image", photo.path]).text
            .trimmingCharacters(in: .newlines)
        let export = source.root.appendingPathComponent("inv.json")
        #expect(try source.run(["export", "-o", export.path]).status == 0)
        let wrong = source.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: wrong, withIntermediateDirectories: true)
        let result = try runner.run(["import", export.path, "--images", wrong.path])
        #expect(result.status == 66)
        #expect(result.stderr.contains("--images \(wrong.path) has no file \(key)"), "\(result.stderr)")
        let absent = try runner.run(["import", export.path, "--images", wrong.path + "-absent"])
        #expect(absent.stderr.contains("--images \(wrong.path)-absent does not exist"), "\(absent.stderr)")
    }
}
