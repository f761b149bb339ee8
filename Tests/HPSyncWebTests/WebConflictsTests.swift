import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// The Conflicts page: both values side by side, one action to take the other.
@Suite struct WebConflictsTests {
    /// Renames `key` here while another node renamed it too (its edit joined in as a pull would).
    static func clash(_ store: Store, _ key: ItemKey) throws {
        var remote = try #require(try store.mergeState(key))
        let stamp = VersionStamp(rawValue: remote.version.stamp.rawValue + (1 << 30))
        try remote.apply(FieldEdit(name: "Telecaster <b>"), at: Version(stamp: stamp, origin: Fixtures.nodeB))
        _ = try store.edit(key, ItemEdit(name: "Strat"))
        var record = IncomingRecord(item: remote.item)
        record.mergeState = remote
        _ = try store.applyRemote([record], checkpoint: nil)
    }

    @Test func thePageShowsBothValuesAndTakesTheOther() async throws {
        let fixture = try WebFixture()
        let guitar = try fixture.store.add(ItemDraft(name: "Guitar", valueInDollars: 300))
        try Self.clash(fixture.store, guitar.key)
        #expect(try fixture.store.conflictCount() == 1)
        try await fixture.test { client in
            let detail = try await client.execute(uri: "/items/\(guitar.key)", method: .get, headers: fixture.cookie)
            #expect(detail.text.contains("1 open conflict"))
            #expect(detail.text.contains("/conflicts?key=\(guitar.key)"))

            let page = try await client.execute(uri: "/conflicts", method: .get, headers: fixture.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("Telecaster &lt;b&gt;"), "the kept name, escaped")
            #expect(page.text.contains(">Strat<"), "the losing name")
            #expect(page.text.contains("Take this value"))

            let conflict = try #require(try fixture.store.conflicts().first)
            let (headers, body) = fixture.form([
                ("key", guitar.key.rawValue), ("field", "name"),
                ("stamp", String(conflict.losingVersion.stamp.rawValue)),
                ("origin", conflict.losingVersion.origin.description),
            ])
            let taken = try await client.execute(uri: "/conflicts/take", method: .post, headers: headers, body: body)
            #expect(taken.status == .seeOther)
            #expect(taken.headers[.location] == "/conflicts?taken=1")
            #expect(try fixture.store.item(guitar.key)?.name == "Strat")
            #expect(try fixture.store.conflictCount() == 0)

            let after = try await client.execute(uri: "/conflicts", method: .get, headers: fixture.cookie)
            #expect(after.text.contains("no-conflicts"))
            let again = try await client.execute(uri: "/conflicts/take", method: .post, headers: headers, body: body)
            #expect(again.status != .seeOther, "a resolved conflict cannot be taken twice")
        }
    }
}
