import Foundation
import HPSyncTesting
import Testing

/// A dry run reports what the real run moves: the same changes, the same images and bytes.
@Suite(.serialized) struct DryRunCountsTests {
    /// The counts of a push or pull `--json` that a preview must match. A push's changes are
    /// the server's (`peerCounts`, from its PageDone); a pull's `peerCounts` say what the server
    /// sent, which in a preview is no image bytes.
    static func counts(_ result: BinaryRunner.Result, push: Bool = true) throws -> [String: Int] {
        let json = try JSONOutputTests.object(result)
        var counts: [String: Int] = [:]
        for key in ["insertedCount", "updatedCount", "deletedCount", "imagesTransferred", "imageBytes"] {
            counts[key] = json[key] as? Int
        }
        guard push else { return counts }
        let peer = try #require(json["peerCounts"] as? [String: Any])
        for key in ["inserted", "updated", "deleted", "images", "imageBytes"] {
            counts["peer." + key] = peer[key] as? Int
        }
        return counts
    }

    static func add(_ runner: BinaryRunner, _ name: String, image: URL? = nil) throws -> String {
        let result = try runner.run(["add", "--name", name] + (image.map { ["--image", $0.path] } ?? []))
        try #require(result.status == 0, "\(result.stderr)")
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The server has one photo already; the push brings a new photo on an edit, one photo on
    /// two new items (sent once), the server's photo on a new item (no bytes), and a deletion.
    @Test func pushPreviewCountsWhatThePushMoves() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let photo = { (name: String, fill: UInt8, size: Int) in
            try pair.backup.file(name, Images.jpeg + Array(repeating: fill, count: size))
        }
        let known = try photo("known.jpg", 1, 3000)
        _ = try Self.add(pair.backup, "Couch", image: known)
        let chair = try Self.add(pair.backup, "Chair")
        let table = try Self.add(pair.backup, "Table")
        try pair.serve(allow: "read-write")
        try #require(try pair.backup.run(["push", "primary"]).status == 0)

        try #require(try pair.backup.run(["image", "set", chair, try photo("chair.jpg", 2, 4000).path]).status == 0)
        let shared = try photo("shared.jpg", 3, 5000)
        _ = try Self.add(pair.backup, "Lamp", image: shared)
        _ = try Self.add(pair.backup, "Desk", image: shared)
        _ = try Self.add(pair.backup, "Rug", image: known)
        try #require(try pair.backup.run(["rm", table]).status == 0)

        let preview = try pair.backup.run(["push", "primary", "-n", "--json"])
        try #require(preview.status == 0, "\(preview.stderr)")
        let real = try pair.backup.run(["push", "primary", "--json"])
        try #require(real.status == 0, "\(real.stderr)")
        let expected = Images.jpeg.count * 2 + 4000 + 5000
        #expect(try Self.counts(real)["imageBytes"] == expected, "the push sends two photos")
        #expect(try Self.counts(preview) == Self.counts(real))
        let text = try pair.backup.run(["push", "primary", "-n"])
        #expect(text.text.contains("0 images (0 B)"), "all pushed: \(text.text)")
    }

    /// A pull preview counts the images the pull fetches, once per photo, none it holds.
    @Test func pullPreviewCountsWhatThePullMoves() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let shared = try pair.primary.file("shared.jpg", Images.jpeg + Array(repeating: 4, count: 6000))
        _ = try Self.add(pair.primary, "Lamp", image: shared)
        _ = try Self.add(pair.primary, "Desk", image: shared)
        _ = try Self.add(pair.primary, "Chair")
        try pair.serve()

        let preview = try pair.backup.run(["pull", "primary", "-n", "--json"])
        try #require(preview.status == 0, "\(preview.stderr)")
        let real = try pair.backup.run(["pull", "primary", "--json"])
        try #require(real.status == 0, "\(real.stderr)")
        #expect(try Self.counts(real, push: false)["imagesTransferred"] == 1)
        #expect(try Self.counts(preview, push: false) == Self.counts(real, push: false))
    }
}
