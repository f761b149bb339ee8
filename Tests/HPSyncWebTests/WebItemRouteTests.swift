import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// Adding, editing, photos, removing and restoring through the routes, checked in the store.
@Suite struct WebItemRouteTests {
    @Test func addWithAPhotoThenServeItCachedByDigest() async throws {
        let fixture = try WebFixture()
        let photo = jpeg(3)
        try await fixture.test { client in
            let (headers, body) = fixture.multipart(
                [("name", "Camera"), ("serial", "C-1"), ("value", "450")], photo: photo)
            let added = try await client.execute(uri: "/items", method: .post, headers: headers, body: body)
            #expect(added.status == .seeOther)
            let items = try fixture.store.items()
            let item = try #require(items.first)
            #expect(items.count == 1)
            #expect(item.name == "Camera" && item.serialNumber == "C-1" && item.valueInDollars == 450)
            #expect(item.image == ImageRef(digest: SHA256.hash(photo), size: Int64(photo.count)))
            #expect(added.headers[.location] == "/items/\(item.key)?added=1")

            let url = "/image/\(SHA256.hash(photo).hex)"
            let image = try await client.execute(uri: url, method: .get, headers: fixture.cookie)
            #expect(image.status == .ok)
            #expect(Array(image.body.readableBytesView) == photo)
            #expect(image.headers[.contentType] == "image/jpeg")
            #expect(image.headers[.eTag] == "\"\(SHA256.hash(photo).hex)\"")
            #expect(image.headers[.cacheControl]?.contains("immutable") == true)
            var conditional = fixture.cookie
            conditional[.ifNoneMatch] = "\"\(SHA256.hash(photo).hex)\""
            let cached = try await client.execute(uri: url, method: .get, headers: conditional)
            #expect(cached.status == .notModified)
            let missing = try await client.execute(
                uri: "/image/\(String(repeating: "ab", count: 32))", method: .get, headers: fixture.cookie)
            #expect(missing.status == .notFound)
        }
    }

    @Test func badUploadsAreRefusedBeforeTheyTouchTheStore() async throws {
        let fixture = try WebFixture(maxImageBytes: 1000)
        let item = try fixture.store.add(ItemDraft(name: "Vase", valueInDollars: 1))
        try await fixture.test { client in
            let (textHeaders, text) = fixture.multipart(
                [("name", "Doc")], photo: Array("just text, not a photo".utf8), filename: "a.jpg")
            let notPhoto = try await client.execute(uri: "/items", method: .post, headers: textHeaders, body: text)
            #expect(notPhoto.status == .unsupportedMediaType)
            #expect(notPhoto.text.contains("not a photo"))
            let (bigHeaders, big) = fixture.multipart([], photo: jpeg(1, size: 5000))
            let tooLarge = try await client.execute(
                uri: "/items/\(item.key)/photo", method: .post, headers: bigHeaders, body: big)
            #expect(tooLarge.status == .contentTooLarge)
            let (hugeHeaders, huge) = fixture.multipart([("name", "Huge")], photo: jpeg(1, size: 3 << 20))
            let bodyTooLarge = try await client.execute(uri: "/items", method: .post, headers: hugeHeaders, body: huge)
            #expect(bodyTooLarge.status == .contentTooLarge)
            #expect(!bodyTooLarge.text.contains("Error"))
            var garbled = fixture.cookie
            garbled[.contentType] = "multipart/form-data; boundary=xyz"
            let broken = try await client.execute(
                uri: "/items", method: .post, headers: garbled, body: ByteBuffer(string: "--xyz\r\nnope"))
            #expect(broken.status == .badRequest || broken.status == .forbidden)
        }
        #expect(try fixture.store.items().map(\.name) == ["Vase"])
        #expect(try fixture.store.item(item.key)?.image == nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.app.uploads.path)
        #expect(leftovers.isEmpty)
    }

