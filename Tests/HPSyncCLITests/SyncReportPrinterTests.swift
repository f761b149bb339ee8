import HPSyncEngine
import Testing

@testable import HPSyncCLI

@Suite struct SyncReportPrinterTests {
    @Test func aDryRunListsTheKeptKeysThenHowManyMore() {
        var report = SyncReport(direction: .pull, peer: "nas")
        report.dryRun = true
        report.inserted += (0..<1_500).map { "NEW-\($0)" }
        report.deleted += ["OLD-1", "OLD-2"]
        let lines = SyncReportPrinter.listing(report).split(separator: "\n").map(String.init)
        #expect(lines.count == 1_000 + 1 + 2)
        #expect(lines.first == "insert NEW-0" && lines[999] == "insert NEW-999")
        #expect(lines[1_000] == "… and 500 more inserts")
        #expect(Array(lines.suffix(2)) == ["delete OLD-1", "delete OLD-2"], "no note when nothing was left out")
        #expect(SyncReportPrinter.summary(report).contains(": 1500 inserted, 0 updated, 2 deleted,"))
    }
}
