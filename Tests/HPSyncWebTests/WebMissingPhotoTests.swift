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

    @Test func theInventoryShowsAMissingPhotoInsteadOfABrokenImage() async throws {
        let fixture = try WebFixture()
        let camera = fixture.directory.appendingPathComponent("camera.jpg")
        let lamp = fixture.directory.appendingPathComponent("lamp.jpg")
        try Data(jpeg(5, size: 547)).write(to: camera)
        try Data(jpeg(6, size: 600)).write(to: lamp)
        let gone = try fixture.store.add(ItemDraft(name: "Camera", valueInDollars: 10))
        let kept = try fixture.store.add(ItemDraft(name: "Lamp", valueInDollars: 5))
        let goneImage = try #require(try fixture.store.setImage(gone.key, from: camera).image)
        let keptImage = try #require(try fixture.store.setImage(kept.key, from: lamp).image)
        try FileManager.default.removeItem(at: fixture.store.imageFileURL(for: gone.key))
        try await fixture.test { client in
            for view in ["grid", "table"] {
                let page = try await client.execute(
                    uri: "/?sort=name&dir=asc&view=\(view)", method: .get, headers: fixture.cookie)
                #expect(page.status == .ok)
                // Sorted by name, the camera's card (or row) runs from its key to the lamp's.
                let start = try #require(page.text.range(of: gone.key.rawValue))
                let end = try #require(page.text.range(of: kept.key.rawValue))
                let cameraCell = page.text[start.lowerBound..<end.lowerBound]
                #expect(cameraCell.contains(view == "grid" ? "Photo missing" : ">missing<"), "\(view)")
                #expect(!cameraCell.contains("/image/"), "no broken image in the \(view)")
                #expect(!page.text.contains(goneImage.digest.hex), "\(view)")
                #expect(
                    page.text.contains("/image/\(keptImage.digest.hex)"), "the intact photo is shown in the \(view)")
            }
        }
    }
}
