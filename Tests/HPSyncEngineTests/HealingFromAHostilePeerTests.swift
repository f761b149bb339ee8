import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Protocol.md §4.7, §5.7: bytes a peer sends for a heal are checked against the digest the
/// store's own record names before they are put in place.
@Suite struct HealingFromAHostilePeerTests {
    @Test func bytesThatDoNotMatchTheirDigestAreRefusedAndNothingIsPutInPlace() throws {
        let b = try TestNode("b")
        let item = try b.add("photo", image: jpeg(4))
        let file = b.store.imageFileURL(for: item.key)
        try FileManager.default.removeItem(at: file)
        try b.store.rememberImagesToHeal([item.key])
        let wanted = try b.store.imagesToHeal()
        #expect(wanted.map(\.key) == [item.key])

        // A peer that announces the right digest and size, then sends other bytes of that size.
        let ref = item.image!
        let hostile = ServedPipe { serverEnd in
            let peer = FramedChannel(stream: serverEnd)
            _ = try? peer.receiveMessage(expecting: "FetchImagesByDigest")
            try? peer.send(.imageHeader(ImageHeaderMessage(key: item.key, digest: ref.digest, size: ref.size)))
            let other = jpeg(5, size: Int(ref.size))
            try? other.withUnsafeBytes { try peer.sendImageChunk($0) }
            _ = try? peer.receiveMessage(expecting: "anything")
            peer.close()
        }
        var report = SyncReport(direction: .pull, peer: "hostile")
        #expect {
            try ImageHealer(channel: hostile.channel(), store: b.store, logger: quietLogger)
                .run(wanted, into: &report)
        } throws: { error in
            guard case SyncError.imageDigestMismatch(let key, let detail) = error else { return false }
            return key == item.key.rawValue && detail.contains("\(ref.digest)")
        }
        #expect(report.healed.count == 0)
        #expect(!FileManager.default.fileExists(atPath: file.path), "no unverified bytes were put in place")
        #expect(try b.store.imagesToHeal().map(\.key) == [item.key], "the image is still wanted")
    }
}
