import Foundation
import HPSyncModel
import HPSyncTesting
import PropertyBased
import Testing

/// No value, name, serial or date a store can hold makes a command that shows items crash. The
/// records are written straight into SQLite, past the store's rules, as rows from before a rule
/// existed would be; then every view of them runs as the built binary.
@Suite("Every view of extreme records, run as a binary")
struct ExtremeRecordsCommandTests {
    /// The commands that show items, with the exit codes each may give for such a store.
    static func views(keys: [ItemKey], search: String, root: URL) -> [(arguments: [String], allowed: Set<Int32>)] {
        let ok: Set<Int32> = [0]
        var views: [(arguments: [String], allowed: Set<Int32>)] = [
            (["list"], ok), (["list", "--json"], ok), (["list", "--deleted", "--sort", "value"], ok),
            (["list", "--sort", "created"], ok), (["list", "--sort", "name"], ok), (["list", "--grep=\(search)"], ok),
            (["status"], ok), (["status", "--json"], ok), (["export"], ok), (["export", "--format", "csv"], ok),
            (["trash", "list"], ok), (["trash", "list", "--json"], ok), (["verify"], ok), (["verify", "--json"], ok),
            // Homepwner's archive holds what the app's types can: a value beyond Int32 (the
            // Objective-C class) or a date beyond what NSDate keeps is refused as bad data.
            (["export-homepwner", root.appendingPathComponent("hp-\(UUID().uuidString)").path], [0, 65]),
        ]
        for key in keys {
            views += [(["show", key.rawValue], ok), (["show", key.rawValue, "--json"], ok)]
            views += [(["trash", "list", key.rawValue], ok)]
        }
        return views
    }

    // The input is a seed: a "smaller" seed is an unrelated store, so shrinking only repeats runs.
    @Test(.shrinking(false)) func everyViewRunsWhateverTheStoreHolds() async throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        var cases = 0
        await propertyCheck(count: 12, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix64(seed: UInt64(seed))
            try? FileManager.default.removeItem(at: runner.store)
            try runner.run(["init"])
            var keys: [ItemKey] = []
            var fields: [ExtremeFields] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let key = try ItemKey(try runner.run(["add", "--name", "item"]).text.trimmingCharacters(in: .newlines))
                let extreme = ExtremeFields.random(using: &generator)
                try ExtremeRecords.overwrite(key, with: extreme, inStore: runner.store)
                keys.append(key)
                fields.append(extreme)
            }
            let trashed = ExtremeFields.random(using: &generator)
            try ExtremeRecords.addTrashEntry(
                keys[0], with: trashed, trashedAt: ExtremeRecords.dates.randomElement(using: &generator)!,
                inStore: runner.store)
            // An argument cannot hold NUL, and `--grep=` with nothing is a usage error.
            let search = String(fields[0].name.prefix(3).filter { $0 != "\u{0}" })
            let searched = search.isEmpty ? "x" : search
            for view in Self.views(keys: keys, search: searched, root: runner.root) {
                let result = try runner.run(view.arguments)
                #expect(
                    view.allowed.contains(result.status) && !result.stderr.contains("Fatal error"),
                    "\(view.arguments.prefix(3)) exited \(result.status) with seed \(seed): \(fields), trash \(trashed)\n\(result.stderr.prefix(2000))"
                )
            }
            let total = DollarTotal(fields.map(\.value))
            #expect(
                try runner.run(["list"]).text.hasSuffix("value \(total)\n"), "the exact total with seed \(seed)")
            cases += 1
        }
        #expect(cases == 12)
    }
}
