import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PropertyBased
import Testing

@testable import HPSyncWeb

/// No value, name, serial or date a store can hold makes a page fail. The records are written
/// straight into SQLite, past the store's rules, as rows from before a rule existed would be.
@Suite struct WebExtremeRecordsTests {
    /// Every page that shows items, a search of each field's text included.
    static func pages(for keys: [ItemKey], search: String) -> [String] {
        [
            "/", "/?view=table", "/?sort=value&dir=asc", "/?sort=value&view=table", "/?sort=name&dir=asc",
            "/?sort=date&dir=asc&view=table", "/?q=\(Format.query(search))", "/?q=\(Format.query(search))&view=table",
            "/report", "/sync", "/new",
        ]
            + keys.flatMap { ["/items/\($0)", "/items/\($0)/delete"] }
    }

    /// Two values at Int64's limit once made the grid, the table and search answer 500 (SQLite
    /// "integer overflow") and the report trap; their total is exact now.
    @Test func twoValuesAtInt64sLimitAddUpOnEveryPage() async throws {
        let fixture = try WebFixture()
        for name in ["Mansion", "Manor"] {
            let item = try fixture.store.add(ItemDraft(name: name))
            try ExtremeRecords.overwrite(
                item.key, with: ExtremeFields(name: name, serial: nil, value: .max, date: 0),
                inStore: fixture.store.directory)
        }
        try await fixture.test { client in
            for uri in ["/", "/?view=table", "/?q=man", "/report"] {
                let page = try await client.execute(uri: uri, method: .get, headers: fixture.cookie)
                #expect(page.status == .ok, "\(uri)")
                #expect(page.text.contains("$18,446,744,073,709,551,614"), "\(uri) shows the exact total")
            }
        }
    }

    // The input is a seed: a "smaller" seed is an unrelated store, so shrinking only repeats runs.
    @Test(.shrinking(false)) func everyPageRendersWhateverTheStoreHolds() async throws {
        var cases = 0
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix64(seed: UInt64(seed))
            let fixture = try WebFixture()
            var keys: [ItemKey] = []
            var fields: [ExtremeFields] = []
            for index in 0..<Int.random(in: 1...5, using: &generator) {
                let item = try fixture.store.add(ItemDraft(name: "item \(index)"))
                let extreme = ExtremeFields.random(using: &generator)
                try ExtremeRecords.overwrite(item.key, with: extreme, inStore: fixture.store.directory)
                keys.append(item.key)
                fields.append(extreme)
            }
            let trashed = ExtremeFields.random(using: &generator)
            try ExtremeRecords.addTrashEntry(
                keys[0], with: trashed, trashedAt: ExtremeRecords.dates.randomElement(using: &generator)!,
                inStore: fixture.store.directory)
            let search = String(fields[0].name.prefix(3))
            let (allKeys, allFields) = (keys, fields)
            try await fixture.test { client in
                for uri in Self.pages(for: allKeys, search: search) {
                    let page = try await client.execute(uri: uri, method: .get, headers: fixture.cookie)
                    #expect(page.status == .ok, "\(uri) with seed \(seed): \(allFields), trash \(trashed)")
                }
            }
            cases += 1
        }
        #expect(cases == 40)
    }
}
