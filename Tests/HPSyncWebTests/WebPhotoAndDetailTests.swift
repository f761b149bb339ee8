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

/// Regressions of issue 35 §4, what a new user tripped on in the web app: the photo inputs,
/// the upload messages, the detail page's facts and the sync page's staleness.
@Suite struct WebPhotoAndDetailTests {
    @Test func photoInputsOfferEveryFormatTheStoreAccepts() async throws {
        let fixture = try WebFixture()
        let item = try fixture.store.add(ItemDraft(name: "Vase", valueInDollars: 1))
        try await fixture.test { client in
            for uri in ["/new", "/items/\(item.key)"] {
                let page = try await client.execute(uri: uri, method: .get, headers: fixture.cookie).text
                #expect(!page.contains("accept=\"image/jpeg\""), "\(uri)")
                #expect(page.contains("accept=\"\(ItemPages.photoTypes)\""), "\(uri)")
            }
        }
        // Every type the store takes (as `image set` sniffs them) is offered.
        for type in ["image/jpeg", "image/png", "image/heic", "image/gif"] {
            #expect(ItemPages.photoTypes.split(separator: ",").contains(Substring(type)))
        }
    }

    @Test func anEmptyFileAndAnOversizedOneGetTheirOwnMessages() async throws {
        let fixture = try WebFixture(maxImageBytes: 2 << 20)
        let item = try fixture.store.add(ItemDraft(name: "Vase", valueInDollars: 1))
        try await fixture.test { client in
            let (emptyHeaders, empty) = fixture.multipart([], photo: [], filename: "empty.jpg")
            let refused = try await client.execute(
                uri: "/items/\(item.key)/photo", method: .post, headers: emptyHeaders, body: empty)
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("“empty.jpg” is empty (0 bytes)"), "\(refused.text)")
            #expect(!refused.text.contains("Choose a photo first"))
            let (newHeaders, newEmpty) = fixture.multipart(
                [("name", "Cup"), ("value", "1")], photo: [], filename: "e.jpg")
            let added = try await client.execute(uri: "/items", method: .post, headers: newHeaders, body: newEmpty)
            #expect(added.status == .badRequest, "an empty photo is not silently dropped")

            // Over the upload's limit (the photo's plus room for the form) and over the photo's:
            // both say the photo's limit.
            for size in [(2 << 20) + 10, 4 << 20] {
                let (headers, body) = fixture.multipart([], photo: jpeg(1, size: size))
                let tooLarge = try await client.execute(
                    uri: "/items/\(item.key)/photo", method: .post, headers: headers, body: body)
                #expect(tooLarge.status == .contentTooLarge)
                #expect(tooLarge.text.contains("(2 MiB)"), "\(size): \(tooLarge.text)")
                #expect(!tooLarge.text.contains("3 MiB"), "\(size)")
            }
        }
        #expect(try fixture.store.items().map(\.name) == ["Vase"])
    }

    @Test func theDetailPageShowsTimesPeopleRead() async throws {
        let fixture = try WebFixture()
        let item = try fixture.store.add(
            ItemDraft(name: "Clock", valueInDollars: 5, dateCreatedMilliseconds: 1_700_000_000_123))
        let page = try await fixture.test { client in
            try await client.execute(uri: "/items/\(item.key)", method: .get, headers: fixture.cookie).text
        }
        #expect(page.contains("<dt>Date created</dt><dd>2023-11-14 22:13:20 UTC</dd>"), "\(page)")
        #expect(!page.contains(String(item.version.stamp.rawValue)), "no raw 64-bit stamp")
        #expect(!page.contains(".123Z"), "no ISO time with milliseconds")
        let made = Format.time(Int64(item.version.stamp.milliseconds))
        #expect(page.contains("<dt>Version</dt><dd>edited \(made) on node \(item.version.origin.short)</dd>"))
    }

    /// `status` counts a session the peer ran with us (it pulled from us) as a sync; the page
    /// said "never synced".
    @Test func theSyncPageCountsStalenessAsStatusDoes() async throws {
        let fixture = try WebFixture()
        try fixture.store.addPeer(
            Peer(name: "laptop", nodeID: NodeID(certificateDER: Array("laptop".utf8)), permission: .read))
        try fixture.store.recordServed(peer: "laptop", direction: .pull)
        let page = try await fixture.test { client in
            try await client.execute(uri: "/sync", method: .get, headers: fixture.cookie).text
        }
        #expect(!page.contains("never synced"), "\(page)")
        #expect(page.contains(/<td>\d+ (s|min)<\/td><td>none<\/td>/), "\(page)")
    }
}
