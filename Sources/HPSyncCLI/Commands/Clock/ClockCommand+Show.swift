import ArgumentParser
import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

extension ClockCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Print this machine's clock and the store's clock high-water mark.")

        @OptionGroup var options: StoreOptions

        func run() throws {
            let store = try options.openStore(warnAboutClock: false, blindAllowed: true)
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
}
