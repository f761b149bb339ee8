import HPSyncEngine
import Testing

@testable import HPSyncCLI

@Suite struct ProgressLineTests {
    func progress(_ direction: SyncReport.Direction, entries: Int, total: Int?) -> SyncProgress {
        var progress = SyncProgress(direction: direction)
        progress.entries = entries
        progress.items = entries - 20
        progress.images = 12
        progress.bytes = 3_100_000
        progress.imageBytes = 2_900_000
        progress.totalEntries = total
        return progress
    }

    @Test func aPushWithAKnownTotalShowsItAndAnETA() {
        // 500 of 2000 entries in 10 s: 1500 more at 50 per second.
        #expect(
            ProgressLine.text(progress(.push, entries: 500, total: 2000), peer: "nas", elapsed: 10)
                == "pushing to nas: 500/2000 entries, 480 items, 12 images (2.9 MB), 310.0 KB/s, 10 s, ETA 30 s")
        #expect(
            ProgressLine.text(progress(.push, entries: 100, total: 100_000), peer: "nas", elapsed: 60)
                .hasSuffix(", 60 s, ETA 16 h 39 min"))
        // All entries listed, images of the last page still coming: no "ETA 0 s" (issue 16).
        #expect(
            ProgressLine.text(progress(.push, entries: 2000, total: 2000), peer: "nas", elapsed: 10)
                .hasSuffix(", 10 s, finishing"))
    }

    /// Where images dominate, the entries are listed long before their images arrive: the ETA
    /// goes by whichever has more left, and the line shows the bytes of the announced total.
    @Test func imagesBytesOfAKnownTotalDriveTheETA() {
        var pull = progress(.pull, entries: 1000, total: 1000)
        pull.imageBytes = 12_000_000
        pull.totalImageBytes = 48_300_000
        // 36.3 MB more at 1.2 MB per second: 30.25 s, shown rounded up.
        #expect(
            ProgressLine.text(pull, peer: "nas", elapsed: 10)
                == "pulling from nas: 1000/1000 entries, 980 items, 12 images (12.0/48.3 MB), 310.0 KB/s, 10 s, ETA 31 s"
        )
        // The entries have more left (1500 of 2000 to go): they decide.
        var push = progress(.push, entries: 500, total: 2000)
        push.imageBytes = 24_000_000
        push.totalImageBytes = 48_000_000
        #expect(
            ProgressLine.text(push, peer: "nas", elapsed: 10).hasSuffix("(24.0/48.0 MB), 310.0 KB/s, 10 s, ETA 30 s"))
        // No image bytes yet: no rate to take from them, the entries decide.
        push.imageBytes = 0
        #expect(
            ProgressLine.text(push, peer: "nas", elapsed: 10).hasSuffix("(0.0/48.0 MB), 310.0 KB/s, 10 s, ETA 30 s"))
        #expect(SyncReportPrinter.formatBytes(900, of: 999) == "900/999 B")
    }

    @Test func noETAWithoutATotalOrARate() {
        let pull = ProgressLine.text(progress(.pull, entries: 500, total: nil), peer: "nas", elapsed: 10)
        #expect(pull == "pulling from nas: 500 entries, 480 items, 12 images (2.9 MB), 310.0 KB/s, 10 s")
        // Nothing done yet, or too early to have a rate: no made-up number.
        #expect(!ProgressLine.text(progress(.push, entries: 0, total: 2000), peer: "p", elapsed: 10).contains("ETA"))
        #expect(!ProgressLine.text(progress(.push, entries: 5, total: 2000), peer: "p", elapsed: 0.5).contains("ETA"))
    }
}
