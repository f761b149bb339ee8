import ArgumentParser
import HPSyncStore

extension DebugCommand {
    /// `hp-sync debug changes --after N [--count]`: reads the change feed in pages of 1,000.
    struct Changes: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "changes", abstract: "Read the change feed.")

        @OptionGroup var options: StoreOptions
        @Option(help: "Start after this seq.") var after: Int64 = 0
        @Flag(help: "Print only the count and the elapsed time.") var count = false
        @Option(help: "Page size.") var page: Int = 1000

        func run() throws {
            let store = try options.openStore()
            let start = ContinuousClock.now
            var seq = after
            var total = 0
            var lines = ""
            while true {
                let entries = try store.changes(after: seq, limit: page)
                if entries.isEmpty { break }
                total += entries.count
                seq = entries[entries.count - 1].seq
                if !count {
                    for entry in entries {
                        lines += "\(entry.seq) \(entry.key) \(entry.version) \(entry.deleted ? "deleted" : "live")\n"
                    }
                }
            }
            let elapsed = Output.milliseconds(since: start)
            Output.write(count ? "\(total) changes in \(elapsed) ms\n" : lines)
        }
    }
}
