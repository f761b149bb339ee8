import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A photo a blind store sends is opened into memory while the budget has room and into a
/// temporary file past it; either way a photo whose seal is broken is refused, and nothing of it
/// stays behind: no file, no memory taken from the budget.
@Suite struct BlindPhotoFetchTests {
    /// The blind store's side of one BlindGetPhoto: its header, then the sealed bytes.
    final class OnePhoto: MessageChannel {
        private var frames: [IncomingFrame]

        init(_ header: BlindPhotoHeader, sealed: [UInt8]) {
            frames = [.message(.blindPhotoHeader(header)), .imageChunk(sealed)]
        }

        func send(_ message: Message) throws {}
        func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws {}
        func receive(expecting: String) throws -> IncomingFrame { frames.removeFirst() }
        var bytesSent: Int64 { 0 }
        var bytesReceived: Int64 { 0 }
        func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {}
        func close() {}
    }

    static func fetch(tampered: Bool, budget: OpenedPhoto.Budget, into node: TestNode) -> Result<OpenedPhoto, any Error>
    {
        let seal = BlindRecordSeal(keys: BlindKeys(InventoryKey.random()))
        let plain = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let image = ImageRef(digest: SHA256.hash(plain), size: Int64(plain.count))
        let photo = seal.photo(image)
        var sealer = seal.keys.photoSealer(photoID: photo.id.bytes, plainSize: image.size)
        var sealed = sealer.header() + sealer.update(plain)
        sealed += (try? sealer.finish()) ?? []
        if tampered { sealed[sealed.count / 2] ^= 1 }
        let remote = BlindRemote(
            channel: OnePhoto(BlindPhotoHeader(id: photo.id, size: photo.size), sealed: sealed), peerName: "offsite")
        let fetch = BlindPhotoFetch(
            store: node.store, remote: remote, keys: seal.keys, photo: photo, image: image, budget: budget)
        return Result { try fetch.receive() }
    }

    static func temporaries(_ node: TestNode) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: node.store.directory.appendingPathComponent("images").path)
            .filter { $0.hasPrefix(".tmp-blind-") }
    }

    @Test(arguments: [Int64(1 << 20), 0])
    func aPhotoOpensWhereTheBudgetSaysAndABrokenSealLeavesNothing(budgetBytes: Int64) throws {
        let node = try TestNode("node")
        let budget = OpenedPhoto.Budget(bytes: budgetBytes)
        var opened: OpenedPhoto? = try Self.fetch(tampered: false, budget: budget, into: node).get()
        switch opened!.storage {
        case .bytes(let bytes):
            #expect(budgetBytes > 0 && bytes.count == 3000)
            #expect(budget.reserve(budgetBytes) == nil, "held while the photo waits")
        case .file(let url):
            let bytes = try Data(contentsOf: url)
            #expect(budgetBytes == 0 && bytes.count == 3000)
        }
        opened = nil
        #expect(try Self.temporaries(node).isEmpty)

        #expect(throws: SealingError.self) {
            _ = try Self.fetch(tampered: true, budget: budget, into: node).get()
        }
        #expect(try Self.temporaries(node).isEmpty, "a refused photo leaves no file")
        #expect(budget.reserve(budgetBytes) != nil, "nor takes memory from the budget")
    }
}
