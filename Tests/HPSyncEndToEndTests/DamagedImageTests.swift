import Foundation
import HPSyncTesting
import Testing

/// A damaged or missing photo must neither look present nor sink a whole export or import: it
/// is left out, named with its key, and recorded as missing for a repair from a peer.
@Suite(.serialized) struct DamagedImageTests {
    static let repair = "hp-sync verify --repair --from PEER"

    /// A store with two photographed items; returns (runner, key of the first, key of the second).
    static func twoPhotos() throws -> (BinaryRunner, String, String) {
        let runner = try BinaryRunner.initialized()
        var keys: [String] = []
        for seed: UInt8 in [3, 4] {
            let photo = try runner.file("p\(seed).jpg", jpeg(seed, size: 559))
            keys.append(
                try runner.run(["add", "--name", "Item \(seed)", "--image", photo.path]).text
                    .trimmingCharacters(in: .newlines))
        }
        return (runner, keys[0], keys[1])
    }

    /// Flips one byte in the middle of `url`.
    static func damage(_ url: URL) throws {
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: url)
    }

    @Test(arguments: ["json", "csv"])
    func anExportLeavesADamagedImageOutAndItsImportStillBringsEveryRecord(format: String) throws {
        let (source, damaged, intact) = try Self.twoPhotos()
        let target = try BinaryRunner()
        defer {
            source.cleanUp()
            target.cleanUp()
        }
        try Self.damage(HealingCommandTests.imageURL(source, damaged))
        let images = source.root.appendingPathComponent("expimg")
        let file = source.root.appendingPathComponent("y.\(format)")
        let export = try source.run(["export", "--format", format, "--images", images.path, "-o", file.path])
        #expect(export.status == 3, "\(export.stderr)")
        #expect(export.stderr.contains("image of \(damaged) left out of the export"), "\(export.stderr)")
        #expect(export.stderr.contains(Self.repair))
        #expect(!export.stderr.contains(intact))
        #expect(!export.stderr.contains("hp-sync: error:"))
        #expect(!FileManager.default.fileExists(atPath: images.appendingPathComponent(damaged).path))
        #expect(FileManager.default.fileExists(atPath: images.appendingPathComponent(intact).path))

        try #require(try target.run(["init"]).status == 0)
        let imported = try target.run(["import", file.path, "--images", images.path])
        #expect(imported.status == 3, "\(imported.stderr)")
        #expect(imported.text.contains("inserted 2"), "\(imported.text)")
        #expect(imported.stderr.contains(damaged) && imported.stderr.contains(Self.repair), "\(imported.stderr)")
        #expect(imported.stderr.hasPrefix("hp-sync: warning: "))
        #expect(
            try target.run(["image", "get", intact, "-o", target.root.appendingPathComponent("i").path]).status == 0)
        let verify = try target.run(["verify"])
        #expect(verify.text.contains("image file of \(damaged) is missing"), "\(verify.text)")
    }

    @Test func anImportWithADamagedFileRecordsThatImageMissing() throws {
        let (source, damaged, intact) = try Self.twoPhotos()
        let target = try BinaryRunner()
        defer {
            source.cleanUp()
            target.cleanUp()
        }
        let images = source.root.appendingPathComponent("expimg")
        let file = source.root.appendingPathComponent("y.json")
        #expect(try source.run(["export", "--images", images.path, "-o", file.path]).status == 0)
        let copy = images.appendingPathComponent(damaged)
        try Self.damage(copy)
        try #require(try target.run(["init"]).status == 0)
        let imported = try target.run(["import", file.path, "--images", images.path])
        #expect(imported.status == 3, "\(imported.stderr)")
        #expect(imported.text.contains("inserted 2"), "\(imported.text)")
        #expect(imported.stderr.contains(damaged) && imported.stderr.contains(copy.path), "\(imported.stderr)")
        #expect(imported.stderr.contains(Self.repair))
        #expect(!imported.stderr.contains(intact))
        #expect(try target.run(["show", intact]).text.contains("file:     \(target.store.path)/images/\(intact)"))
    }

    @Test func aMissingImageLooksMissingEverywhere() throws {
        let (runner, missing, intact) = try Self.twoPhotos()
        defer { runner.cleanUp() }
        try FileManager.default.removeItem(at: HealingCommandTests.imageURL(runner, missing))
        let show = try runner.run(["show", missing])
        #expect(show.status == 0)
        #expect(show.text.contains("MISSING") && show.text.contains(Self.repair), "\(show.text)")
        #expect(!(try runner.run(["show", intact]).text.contains("MISSING")))
        let list = try runner.run(["list"])
        let row = list.text.split(separator: "\n").first { $0.contains(missing) } ?? ""
        #expect(row.contains("MISSING (") && !row.contains("yes ("), "\(list.text)")
        #expect(list.stderr.contains(Self.repair))
        let json = try runner.run(["list", "--json"]).text
        let line = json.split(separator: "\n").first { $0.contains(missing) } ?? ""
        #expect(line.contains("\"imageMissing\": true"))
        #expect(!(json.split(separator: "\n").first { $0.contains(intact) } ?? "").contains("imageMissing"))
        #expect(try runner.run(["show", missing, "--json"]).text.contains("\"imageMissing\": true"))

        let get = try runner.run(["image", "get", missing, "-o", runner.root.appendingPathComponent("f").path])
        #expect(get.status == 66, "\(get.stderr)")
        #expect(get.stderr.contains(missing) && get.stderr.contains(Self.repair), "\(get.stderr)")
        try Self.damage(HealingCommandTests.imageURL(runner, intact))
        let rotten = try runner.run(["image", "get", intact, "-o", runner.root.appendingPathComponent("g").path])
        #expect(rotten.status == 66, "\(rotten.stderr)")
        #expect(rotten.stderr.contains(Self.repair))
    }

    /// `list` listed names only: a truncated photo showed as `yes (559 B)` while `show` said it
    /// was damaged. One `stat` per photo now flags it as `show` does.
    @Test func listFlagsATruncatedPhotoAsShowDoes() throws {
        let (runner, truncated, intact) = try Self.twoPhotos()
        defer { runner.cleanUp() }
        let file = HealingCommandTests.imageURL(runner, truncated)
        try Data(try Data(contentsOf: file).prefix(100)).write(to: file)
        let list = try runner.run(["list"])
        #expect(list.status == 0)
        let row = try #require(list.text.split(separator: "\n").first { $0.hasPrefix(truncated) })
        #expect(row.hasSuffix("DAMAGED (100 of 559 B)"), "\(row)")
        let other = try #require(list.text.split(separator: "\n").first { $0.hasPrefix(intact) })
        #expect(other.hasSuffix("yes (559 B)"))
        #expect(list.stderr.contains("1 image is DAMAGED") && list.stderr.contains(Self.repair), "\(list.stderr)")
        #expect(try runner.run(["list", "--json"]).text.contains("\"imageMissing\": true"))
        #expect(try runner.run(["show", truncated]).text.contains("damaged (100 bytes, not 559)"))
    }
}
