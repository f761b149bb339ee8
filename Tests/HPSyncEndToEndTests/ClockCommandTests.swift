import Foundation
import Testing

/// Clocks that were wrong must not keep hurting once they are fixed, and a node whose own clock
/// is wrong must say so rather than blame a healthy peer (issue 12 §3). Needs faketime.
@Suite(.serialized, .enabled(if: BinaryRunner.canFakeTime)) struct ClockCommandTests {
    typealias Served = CronCommandTests.Served

    @Test func aNodeWhoseClockRanAheadSaysSoAndClockResetLosesNothing() throws {
        let served = try Served(items: 0, backupPermission: "read-write")
        defer { served.cleanUp() }
        let backup = served.pair.backup
        // The backup's clock ran a day ahead while this edit was made; then it was corrected.
        let added = try backup.run(["add", "--name", "Made while ahead"], clockOffset: "+1d")
        try #require(added.status == 0, "\(added.stderr)")
        let key = added.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let status = try backup.run(["status"])
        #expect(status.stderr.contains("ahead of this machine's clock"), "\(status.stderr)")
        #expect(status.stderr.contains("hp-sync clock reset --yes --store \(backup.store.path)"), "\(status.stderr)")
        // Every edit made now is stamped a day ahead too: the server refuses it.
        #expect(try backup.run(["push", "primary", "--quiet"]).status == 3)
        // The reset wants a confirmation, then restamps the edit at the real time.
        #expect(try backup.run(["clock", "reset"]).status == 64)
        let reset = try backup.run(["clock", "reset", "--yes"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.text.contains("restamped 1 version"), "\(reset.text)")
        #expect(try backup.run(["status"]).stderr.isEmpty)
        let pushed = try backup.run(["push", "primary", "--quiet"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let shown = try served.pair.primary.run(["show", key])
        #expect(shown.text.contains("Made while ahead"), "\(shown.text) \(shown.stderr)")
    }

    @Test func aNodeWhoseClockIsAYearBehindBlamesItselfNotTheServer() throws {
        let served = try Served(items: 2)
        defer { served.cleanUp() }
        let pulled = try served.pair.backup.run(["pull", "primary", "--quiet"], clockOffset: "-365d")
        #expect(pulled.status == 3, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("this node's clock ("), "\(pulled.stderr)")
        #expect(pulled.stderr.contains("is 365 days behind primary's"), "\(pulled.stderr)")
        #expect(!pulled.stderr.contains("That node's clock is or was ahead"), "the healthy server is not blamed")
        // Once the clock is right, the same pull takes everything.
        let again = try served.pair.backup.run(["pull", "primary", "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try served.pair.backup.run(["list"]).text.contains("Item 1"))
    }
}
