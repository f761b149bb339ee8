import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

/// Values outside a signed 32-bit integer's range are refused at every way in from the command line, and
/// totals of whatever the store already holds come out exact.
@Suite("The value range, run as a binary")
struct ValueRangeTests {
    /// `add --value 9223372036854775808` once trapped converting a Double to Int64 (exit 132).
    @Test(arguments: [
        "9223372036854775808", "-9223372036854775809", "9223372036854775807", "2147483648", "-2147483649",
        "1e30", "99999999999999999999999.5", "-1e19", "inf", "nan", "0x10", "", " ", "--", "1_000",
    ])
    func addAndEditRefuseAnyValueOutsideTheRangeWithAUsageError(value: String) throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let added = try runner.run(["add", "--name", "Lamp", "--value", value])
        #expect(added.status == 64, "\(value): \(added.stderr)")
        #expect(added.stderr.contains("hp-sync: error:") || added.stderr.contains("Error:"), "\(value)")
        #expect(!added.stderr.contains("Fatal error"), "\(value)")
        let key = try runner.run(["add", "--name", "Lamp", "--value", "5"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let edited = try runner.run(["edit", key, "--value", value])
        #expect(edited.status == 64, "\(value): \(edited.stderr)")
        #expect(try runner.run(["show", key, "--json"]).text.contains("\"valueInDollars\": 5"))
    }

    @Test func theRangesEndsAreAccepted() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for value in ["2147483647", "-2147483648", " 8 "] {
            #expect(try runner.run(["add", "--name", "Edge", "--value", value]).status == 0, "\(value)")
        }
        #expect(try runner.run(["list"]).text.contains("total: 3 items, value 7\n"))
    }

    @Test func outOfRangeTooBigGivesTheRangeInTheMessage() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let added = try runner.run(["add", "--name", "Lamp", "--value", "9223372036854775808"])
        #expect(added.stderr.contains("-2147483648...2147483647"), "\(added.stderr)")
    }

    @Test func importsRefuseAValueOutsideTheRangeNamingTheItem() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let key = "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04"
        let json = """
            {"format": "hp-sync-export", "version": 1, "items": [
              {"key": "\(key)", "name": "Yacht", "valueInDollars": 9223372036854775807,
               "dateCreated": "2024-01-01T00:00:00.000Z"}]}
            """
        let jsonFile = try runner.file("items.json", Array(json.utf8))
        for arguments in [["import", jsonFile.path], ["import", "-n", jsonFile.path]] {
            let imported = try runner.run(arguments)
            #expect(imported.status == 65, "\(arguments): \(imported.stderr)")
            #expect(imported.stderr.contains(key), "\(imported.stderr)")
        }
        let csv = "key,name,valueInDollars\r\n\(key),Yacht,2147483648\r\n"
        let csvFile = try runner.file("items.csv", Array(csv.utf8))
        let fromCSV = try runner.run(["import", csvFile.path])
        #expect(fromCSV.status == 65, "\(fromCSV.stderr)")
        #expect(fromCSV.stderr.contains(key) && fromCSV.stderr.contains("2147483648"), "\(fromCSV.stderr)")
        #expect(try runner.run(["list"]).text.contains("total: 0 items"))
    }

    /// Two items at Int64's limit: the total was saturated (silently wrong); now it is exact.
    @Test func listTotalsValuesFromBeforeTheRangeExactly() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for value in [Int64.max, .max, .min] {
            let key = try ItemKey(try runner.run(["add", "--name", "Old"]).text.trimmingCharacters(in: .newlines))
            try ExtremeRecords.overwrite(
                key, with: ExtremeFields(name: "Old", serial: nil, value: value, date: 0), inStore: runner.store)
        }
        let list = try runner.run(["list"])
        #expect(list.status == 0)
        #expect(list.text.hasSuffix("total: 3 items, value 9223372036854775806\n"), "\(list.text)")
        let two = try runner.run(["list", "--grep", "old", "--sort", "value"])
        #expect(two.text.contains("value 9223372036854775806"))
    }
}
