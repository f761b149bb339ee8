import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A pull's image check may start before its session (`EarlyImageScan`: `hp-sync pull` starts
/// it as soon as the store is open). The first pull of the run takes what it found; a later
/// pull (a retry) checks afresh.
@Suite struct EarlyImageScanTests {
    static func pull(_ client: TestNode, from server: TestNode, options: SyncPlan) throws -> SyncReport {
        try Sync.session(client, server, .pipe) { channel in
            try SyncClient(store: client.store, logger: quietLogger).pull(
                connecting: { channel }, serverNodeID: server.nodeID, peerName: server.name, plan: options)
        } wrap: {
            $0
        }
    }

    /// Node a with one item and its photo, which node b may pull.
    static func aPhotoToPull(_ seed: UInt8) throws -> (a: TestNode, b: TestNode, item: Item, photo: [UInt8]) {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        let photo = jpeg(seed)
        return (a, b, try a.add("photo", image: photo), photo)
    }

    @Test func theFirstPullTakesTheEarlyCheckAndTheNextChecksAfresh() throws {
        let (a, b, item, photo) = try Self.aPhotoToPull(9)
        try Sync.pull(b, from: a)
        let store = b.store
        let check = BackgroundResult { try store.findMissingImages() }
        #expect(try check.wait().isEmpty)
        // Lost after the check ran: a pull that takes the early check does not know yet.
        try FileManager.default.removeItem(at: b.store.imageFileURL(for: item.key))
        var options = SyncPlan()
        options.imageScan = EarlyImageScan(check)

        let first = try Self.pull(b, from: a, options: options)
        #expect(first.healed.kept.isEmpty, "the first pull used the early check")
        #expect(!FileManager.default.fileExists(atPath: b.store.imageFileURL(for: item.key).path))
        let second = try Self.pull(b, from: a, options: options)
        #expect(second.healed.kept == [item.key.rawValue], "the check was taken: the second pull checks afresh")
        #expect(b.imageBytes(item.key) == photo)
    }

    struct UnreadableImages: Error, Equatable {}

    /// An early check that failed (an unreadable `images/`) fails the pull that takes it before
    /// anything is applied; the next pull checks afresh.
    @Test func aFailedEarlyCheckFailsThePullThatTakesItAndTheNextChecksAfresh() throws {
        let (a, b, item, photo) = try Self.aPhotoToPull(11)
        let failed = BackgroundResult<[ItemKey]> { throw UnreadableImages() }
        var options = SyncPlan()
        options.imageScan = EarlyImageScan(failed)

        #expect(throws: UnreadableImages()) { try Self.pull(b, from: a, options: options) }
        #expect(try b.snapshot().isEmpty, "nothing was applied")
        let second = try Self.pull(b, from: a, options: options)
        #expect(second.inserted.kept == [item.key.rawValue])
        #expect(b.imageBytes(item.key) == photo)
    }
}
