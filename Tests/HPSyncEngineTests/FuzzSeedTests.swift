import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Synchronization
import Testing

@testable import HPSyncEngine

/// Records both directions of a stream, to turn real sessions into fuzzing seeds.
final class RecordingStream: ByteStream, @unchecked Sendable {
    private let base: any ByteStream
    let received = Mutex<[UInt8]>([])
    let sent = Mutex<[UInt8]>([])
    init(_ base: any ByteStream) { self.base = base }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        received.withLock { $0.append(contentsOf: buffer[0..<n]) }
        return n
    }
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        sent.withLock { $0.append(contentsOf: bytes) }
        try base.write(bytes)
    }
    func close() { base.close() }
}

/// Writes the fuzz seed corpus (Tests/Fuzz/corpus) from real pull and push sessions when
/// `HP_SYNC_FUZZ_SEEDS=DIR` is set; otherwise it only checks that recording works.
@Suite struct FuzzSeedTests {
    @Test func recordSeedsFromRealSessions() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try b.allow(a)
        let couch = try a.add("Couch", value: 500, image: jpeg(1, size: 700))
        try a.add("Lamp", value: 20)
        _ = try a.store.edit(couch.key, ItemEdit(name: "Old couch", serialNumber: .set("SN-1")))
        let gone = try a.add("Gone")
        _ = try a.store.delete([gone.key])
        var recorders: [(String, RecordingStream)] = []
        /// Wraps a session's client stream in a recorder kept under `name`.
        func record(_ name: String) -> (any ByteStream) -> any ByteStream {
            { stream in
                let recorder = RecordingStream(stream)
                recorders.append((name, recorder))
                return recorder
            }
        }
        try Sync.pull(
            b, from: a,
            clientStream: record("pull"))
        try b.add("From b", image: jpeg(2, size: 500))
        // A clash (version 5, Protocol.md 5.9): both rename the couch, b also sets its value.
        _ = try a.store.edit(couch.key, ItemEdit(name: "Couch of a"))
        _ = try b.store.edit(couch.key, ItemEdit(name: "Couch of b", valueInDollars: 700))
        try Sync.push(
            b, to: a,
            wrap: record("push"))
        // A new node pulls the joined state: records with candidates and an open conflict.
        let c = try TestNode("c")
        try a.allow(c)
        try c.allow(a)
        try Sync.pull(
            c, from: a,
            clientStream: record("clash"))
        #expect(try a.store.conflictCount() == 1)
        #expect(try c.store.conflictCount() == 1)
        #expect(recorders.count == 3)
        for (_, recorder) in recorders {
            #expect(!recorder.received.withLock { $0 }.isEmpty)
        }
        let pulled = try #require(recorders.first { $0.0 == "pull" }).1.received.withLock { $0 }
        let variants = try Self.imageVariants(of: pulled)
        for (name, bytes) in variants {
            var decoder = FrameDecoder()
            decoder.append(bytes)
            var headers = 0
            while let frame = try decoder.next() {
                if case .message(.imageHeader) = frame { headers += 1 }
            }
            #expect(headers == 1, "\(name)")
        }
        guard let directory = ProcessInfo.processInfo.environment["HP_SYNC_FUZZ_SEEDS"] else { return }
        for target in ["frame", "apply"] {
            let folder = URL(fileURLWithPath: directory).appendingPathComponent(target)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, recorder) in recorders {
                try Data(recorder.received.withLock { $0 }).write(
                    to: folder.appendingPathComponent("\(name)-from-server"))
                try Data(recorder.sent.withLock { $0 }).write(to: folder.appendingPathComponent("\(name)-from-client"))
            }
        }
        let folder = URL(fileURLWithPath: directory).appendingPathComponent("apply")
        for (name, bytes) in variants { try Data(bytes).write(to: folder.appendingPathComponent(name)) }
    }

    /// Variants of a recorded pull's server side that take the apply target down each image
    /// path: bytes that do not match the digest, more or fewer bytes than announced, an image
    /// over the target's 64 KiB limit, and a digest the target rewrites (its first byte zero)
    /// over altered bytes, which must then apply.
    static func imageVariants(of session: [UInt8]) throws -> [String: [UInt8]] {
        var decoder = FrameDecoder()
        decoder.append(session)
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        func encode(_ frames: [Frame]) -> [UInt8] {
            frames.flatMap { frame in
                switch frame {
                case .message(let message): FrameEncoder.encode(message)
                case .imageChunk(let bytes): FrameEncoder.chunkHeader(count: bytes.count) + bytes
                }
            }
        }
        func headersChanged(_ change: (inout ImageHeaderMessage) -> Void) -> [Frame] {
            frames.map { frame in
                guard case .message(.imageHeader(var header)) = frame else { return frame }
                change(&header)
                return .message(.imageHeader(header))
            }
        }
        func zeroFirst(_ digest: SHA256Digest) -> SHA256Digest { SHA256Digest(bytes: [0] + digest.bytes.dropFirst())! }
        var rewritten: [Frame] = []
        var chunkAltered = false
        for frame in frames {
            switch frame {
            case .message(.imageHeader(var header)):
                header.digest = zeroFirst(header.digest)
                rewritten.append(.message(.imageHeader(header)))
            case .message(.records(let items)):
                rewritten.append(
                    .message(
                        .records(
                            items.map { item in
                                var item = item
                                if let digest = item.image?.digest { item.image?.digest = zeroFirst(digest) }
                                // Its field candidates (version 5) name the old digest: sent as a whole record.
                                item.mergeState = nil
                                return item
                            })))
            case .imageChunk(var bytes) where !chunkAltered:
                bytes[bytes.count / 2] ^= 0xFF
                chunkAltered = true
                rewritten.append(.imageChunk(bytes))
            default: rewritten.append(frame)
            }
        }
        return [
            "image-digest-mismatch": encode(headersChanged { $0.digest = SHA256.hash($0.digest.bytes) }),
            "image-overflow": encode(headersChanged { $0.size -= 1 }),
            "image-short": encode(headersChanged { $0.size += 1 }),
            "image-too-large": encode(headersChanged { $0.size = 1 << 17 }),
            "image-digest-rewritten": encode(rewritten),
        ]
    }
}
