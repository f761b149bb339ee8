import Foundation
import HPSyncTesting
import Testing

@Suite("CSV export a spreadsheet can trust, and import of it, run as a binary")
struct CSVTests {
    @Test func formulaCellsAreGuardedAndReadBackExactly() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let names = ["=HYPERLINK(\"http://x\",\"y\")", "+1", "-2", "@SUM(A1)", "'quoted'", "Plain, with comma"]
        for (index, name) in names.enumerated() {
            #expect(try runner.run(["add", "--name=\(name)", "--serial", "=cmd", "--value", "\(index)"]).status == 0)
        }
        let csv = try runner.run(["export", "--format", "csv"]).text
        for line in csv.split(separator: "\r\n").dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.hasPrefix("\"") ? String($0.dropFirst()) : String($0)
            }
            #expect(!"=+-@".contains(cells[1].first!), "\(line)")
            #expect(cells.contains("'=cmd"), "\(line)")
        }
        #expect(csv.contains("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""))
        #expect(csv.contains(",''quoted',"))
        let file = try runner.file("inventory.csv", Array(csv.utf8))
        // Read back into the same store: nothing changed, nothing to do.
        let same = try runner.run(["import", file.path])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.text.hasPrefix("inserted 0, updated 0, deleted 0"))
        // Into a new store: every name and serial exactly as it was.
        let other = runner.root.appendingPathComponent("other").path
        try runner.run(["init", "--store", other], withStore: false)
        let imported = try runner.run(["import", file.path, "--store", other], withStore: false)
        #expect(imported.text.hasPrefix("inserted \(names.count), updated 0"), "\(imported.stderr)")
        let json = try runner.run(["list", "--json", "--store", other], withStore: false)
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(Set(items.compactMap { $0["name"] as? String }) == Set(names))
        #expect(items.allSatisfy { $0["serialNumber"] as? String == "=cmd" })
    }

    @Test func aSpreadsheetEditBecomesALocalEdit() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "Camera", "--value", "350", "--image", image.path]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try runner.run(["add", "--name", "Lamp", "--value", "20"])
        var csv = try runner.run(["export", "--format", "csv"]).text
        csv = csv.replacingOccurrences(of: ",Camera,,350,", with: ",\"Camera, old\",SN-1,400,")
        // A new row written by hand: key, name and value only.
        csv += "0A0B0C0D-0000-4000-8000-000000000001,Kettle,,30,,,\r\n"
        let file = try runner.file("edited.csv", Array(csv.utf8))
        let imported = try runner.run(["import", file.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.hasPrefix("inserted 1, updated 1, deleted 0"))
        let show = try runner.run(["show", key])
        #expect(show.text.contains("name:     Camera, old") && show.text.contains("serial:   SN-1"))
        #expect(show.text.contains("value:    400") && show.text.contains("image:    \(Images.jpeg.count) bytes"))
        let broken = try runner.file("broken.csv", Array("key,name,valueInDollars\r\nnot-a-key,x,1\r\n".utf8))
        let refused = try runner.run(["import", broken.path])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("CSV line 2: 'not-a-key' is not an item key"))
    }

    /// Regression (issue 35 §4): a CSV without a `key` column was refused (65); a spreadsheet of
    /// new items imports as new items, each under a fresh key.
    @Test func rowsWithoutKeysImportAsNewItems() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try runner.run(["add", "--name", "Lamp", "--value", "20"])
        let keyless = try runner.file("new.csv", Array("name,valueInDollars\r\nKettle,30\r\nToaster,25\r\n".utf8))
        let imported = try runner.run(["import", keyless.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.hasPrefix("inserted 2, updated 0, deleted 0"), "\(imported.text)")
        // An empty key cell in a file with keys is a new item too.
        let mixed = try runner.file("mixed.csv", Array("key,name\r\n,Radio\r\n".utf8))
        #expect(try runner.run(["import", mixed.path]).text.hasPrefix("inserted 1, updated 0"))
        let json = try runner.run(["list", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(Set(items.compactMap { $0["name"] as? String }) == ["Lamp", "Kettle", "Toaster", "Radio"])
        #expect(Set(items.compactMap { $0["key"] as? String }).count == 4)
        #expect(items.first { $0["name"] as? String == "Toaster" }?["valueInDollars"] as? Int == 25)

        let withImage = try runner.file(
            "image.csv", Array("name,imageSHA256,imageSize\r\nCam,\(String(repeating: "ab", count: 32)),10\r\n".utf8))
        let refused = try runner.run(["import", withImage.path])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("CSV line 2: a row without a key cannot name an image"), "\(refused.stderr)")
        let nameless = try runner.file("nameless.csv", Array("key,value\r\n,1\r\n".utf8))
        #expect(try runner.run(["import", nameless.path]).status == 65)
    }
}