    @Test func editReplaceAndRemoveThePhoto() async throws {
        let fixture = try WebFixture()
        let item = try fixture.store.add(ItemDraft(name: "Chair", serialNumber: "S", valueInDollars: 20))
        try await fixture.test { client in
            let (headers, body) = fixture.form([("name", "Armchair"), ("serial", ""), ("value", "75")])
            let edited = try await client.execute(
                uri: "/items/\(item.key)", method: .post, headers: headers, body: body)
            #expect(edited.status == .seeOther)
            let (badHeaders, bad) = fixture.form([("name", "Armchair"), ("value", "lots")])
            let refused = try await client.execute(
                uri: "/items/\(item.key)", method: .post, headers: badHeaders, body: bad)
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("not a whole number"))
            let (photoHeaders, photo) = fixture.multipart([], photo: jpeg(9))
            let replaced = try await client.execute(
                uri: "/items/\(item.key)/photo", method: .post, headers: photoHeaders, body: photo)
            #expect(replaced.status == .seeOther)
            #expect(try fixture.store.item(item.key)?.image?.digest == SHA256.hash(jpeg(9)))
            let (removeHeaders, remove) = fixture.form([])
            let removed = try await client.execute(
                uri: "/items/\(item.key)/photo/remove", method: .post, headers: removeHeaders, body: remove)
            #expect(removed.status == .seeOther)
            let detail = try await client.execute(uri: "/items/\(item.key)", method: .get, headers: fixture.cookie)
            #expect(detail.text.contains("value=\"Armchair\""))
            #expect(detail.text.contains("value=\"75\""))
        }
        let after = try #require(try fixture.store.item(item.key))
        #expect(
            after.name == "Armchair" && after.serialNumber == nil && after.valueInDollars == 75 && after.image == nil)
    }

    @Test func removeSelectedIsOneBatchWithTheTrashOneClickAway() async throws {
        let fixture = try WebFixture()
        let keep = try fixture.store.add(ItemDraft(name: "Keep", valueInDollars: 1))
        let a = try fixture.store.add(ItemDraft(name: "Old TV", valueInDollars: 100, imageFile: nil))
        let b = try fixture.store.add(ItemDraft(name: "Old radio", valueInDollars: 30))
        let seqBefore = try fixture.store.lastSeq
        try await fixture.test { client in
            let confirm = try await client.execute(uri: "/items/\(a.key)/delete", method: .get, headers: fixture.cookie)
            #expect(confirm.text.contains("Are you sure you want to delete “Old TV”?"))
            let (headers, body) = fixture.form([("key", a.key.rawValue), ("key", b.key.rawValue)])
            let removed = try await client.execute(uri: "/remove", method: .post, headers: headers, body: body)
            #expect(removed.status == .ok)
            #expect(removed.text.contains("Removed 2 items"))
            #expect(removed.text.contains("deleted <strong>2</strong>"))
            #expect(removed.text.contains("Old TV") && removed.text.contains("Old radio"))
            #expect(try fixture.store.items().map(\.key) == [keep.key])
            #expect(try fixture.store.lastSeq == seqBefore + 2)
            #expect(Set(try fixture.store.trashEntries().map(\.key)) == [a.key, b.key])

            let (again, form) = fixture.form([("key", a.key.rawValue)])
            let twice = try await client.execute(uri: "/remove", method: .post, headers: again, body: form)
            #expect(twice.status == .notFound)
            let (none, empty) = fixture.form([])
            let nothing = try await client.execute(uri: "/remove", method: .post, headers: none, body: empty)
            #expect(nothing.status == .badRequest)

            let (restoreHeaders, restore) = fixture.form([("key", a.key.rawValue), ("key", b.key.rawValue)])
            let restored = try await client.execute(
                uri: "/trash/restore", method: .post, headers: restoreHeaders, body: restore)
            #expect(restored.status == .seeOther)
        }
        #expect(Set(try fixture.store.items().map(\.name)) == ["Keep", "Old TV", "Old radio"])
    }

    /// Another process (a pull, a CLI command) holds the write lock past the busy timeout: the
    /// browser gets a 503 page that says so, and nothing changes.
    @Test func aBusyStoreIsA503PageNotAHang() async throws {
        let fixture = try WebFixture(busyTimeoutSeconds: 0.2)
        let item = try fixture.store.add(ItemDraft(name: "Desk", valueInDollars: 50))
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(
            path: fixture.store.directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        try other.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE") }
        try await fixture.test { client in
            let (headers, body) = fixture.form([("name", "Desk"), ("value", "99")])
            let busy = try await client.execute(uri: "/items/\(item.key)", method: .post, headers: headers, body: body)
            #expect(busy.status == .serviceUnavailable)
            #expect(busy.text.contains("try again"))
            let reading = try await client.execute(uri: "/items/\(item.key)", method: .get, headers: fixture.cookie)
            #expect(reading.status == .ok)
        }
        try other.inDatabase { try $0.execute(sql: "ROLLBACK") }
        #expect(try fixture.store.item(item.key)?.valueInDollars == 50)
    }

    @Test func unknownItemsAndPagesGetA404Page() async throws {
        let fixture = try WebFixture()
        try await fixture.test { client in
            for path in [
                "/items/4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04", "/items/../../etc/passwd", "/items/nope", "/nowhere",
                "/image/zz",
            ] {
                let page = try await client.execute(uri: path, method: .get, headers: fixture.cookie)
                #expect(page.status == .notFound, "\(path)")
                #expect(page.headers[.contentType]?.hasPrefix("text/html") == true, "\(path)")
            }
            let badPage = try await client.execute(uri: "/?page=-3", method: .get, headers: fixture.cookie)
            #expect(badPage.status == .badRequest)
        }
    }
}
