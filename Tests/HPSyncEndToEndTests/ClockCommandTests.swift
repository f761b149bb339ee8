import Foundation
import HPSyncTesting
import Testing

/// Clocks that were wrong must not keep hurting once they are fixed, and a node whose own clock
/// is wrong must say so rather than blame a healthy peer (issue 12 §3). Needs faketime.
@Suite(.serialized, .enabled(if: BinaryRunner.canFakeTime)) struct ClockCommandTests {
    @Test func aNodeWhoseClockRanAheadSaysSoAndClockResetLosesNothing() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.serve(allow: "read-write")
        let backup = pair.backup
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
        let shown = try pair.primary.run(["show", key])
        #expect(shown.text.contains("Made while ahead"), "\(shown.text) \(shown.stderr)")
    }

    @Test func aNodeWhoseClockIsAYearBehindBlamesItselfNotTheServer() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(2)
        try pair.serve()
        let pulled = try pair.backup.run(["pull", "primary", "--quiet"], clockOffset: "-365d")
        #expect(pulled.status == 3, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("this node's clock ("), "\(pulled.stderr)")
        #expect(pulled.stderr.contains("is 365 days behind primary's"), "\(pulled.stderr)")
        #expect(!pulled.stderr.contains("That node's clock is or was ahead"), "the healthy server is not blamed")
        // Once the clock is right, the same pull takes everything.
        let again = try pair.backup.run(["pull", "primary", "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try pair.backup.run(["list"]).text.contains("Item 1"))
    }

    /// Issue 12 §3 follow-up: on a machine whose clock is behind, the high-water mark is ahead
    /// because other nodes stamped at times this clock has not reached. The warning says the
    /// clock is behind, never suggests the reset, and the reset refuses: it would split the
    /// inventory (the restamped versions lose to the ones peers hold, and nobody notices).
    @Test func aClockBehindIsToldApartFromAMarkLeftAheadAndResetRefuses() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(2)
        try pair.serve(allow: "read-write")
        let backup = pair.backup
        try #require(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        let edited = try backup.run(["edit", keys[0], "--value", "999"], clockOffset: "-365d")
        try #require(edited.status == 0, "\(edited.stderr)")
        #expect(edited.stderr.contains("probably behind"), "\(edited.stderr)")
        #expect(!edited.stderr.contains("clock reset --yes"), "the harmful command is not suggested: \(edited.stderr)")
        let shown = try backup.run(["clock"], clockOffset: "-365d")
        #expect(shown.text.contains("probably behind"), "\(shown.text)")
        let reset = try backup.run(["clock", "reset", "--yes"], clockOffset: "-365d")
        #expect(reset.status == 64, "\(reset.text) \(reset.stderr)")
        #expect(reset.stderr.contains("refusing to reset"), "\(reset.stderr)")
        // Nothing was restamped: with the clock right again, the edit reaches the server.
        let pushed = try backup.run(["push", "primary", "--quiet"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(try pair.primary.run(["show", keys[0]]).text.contains("999"))
    }

    /// Per-record refusals name the right node from the pusher's side: a pusher whose clock is
    /// ahead is told to fix its own clock, and one whose mark was left ahead is told to reset
    /// here, not "that node's clock is or was ahead: fix it there" about itself.
    @Test func pushRefusalsNameTheRightNode() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.serve(allow: "read-write")
        let backup = pair.backup
        try #require(try backup.run(["add", "--name", "fut4"], clockOffset: "+1d").status == 0)
        let ahead = try backup.run(["push", "primary"], clockOffset: "+1d")
        #expect(ahead.status == 3, "\(ahead.stderr)")
        #expect(ahead.stderr.contains("if this node's clock is wrong, set it right"), "\(ahead.stderr)")
        #expect(!ahead.stderr.contains("if the server's clock is wrong"), "\(ahead.stderr)")
        let markAhead = try backup.run(["push", "primary"])
        #expect(markAhead.status == 3, "\(markAhead.stderr)")
        #expect(markAhead.stderr.contains("by this node, whose clock high-water mark is ahead"), "\(markAhead.stderr)")
        #expect(!markAhead.stderr.contains("That node's clock is or was ahead"), "\(markAhead.stderr)")
    }
}
