import Foundation
import HPSyncStore
import HPSyncTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// A record that names a photo whose file is gone (an import without images, a deleted file):
/// the detail page says so and how to repair it, instead of a broken image.
@Suite struct WebMissingPhotoTests {
    @Test func theDetailPageShowsAMissingPhotoWithTheRepairCommand() async throws {
        let fixture = try WebFixture()
        let photo = fixture.directory.appendingPathComponent("photo.jpg")
        try Data(jpeg(5, size: 547)).write(to: photo)
        let item = try fixture.store.add(ItemDraft(name: "Camera", valueInDollars: 10))
        _ = try fixture.store.setImage(item.key, from: photo)
        try FileManager.default.removeItem(at: fixture.store.imageFileURL(for: item.key))
        try await fixture.test { client in
            let page = try await client.execute(uri: "/items/\(item.key)", method: .get, headers: fixture.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("Photo missing — repair with <code>hp-sync verify --repair --from PEER</code>"))
            #expect(!page.text.contains("<img class=\"photo\""))
            #expect(page.text.contains("missing: 547 bytes"))
        }
    }
}
