import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncTransfer

@Suite("Keys are validated wherever they enter: import files")
struct ImportKeySafetyTests {
    @Test func importRejectsMalformedKeys() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let json = """
            {"format":"hp-sync-export","version":1,"items":[{"key":"../../etc/passwd","name":"x",
            "valueInDollars":1,"dateCreatedMilliseconds":0}]}
            """
        let file = dir.file("bad.json", Array(json.utf8))
        #expect(throws: StoreError.self) { try store.importJSON(from: file, imagesDirectory: nil) }
        #expect(try store.items(includeDeleted: true).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("etc").path))
    }
}
