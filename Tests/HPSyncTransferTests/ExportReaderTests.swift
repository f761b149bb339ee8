import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

@Suite("Export JSON reader")
struct ExportReaderTests {
    @Test func readsEscapesUnicodeAndSkipsUnknownFields() throws {
        let json = #"""
            {"format": "hp-sync-export", "version": 1, "extra": {"a": [1, 2.5e3, null, true, "x"]}, "items": [
              {"key": "4a73b5d2-a6f4-4b40-9f82-ea1e34c1dc04", "name": "Caf\u00e9 \"quoted\" \\ \/ \ud83d\ude00 tab\t",
               "serialNumber": null, "valueInDollars": -12, "dateCreated": "2024-01-01", "future": {"x": 1}}
            ]}
            """#
        let document = try ExportReader.document(Array(json.utf8))
        let item = try #require(document.items.first)
        #expect(item.key.rawValue == "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")
        #expect(item.name == "Café \"quoted\" \\ / 😀 tab\t")
        #expect(item.serialNumber == nil && item.valueInDollars == -12)
        #expect(
            try item.item(version: Version(stamp: .zero, origin: Fixtures.nodeA)).dateCreatedMilliseconds
                == 1_704_067_200_000)
    }

    @Test(arguments: [
        "", "{", "[]", #"{"format": "hp-sync-export", "version": 1, "items": [}"#,
        #"{"format": "hp-sync-export", "version": 1.5, "items": []}"#,
        #"{"format": "hp-sync-export", "version": 1, "items": [{"name": "no key"}]}"#,
        #"{"format": "hp-sync-export", "version": 1, "items": []} trailing"#,
        #"{"format": "hp-sync-export", "version": 1, "items": [{"key": "x\u0000"}]}"#,
        #"{"format": "hp-sync-export", "version": 99999999999999999999, "items": []}"#,
    ])
    func rejectsMalformedDocuments(json: String) {
        #expect(throws: StoreError.self) { try ExportReader.document(Array(json.utf8)) }
    }

    @Test func writerOutputReadsBack() throws {
        let items = [
            Fixtures.remoteItem(ItemKey.random(), name: "a\u{1}b\n\"c\" é", stamp: 42),
            Fixtures.remoteItem(ItemKey.random(), stamp: UInt64.max, deleted: true),
        ]
        let bytes = ExportWriter.document(storeID: StoreID.random(), nodeID: Fixtures.nodeA.description, items: items)
        let document = try ExportReader.document(bytes)
        let read = try document.items.map { try $0.item(version: try #require($0.versionValue)) }
        #expect(read == items)
    }
}
