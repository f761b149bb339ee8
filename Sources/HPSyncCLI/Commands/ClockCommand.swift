import ArgumentParser
import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

/// `hp-sync clock`: this machine's clock against the store's high-water mark, and the recovery
/// for a node whose clock ran ahead and was corrected (README "Clocks").
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show this node's clock and high-water mark; `clock reset --yes` brings a mark left ahead back.",
        subcommands: [ClockShowCommand.self, ClockResetCommand.self], defaultSubcommand: ClockShowCommand.self)
}

struct ClockShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print this machine's clock and the store's clock high-water mark.")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let store = try options.openStore(warnAboutClock: false)
        let now = store.nowMilliseconds()
        Output.write("clock:      \(DateText.iso8601(milliseconds: Int64(now)))\n")
        if let ahead = try store.clockAhead() {
            let mark = DateText.iso8601(milliseconds: Int64(ahead.highWaterMilliseconds))
            let by = "ahead by \(ClockText.duration(ahead.aheadMilliseconds))"
            Output.write(
                ahead.clockSeemsBehind
                    ? "high water: \(mark) (\(by); \(ClockText.othersEvidence(ahead)): this clock is probably behind, "
                        + "set it right)\n"
                    : "high water: \(mark) (\(by): run `\(options.command("clock reset --yes"))` if this clock is "
                        + "right)\n")
        } else {
            Output.write("high water: not ahead of the clock\n")
        }
    }
}

struct ClockResetCommand: ParsableCommand {
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
        let store = try options.openStore(warnAboutClock: false)
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
                description: "this store's high-water mark is \(ClockText.duration(ahead.aheadMilliseconds)) ahead of "
                    + "this machine's clock (\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))). If that "
                    + "time is right, run `\(options.command("clock reset --yes"))`; if it is not, set the clock first")
        }
        let reset = try store.resetClock()
        Output.write(
            "restamped \(reset.restamped.count) version\(reset.restamped.count == 1 ? "" : "s") as edits stamped now; "
                + "high-water mark \(DateText.iso8601(milliseconds: Int64(reset.highWaterBefore.milliseconds))) -> "
                + "\(DateText.iso8601(milliseconds: Int64(reset.highWaterAfter.milliseconds))); push or sync to send them\n"
        )
    }
}

/// The texts about a store's clock every command may print.
enum ClockText {
    /// The warning for a store whose high-water mark is ahead of this machine's clock.
    static func warning(_ ahead: ClockAhead, recovery: String) -> String {
        if ahead.clockSeemsBehind {
            return "this machine's clock (\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))) is "
                + "probably behind: \(othersEvidence(ahead)). Edits made here are stamped after them, not by this "
                + "clock, and peers whose clocks are right accept them. Set this machine's clock right (NTP); do not "
                + "run `clock reset`, which would demote current versions"
        }
        return
            "this store's clock high-water mark (\(DateText.iso8601(milliseconds: Int64(ahead.highWaterMilliseconds)))) is "
            + "\(duration(ahead.aheadMilliseconds)) ahead of this machine's clock "
            + "(\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))): edits made here are stamped in the "
            + "future and peers refuse them. If this machine's clock is right, run `\(recovery)` (those edits come "
            + "back stamped now, same content); if it is behind, set it right instead"
    }

    /// "3 versions made by other nodes are stamped up to 365 days after this clock (2026-…)".
    static func othersEvidence(_ ahead: ClockAhead) -> String {
        let latest = ahead.othersLatestMilliseconds ?? ahead.highWaterMilliseconds
        let gap = latest > ahead.nowMilliseconds ? latest - ahead.nowMilliseconds : 0
        return "\(ahead.othersAhead) version\(ahead.othersAhead == 1 ? "" : "s") made by other nodes "
            + "\(ahead.othersAhead == 1 ? "is" : "are") stamped up to \(duration(gap)) after this clock "
            + "(\(DateText.iso8601(milliseconds: Int64(latest))))"
    }

    static func duration(_ milliseconds: UInt64) -> String { ClockSkew.duration(milliseconds) }
}
