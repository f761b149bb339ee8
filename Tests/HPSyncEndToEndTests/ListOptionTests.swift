import Foundation
import HPSyncTesting
import Testing

@Suite("list --sort, --grep and its totals line, run as a binary")
struct ListOptionTests {
    static func names(_ result: BinaryRunner.Result) -> [String] {
        result.text.split(separator: "\n").dropFirst().filter { !$0.hasPrefix("total: ") }.map {
            String($0.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
    }

    static func inventory() throws -> BinaryRunner {
        let runner = try BinaryRunner.initialized()
        for (name, serial, value, created) in [
            ("Sofa", "SF-2231", "1200", "2021-03-01"), ("camera", "CAM-9", "350", "2023-07-15"),
            ("Lamp", "-", "20", "2019-01-02"), ("Bike", "BK-sofa-7", "640", "2022-11-30"),
        ] {
            var args = ["add", "--name", name, "--value", value, "--created", created]
            if serial != "-" { args += ["--serial", serial] }
            #expect(try runner.run(args).status == 0)
        }
        return runner
    }

    @Test func sortsByNameValueAndCreation() throws {
        let runner = try Self.inventory()
        defer { runner.cleanUp() }
        #expect(Self.names(try runner.run(["list", "--sort", "name"])) == ["Bike", "camera", "Lamp", "Sofa"])
        #expect(Self.names(try runner.run(["list", "--sort", "value"])) == ["Sofa", "Bike", "camera", "Lamp"])
        #expect(Self.names(try runner.run(["list", "--sort", "created"])) == ["Lamp", "Sofa", "Bike", "camera"])
        let json = try runner.run(["list", "--sort", "value", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == ["Sofa", "Bike", "camera", "Lamp"])
        let bad = try runner.run(["list", "--sort", "price"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("key") && bad.stderr.contains("created"))
    }

    @Test func grepMatchesNameOrSerialAndTotalsFollow() throws {
        let runner = try Self.inventory()
        defer { runner.cleanUp() }
        let all = try runner.run(["list"])
        #expect(all.text.hasSuffix("total: 4 items, value 2210\n"))
        let sofa = try runner.run(["list", "--grep", "SOFA", "--sort", "name"])
        #expect(Self.names(sofa) == ["Bike", "Sofa"])
        #expect(sofa.text.hasSuffix("total: 2 items, value 1840\n"))
        let none = try runner.run(["list", "--grep", "piano"])
        #expect(none.status == 0)
        #expect(none.text.hasSuffix("total: 0 items, value 0\n"))
        let one = try runner.run(["list", "--grep", "cam-9"])
        #expect(one.text.hasSuffix("total: 1 item, value 350\n"))
    }

    /// `--grep=` attached to a name that starts with a combining mark: the binary once refused
    /// the word as an unknown option (exit 64), the parser seeing no `=` in it.
    @Test func grepAttachedToANameStartingWithAMarkFindsIt() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        #expect(try runner.run(["add", "--name", "\u{301}accent"]).status == 0)
        let found = try runner.run(["list", "--grep=\u{301}acc"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.text.hasSuffix("total: 1 item, value 0\n"))
    }
}
