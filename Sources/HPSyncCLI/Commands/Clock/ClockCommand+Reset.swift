import ArgumentParser
import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

extension ClockCommand {
    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset",
            abstract: "Restamp this node's versions stamped in the future as fresh edits stamped now.",
            discussion: """
                For a node whose clock ran ahead and has been corrected: its high-water mark stays in the \
                future, so its new edits are stamped there and every peer refuses them. Run it only once \
                this machine's clock is right. Every version stamped beyond the allowed skew comes back as \
                a new edit of this node with the same content, stamped now, and the mark comes back to now; \
                the next push or sync sends them. It refuses (exit 64) when versions made by other nodes are \
                stamped beyond this clock: then this clock is probably behind, and a reset would demote \
                current versions. Set the clock right instead; `--force` overrides, for when those nodes' \
                clocks ran ahead together with this one.
                """)

        @OptionGroup var options: StoreOptions

        @Flag(help: "Confirm that this machine's clock is right now.")
        var yes = false

        @Flag(help: "Reset even though versions made by other nodes are stamped beyond this clock.")
        var force = false

        func run() throws {
            let store = try options.openStore(warnAboutClock: false, blindAllowed: true)
            guard let ahead = try store.clockAhead() else {
                Output.write("the high-water mark is not ahead of this machine's clock: nothing to reset\n")
                return
            }
            if ahead.clockSeemsBehind && !force {
                throw CommandFailure(
                    status: .usage,
                    description: "refusing to reset: \(ClockText.othersEvidence(ahead)), so this machine's clock "
                        + "(\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))) is probably behind, and a "
                        + "reset would demote current versions below what their makers stamp next. Set this clock right "
                        + "(NTP); the warning then goes away by itself. Only if this clock is right and those nodes' "
                        + "clocks ran ahead together with it, run `\(options.command("clock reset --yes --force"))`")
            }
            guard yes else {
                throw CommandFailure(
                    status: .usage,
                    description:
                        "this store's high-water mark is \(ClockText.duration(ahead.aheadMilliseconds)) ahead of "
                        + "this machine's clock (\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))). If that "
                        + "time is right, run `\(options.command("clock reset --yes"))`; if it is not, set the clock first"
                )
            }
            let reset = try store.resetClock()
            Output.write(
                "restamped \(reset.restamped.count) version\(reset.restamped.count == 1 ? "" : "s") as edits stamped now; "
                    + "high-water mark \(DateText.iso8601(milliseconds: Int64(reset.highWaterBefore.milliseconds))) -> "
                    + "\(DateText.iso8601(milliseconds: Int64(reset.highWaterAfter.milliseconds))); push or sync to send them\n"
            )
        }
    }
}
