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

    /// Issue 12 §1: what a session did not apply gets one line each, named by who refused it.
    @Test func refusalsAndWithheldRecordsAreListedByWhoRefusedThem() {
        var push = SyncReport(direction: .push, peer: "nas")
        push.refused.append(.init(key: "K1", reason: "stamped in the future"))
        push.refused.countUnlisted(2)  // an older server only counts them
        push.withheld.append(.init(key: "K2", reason: "its image file is missing here"))
        #expect(
            SyncReportPrinter.warnings(push) == [
                "nas refused K1: stamped in the future",
                "nas refused 2 more record(s) without naming them (its hp-sync is older); this node offers them "
                    + "again on the next push",
                "withheld K2: its image file is missing here",
            ])
        var pull = SyncReport(direction: .pull, peer: "nas")
        pull.refused.append(.init(key: "K3", reason: "r"))
        #expect(SyncReportPrinter.warnings(pull) == ["refused K3: r"])
        #expect(
            CompletedWithWarnings(refused: 3, withheld: 1).description.hasPrefix(
                "3 records were refused and 1 record was withheld"))
    }

    /// An image the peer could not supply either is a warning naming what to do.
    @Test func imagesThePeerCouldNotSupplyAreWarnings() {
        var pull = SyncReport(direction: .pull, peer: "nas")
        pull.unhealed.append("K4")
        #expect(
            SyncReportPrinter.warnings(pull) == [
                "image of K4 is missing or damaged here and nas could not supply it either; fetch it from another "
                    + "peer: hp-sync verify --repair --from OTHER-PEER"
            ])
        #expect(
            CompletedWithWarnings(refused: 0, unhealed: 2).description.hasPrefix(
                "2 images could not be fetched again (listed above)"))
    }

    /// Past the 1,000 refusals a report names, the rest are counted: a server of the same
    /// version named them all, so it is not "older"; and a preview applied nothing.
    @Test func refusalsPastTheListAreNotBlamedOnAnOlderServer() {
        var push = SyncReport(direction: .push, peer: "sv")
        push.refused += (0..<1_101).map { SyncReport.Refusal(key: "K\($0)", reason: "r") }
        let lines = SyncReportPrinter.warnings(push)
        #expect(lines.count == 1_001)
        #expect(lines.last == "… and 101 more refused (not listed)")
        #expect(!lines.contains { $0.contains("older") })
        let preview = CompletedWithWarnings(refused: 1, preview: true).description
        #expect(!preview.contains("everything else was applied"), "\(preview)")
        #expect(preview.contains("applied nothing"), "\(preview)")
    }
}
