import Foundation
import HPSyncModel
import HPSyncProtocol
import Testing

@testable import HPSyncEngine

/// A restore's opened photos reach the local sink whole and in order, from memory within the
/// budget and from temporary files past it, and nothing is left behind.
@Suite struct BlindOutboxTests {
    /// Everything the outbox streams for one photo: the header, then the chunks joined.
    static func drain(_ out: BlindOutbox) throws -> [(header: ImageHeaderMessage, bytes: [UInt8])] {
        var photos: [(header: ImageHeaderMessage, bytes: [UInt8])] = []
        while let frame = try out.next() {
            switch frame {
            case .message(.imageHeader(let header)): photos.append((header, []))
            case .imageChunk(let chunk): photos[photos.count - 1].bytes += chunk
            case .message(let other): Issue.record("unexpected \(other.name)")
            }
        }
        return photos
    }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0) &+ seed }
    }

    @Test func photosPastTheBudgetWaitInFilesAndEveryByteArrives() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Three photos, the first over one chunk: the budget holds the first two, not the third.
        let sizes = [ProtocolLimits.chunkSize * 2 + 17, 1000, 5000]
        let budget = OpenedPhoto.Budget(bytes: Int64(sizes[0] + sizes[1] + 10))
        let out = BlindOutbox()
        var opened: [OpenedPhoto] = []
        for (index, size) in sizes.enumerated() {
            let plain = Self.bytes(size, seed: UInt8(index))
            let photo: OpenedPhoto
            if let reserved = budget.reserve(Int64(size)) {
                photo = OpenedPhoto(bytes: plain, reserved: reserved)
            } else {
                let url = folder.appendingPathComponent("photo-\(index)")
                try Data(plain).write(to: url)
                photo = OpenedPhoto(file: url)
            }
            opened.append(photo)
            let image = ImageRef(
                digest: SHA256Digest(bytes: Array(repeating: UInt8(index), count: 32))!, size: Int64(size))
            out.photo(key: ItemKey.random(), image: image) {
                photo
            } failed: {
                Issue.record("\($0)")
            }
        }
        #expect(opened.map { if case .file = $0.storage { "file" } else { "memory" } } == ["memory", "memory", "file"])
        opened = []
        let photos = try Self.drain(out)
        #expect(photos.map(\.header.size) == sizes.map(Int64.init))
        for (index, photo) in photos.enumerated() {
            #expect(photo.bytes == Self.bytes(sizes[index], seed: UInt8(index)))
        }
        // Streamed photos let go of their memory and their files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        #expect(budget.reserve(Int64(sizes[0] + sizes[1] + 10)) != nil)
    }

    @Test func aPhotoThatCannotBeOpenedIsAnnouncedMissing() throws {
        struct Broken: Error {}
        let out = BlindOutbox()
        var failures = 0
        let image = ImageRef(digest: SHA256Digest(bytes: Array(repeating: UInt8(7), count: 32))!, size: 10)
        out.photo(key: ItemKey.random(), image: image) {
            throw Broken()
        } failed: { _ in
            failures += 1
        }
        let photos = try Self.drain(out)
        #expect(photos.count == 1 && photos[0].header.missing && photos[0].bytes.isEmpty)
        #expect(failures == 1)
    }
}
