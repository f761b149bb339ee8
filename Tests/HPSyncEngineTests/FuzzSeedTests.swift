import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
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
        try Sync.pull(
            b, from: a,
            clientStream: { stream in
                let recorder = RecordingStream(stream)
                recorders.append(("pull", recorder))
                return recorder
            })
        try b.add("From b", image: jpeg(2, size: 500))
        try Sync.push(
            b, to: a,
            wrap: { stream in
                let recorder = RecordingStream(stream)
                recorders.append(("push", recorder))
                return recorder
            })
        #expect(recorders.count == 2)
        for (_, recorder) in recorders {
            #expect(!recorder.received.withLock { $0 }.isEmpty)
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
    }
}
