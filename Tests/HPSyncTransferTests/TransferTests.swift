import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

@Suite("Export and import")
struct TransferTests {
    /// The export without its first lines (store and node IDs differ between stores).
    static func itemsPart(_ data: Data) -> String {
        let text = String(decoding: data, as: UTF8.self)
        return String(text[text.range(of: "\"items\"")!.lowerBound...])
    }

    static func populated(_ dir: TempDirectory) throws -> Store {
        let store = try Fixtures.makeStore(dir)
        _ = try store.add(
            ItemDraft(
                name: "Camera, \"good\"", serialNumber: "S-1", valueInDollars: 350, dateCreatedMilliseconds: 1_234_567,
                imageFile: dir.file("c.jpg", jpeg(5))))
        let gone = try store.add(ItemDraft(name: "Gone", valueInDollars: 1))
        _ = try store.add(ItemDraft(name: "Plain\nname", valueInDollars: -3, dateCreatedMilliseconds: -1))
        _ = try store.delete([gone.key])
        return store
    }

    @Test func roundTripIsLosslessAndIdempotent() throws {
        let dir = TempDirectory()
        let store = try Self.populated(dir)
        let exportFile = dir.url.appendingPathComponent("export.json")
        let imagesDir = dir.url.appendingPathComponent("export-images")
        try store.exportJSON(to: exportFile, imagesDirectory: imagesDir)

        let otherDir = TempDirectory()
        let other = try Fixtures.makeStore(otherDir, node: Fixtures.nodeB)
        let changes = try other.importJSON(from: exportFile, imagesDirectory: imagesDir)
        #expect(changes.inserted.count == 2)
        #expect(changes.imagesWritten == 1)
        #expect(try other.items(includeDeleted: true) == store.items(includeDeleted: true))
        let exportedAgain = Self.itemsPart(try other.exportJSON())
        let exportedFirst = Self.itemsPart(try store.exportJSON())
        #expect(exportedAgain == exportedFirst)

        let seq = try other.lastSeq
        let again = try other.importJSON(from: exportFile, imagesDirectory: nil)
        #expect(again.isEmpty)
        #expect(try other.lastSeq == seq)
        #expect(try other.verify(repair: false).isClean)
    }

    @Test func exportStartsWithTheHeader() throws {
        let dir = TempDirectory()
        let store = try Self.populated(dir)
        let text = String(decoding: try store.exportJSON(), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"format\": \"hp-sync-export\",\n  \"version\": 1,"))
    }

    /// Issue 14 §3: an export without its images imports every record, each image recorded as
    /// missing (listed by verify, remembered for healing); a wrong images directory still fails
    /// clearly and imports nothing.
    @Test func importWithoutTheImagesRecordsThemMissing() throws {
        let dir = TempDirectory()
        let store = try Self.populated(dir)
        let exportFile = dir.url.appendingPathComponent("export.json")
        try store.exportJSON(to: exportFile)
        let otherDir = TempDirectory()
        let other = try Fixtures.makeStore(otherDir)
        let empty = otherDir.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: StoreError.self) { try other.importJSON(from: exportFile, imagesDirectory: empty) }
        #expect(try other.items(includeDeleted: true).isEmpty)

        let changes = try other.importJSON(from: exportFile, imagesDirectory: nil)
        let withImages = try store.items(includeDeleted: false).filter { $0.image != nil }.map(\.key)
        #expect(changes.inserted.count == (try store.items(includeDeleted: false).count))
        #expect(changes.imagesMissing.sorted() == withImages.sorted())
        #expect(try other.verify(repair: false).missingImages.sorted() == withImages.sorted())
        #expect(try other.imagesToHeal().map(\.key).sorted() == withImages.sorted())
    }

    /// A record an import file cannot hold is bad input data (exit 65), not a peer's protocol
    /// fault (the same check raises `invalidRecord` for records received from a peer).
    @Test func anImportedNameOverTheLimitIsBadInputAndImportsNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let long = String(repeating: "x", count: ItemLimits.maxNameBytes + 1)
        let json = """
            {"format": "hp-sync-export", "version": 1, "items": [
              {"key": "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04", "name": "fine", "dateCreatedMilliseconds": 0},
              {"key": "5A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04", "name": "\(long)", "dateCreatedMilliseconds": 0}
            ]}
            """
        let file = dir.file("import.json", Array(json.utf8))
        #expect {
            try store.importJSON(from: file, imagesDirectory: nil)
        } throws: { error in
            guard case StoreError.invalidImport(let reason) = error else { return false }
            return reason.contains("5A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")
        }
        #expect(try store.items().isEmpty)
    }

    @Test func csvQuotesFields() throws {
        let dir = TempDirectory()
        let store = try Self.populated(dir)
        let csv = String(decoding: try store.exportCSV(), as: UTF8.self)
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines[0] == "key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize,imageMissing")
        #expect(csv.contains(",\"Camera, \"\"good\"\"\",S-1,350,1970-01-01T00:20:34.567Z,"))
        #expect(csv.contains("\"Plain\nname\",,-3,1969-12-31T23:59:59.999Z,,"))
    }

    /// A spreadsheet's TRUE reads as true; anything but true, false or empty is refused.
    @Test func csvImageMissingTakesTrueOrNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let digest = String(repeating: "ab", count: 32)
        let header = "key,name,imageSHA256,imageSize,imageMissing\r\n"
        let marked = dir.file(
            "marked.csv", Array((header + "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04,Lamp,\(digest),10,TRUE\r\n").utf8))
        let changes = try store.importCSV(from: marked, imagesDirectory: dir.url)
        #expect(changes.imagesMissing.map(\.rawValue) == ["4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04"])
        let bad = dir.file(
            "bad.csv", Array((header + "5A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04,Desk,\(digest),10,maybe\r\n").utf8))
        #expect {
            try store.importCSV(from: bad, imagesDirectory: dir.url)
        } throws: { error in
            guard case StoreError.invalidImport(let reason) = error else { return false }
            return reason.contains("line 2") && reason.contains("imageMissing 'maybe'")
        }
    }

    @Test(arguments: [
        ("2024-02-29", Int64(1_709_164_800_000)), ("2024-02-29T12:00:00Z", 1_709_208_000_000),
        ("2024-02-29T12:00:00.5Z", 1_709_208_000_500), ("2024-02-29T14:00:00+02:00", 1_709_208_000_000),
    ])
    func datesParse(text: String, milliseconds: Int64) {
        #expect(DateText.parse(text) == milliseconds)
        #expect(DateText.parse(DateText.iso8601(milliseconds: milliseconds)) == milliseconds)
    }

    @Test(arguments: ["2023-02-29", "2024-13-01", "yesterday", "2024-01-01T25:00Z", "2024-01-01T10:00"])
    func badDatesAreRejected(text: String) {
        #expect(DateText.parse(text) == nil)
    }
}
