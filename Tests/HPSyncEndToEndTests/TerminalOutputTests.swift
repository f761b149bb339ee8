import Foundation
import HPSyncTesting
import Testing

@Suite("output a terminal can trust, run as a binary")
struct TerminalOutputTests {
    // NUL is left out: the import cuts a name at NUL before it reaches the store.
    static let hostile = "Lamp\u{1B}[2J\u{7}\u{202E}gpj.exe\tx\ny"

    /// A store holding one item named `name`, made by importing an edited export (the way a
    /// peer's or a file's text arrives; typed names with control characters are refused).
    static func storeWithItem(named name: String, serial: String = "S-1") throws -> BinaryRunner {
        let runner = try BinaryRunner.initialized()
        try runner.run(["add", "--name", "PLACEHOLDER", "--serial", serial, "--value", "12"])
        var text = try runner.run(["export"]).text
        let encoded = String(decoding: try JSONEncoder().encode(name), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"PLACEHOLDER\"", with: encoded)
        let file = try runner.file("edited.json", Array(text.utf8))
        try FileManager.default.removeItem(at: runner.store)
        try runner.run(["init"])
        let imported = try runner.run(["import", file.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        return runner
    }

    @Test func controlCharactersAreEscapedInHumanOutputAndKeptInJSON() throws {
        let runner = try Self.storeWithItem(named: Self.hostile)
        defer { runner.cleanUp() }
        let list = try runner.run(["list"])
        #expect(list.status == 0)
        #expect(!list.stdout.contains(0x1B) && !list.stdout.contains(7) && !list.stdout.contains(0x09))
        #expect(list.text.contains("Lamp\\e[2J\\u{0007}\\u{202E}gpj.exe\\tx\\ny"))
        #expect(list.text.split(separator: "\n").count == 3)  // header, item, totals
        let key = try #require(
            list.text.split(separator: "\n").dropFirst().first?.split(separator: " ").first.map(String.init))
        let show = try runner.run(["show", key])
        #expect(show.text.contains("name:     Lamp\\e[2J\\u{0007}\\u{202E}gpj.exe\\tx\\ny\n"))
        #expect(!show.stdout.contains(0x1B))
        let json = try runner.run(["list", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(items.first?["name"] as? String == Self.hostile)
    }

    @Test func typedControlCharactersAreRefused() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let added = try runner.run(["add", "--name", "x\u{1B}[2J"])
        #expect(added.status == 65)
        #expect(added.stderr.contains("'x\\e[2J' holds control characters"))
        #expect(!added.stderr.utf8.contains(0x1B))
        let serial = try runner.run(["add", "--name", "ok", "--serial", "a\u{202E}b"])
        #expect(serial.status == 65)
        let key = try runner.run(["add", "--name", "ok"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let edited = try runner.run(["edit", key, "--name", "tab\there"])
        #expect(edited.status == 65)
        #expect(try runner.run(["list", "--json"]).text.contains("\"ok\""))
    }

    @Test func tableColumnsAlignByDisplayWidth() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for (name, serial) in [("相机", "SER-A"), ("Lamp", "SER-B"), ("📷 cam", "SER-C"), ("Café", "SER-D")] {
            let added = try runner.run(["add", "--name", name, "--serial", serial])
            #expect(added.status == 0, "\(added.stderr)")
        }
        let lines = try runner.run(["list"]).text.split(separator: "\n").filter { $0.contains("SER-") }
        #expect(lines.count == 4)
        let columns = Set(lines.map { line in Self.columns(String(line[..<line.range(of: "SER-")!.lowerBound])) })
        #expect(columns.count == 1, "\(lines)")
    }

    /// Display columns of `text` for the characters this test uses.
    static func columns(_ text: String) -> Int {
        text.reduce(0) { total, character in
            let scalar = character.unicodeScalars.first!.value
            return total + ((0x4E00...0x9FFF).contains(scalar) || (0x1F300...0x1F64F).contains(scalar) ? 2 : 1)
        }
    }

    @Test func valuesAndBlankNamesGetClearMessages() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        // A negative value is a value (the model carries any Int64), not a missing one.
        let negative = try runner.run(["add", "--name", "a", "--value", "-5"])
        #expect(negative.status == 0, "\(negative.stderr)")
        let cents = try runner.run(["add", "--name", "a", "--value", "35.5"])
        #expect(cents.status == 64)
        #expect(cents.stderr.contains("whole dollars, without cents; round it (e.g. 35 or 36)"), "\(cents.stderr)")
        let blank = try runner.run(["add", "--name", "   "])
        #expect(blank.status == 64)
        #expect(blank.stderr.contains("--name must not be blank"))
        let key = try runner.run(["add", "--name", "a", "--value", "7"]).text.trimmingCharacters(in: .newlines)
        #expect(try runner.run(["edit", key, "--value", "1.25"]).status == 64)
        #expect(try runner.run(["edit", key, "--name", " "]).status == 64)
        #expect(try runner.run(["list", "--json"]).text.contains("\"valueInDollars\": 7"))
    }
}
