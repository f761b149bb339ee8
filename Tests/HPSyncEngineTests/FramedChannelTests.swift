import HPSyncProtocol
import Synchronization
import Testing

@testable import HPSyncEngine

/// The channel reads each frame whole, whatever sizes the stream's reads come in: through its
/// buffer, straight into a large payload, or both within one frame.
struct FramedChannelTests {
    /// Frames already on the wire, handed out in reads of the sizes `pattern` cycles through.
    final class ScriptedStream: ByteStream {
        private let state: Mutex<(bytes: [UInt8], offset: Int, reads: Int)>
        private let pattern: [Int]

        init(_ bytes: [UInt8], pattern: [Int]) {
            self.state = Mutex((bytes, 0, 0))
            self.pattern = pattern
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            state.withLock { state in
                let size = pattern[state.reads % pattern.count]
                state.reads += 1
                let n = min(size, buffer.count, state.bytes.count - state.offset)
                guard n > 0 else { return 0 }
                state.bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[state.offset..<state.offset + n]))
                }
                state.offset += n
                return n
            }
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {}
        func close() {}
    }

    /// Chunk sizes around the buffer, the direct-read threshold and one TLS record.
    static let chunkSizes = [
        1, 100, FramedChannel.directReadBytes - 1, FramedChannel.directReadBytes, FramedChannel.directReadBytes + 1,
        200_000, 256 << 10, (256 << 10) + 1, 300_000, ProtocolLimits.maxChunkBytes,
    ]

    static func chunk(_ size: Int, seed: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    }

    static func wire() -> [UInt8] {
        var bytes = FrameEncoder.encode(.pageDone(throughSeq: 1, counts: ChangeCounts()))
        for (index, size) in chunkSizes.enumerated() {
            bytes += FrameEncoder.chunkHeader(count: size) + chunk(size, seed: index)
            bytes += FrameEncoder.encode(.pageDone(throughSeq: Int64(index + 2), counts: ChangeCounts()))
        }
        return bytes
    }

    @Test(arguments: [[7, 1, 3], [16 << 10], [5_000, 70_000, 1], [1 << 21], [16_389, 2, 300_001]])
    func everyFrameArrivesWholeWhateverTheReadSizes(pattern: [Int]) throws {
        let wire = Self.wire()
        for bufferSize in [64, 256 << 10] {
            let channel = FramedChannel(stream: ScriptedStream(wire, pattern: pattern), bufferSize: bufferSize)
            try expectPageDone(channel.receive(expecting: "PageDone"), through: 1)
            for (index, size) in Self.chunkSizes.enumerated() {
                guard case .imageChunk(let bytes) = try channel.receive(expecting: "IMAGE_CHUNK") else {
                    Issue.record("chunk \(index) of \(size) bytes did not arrive as a chunk")
                    return
                }
                #expect(bytes == Self.chunk(size, seed: index), "chunk of \(size) bytes, buffer \(bufferSize)")
                try expectPageDone(channel.receive(expecting: "PageDone"), through: Int64(index + 2))
            }
            #expect(channel.bytesReceived == Int64(wire.count))
        }
    }

    @Test func aStreamThatEndsInsideALargePayloadIsAPrematureEnd() throws {
        let frame = FrameEncoder.chunkHeader(count: 300_000) + Self.chunk(300_000, seed: 1)
        let channel = FramedChannel(stream: ScriptedStream(Array(frame.prefix(200_000)), pattern: [16 << 10]))
        #expect(throws: ProtocolError.prematureEOF(expected: "IMAGE_CHUNK")) {
            try channel.receive(expecting: "IMAGE_CHUNK")
        }
    }

    private func expectPageDone(_ frame: IncomingFrame, through: Int64) throws {
        guard case .message(.pageDone(let throughSeq, _, _, _, _)) = frame else {
            Issue.record("expected PageDone through \(through), got \(frame)")
            return
        }
        #expect(throughSeq == through)
    }
}
