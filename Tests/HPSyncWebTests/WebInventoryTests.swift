import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// The inventory page and the store query behind it: search, sort, pages, totals.
@Suite struct WebInventoryTests {
    @Test func browsePagesSortsAndSearchesWithTotals() throws {
        let fixture = try WebFixture()
        for index in 0..<130 {
            _ = try fixture.store.add(
                ItemDraft(
                    name: index % 10 == 0 ? "Lamp \(index)" : "Item \(index)", serialNumber: "SN\(index)",
                    valueInDollars: Int64(index), dateCreatedMilliseconds: Int64(index) * 1000))
        }
        _ = try fixture.store.delete([try fixture.store.add(ItemDraft(name: "Gone lamp", valueInDollars: 1000)).key])
        let first = try fixture.store.browse(BrowseQuery(order: .value, descending: true, page: 0, pageSize: 60))
        #expect(first.items.map(\.valueInDollars) == (70..<130).reversed().map { Int64($0) })
        #expect(first.total == 130 && first.totalValue.exactValue == Int64((0..<130).reduce(0, +)))
        let last = try fixture.store.browse(BrowseQuery(order: .date, descending: false, page: 2, pageSize: 60))
        #expect(last.items.map(\.valueInDollars) == (120..<130).map { Int64($0) })
        let lamps = try fixture.store.browse(BrowseQuery(search: "lamp", order: .name, descending: false))
        #expect(
            lamps.matching == 13
                && lamps.matchingValue.exactValue == Int64(stride(from: 0, to: 130, by: 10).reduce(0, +)))
        #expect(lamps.items.first?.name == "Lamp 0")
        let bySerial = try fixture.store.browse(BrowseQuery(search: "SN12"))
        #expect(
            Set(bySerial.items.map(\.serialNumber)) == [
                "SN12", "SN120", "SN121", "SN122", "SN123", "SN124", "SN125", "SN126", "SN127", "SN128", "SN129",
            ])
        let wildcard = try fixture.store.browse(BrowseQuery(search: "%"))
        #expect(wildcard.matching == 0)
    }

    @Test func theGridShowsCountTotalAndPages() async throws {
        let fixture = try WebFixture()
        for index in 0..<61 { _ = try fixture.store.add(ItemDraft(name: "Thing \(index)", valueInDollars: 1000)) }
        try await fixture.test { client in
            let page = try await client.execute(uri: "/", method: .get, headers: fixture.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("<strong>61</strong> items · total value <strong>$61,000</strong>"))
            #expect(page.text.components(separatedBy: "class=\"card\"").count - 1 == 60)
            #expect(page.text.contains("Page 1 of 2"))
            let second = try await client.execute(
                uri: "/?sort=date&dir=desc&page=2&view=table", method: .get, headers: fixture.cookie)
            #expect(second.text.components(separatedBy: "<tr><td><input").count - 1 == 1)
            let search = try await client.execute(uri: "/?q=Thing+6", method: .get, headers: fixture.cookie)
            #expect(search.text.contains("<strong>2</strong> of 61 items match"))
            let report = try await client.execute(uri: "/report", method: .get, headers: fixture.cookie)
            #expect(report.text.contains("Total: 61 items"))
        }
    }

    @Test func theSyncPageShowsPeersTheirLastErrorAndTheTrash() async throws {
        let fixture = try WebFixture()
        try fixture.store.addPeer(
            Peer(name: "backup", nodeID: NodeID(certificateDER: Array("peer".utf8)), address: "nas.local:7717"))
        try fixture.store.recordSyncSuccess(peer: "backup", direction: .push)
        try fixture.store.recordSyncFailure(peer: "backup", direction: .pull, message: "connection refused <b>")
        let gone = try fixture.store.add(ItemDraft(name: "Lost lamp", valueInDollars: 7))
        _ = try fixture.store.delete([gone.key], keepInTrash: true)
        try await fixture.test { client in
            let page = try await client.execute(uri: "/sync", method: .get, headers: fixture.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("<td>backup</td><td>nas.local:7717</td><td>read</td>"))
            #expect(page.text.contains("pull: connection refused &lt;b&gt;"))
            #expect(page.text.contains("<td>never</td>"))
            #expect(page.text.contains("Lost lamp"))
            #expect(page.text.contains("value=\"\(gone.key.rawValue)\""))
        }
    }

    @Test func dollarsAndQueryEncoding() {
        #expect(Format.dollars(1_234_567) == "$1,234,567")
        #expect(Format.dollars(-5) == "-$5")
        #expect(Format.dollars(0) == "$0")
        #expect(Format.query("a b&c=\"é") == "a%20b%26c%3D%22%C3%A9")
        #expect(Form.urlEncoded("q=a+b%26c&x=%E2%9C%93").fields == ["q": ["a b&c"], "x": ["✓"]])
    }
}
