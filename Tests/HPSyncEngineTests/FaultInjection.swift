import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Synchronization

@testable import HPSyncEngine

/// Wraps a stream and cuts it (both directions) once `limit` bytes have been read through it.
final class CuttingStream: ByteStream, @unchecked Sendable {
    private let base: any ByteStream
    private let limit: Int
    private let readSoFar = Mutex(0)

    init(_ base: any ByteStream, cutAfterReading limit: Int) {
        self.base = base
        self.limit = limit
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let allowed = readSoFar.withLock { limit - $0 }
        if allowed <= 0 {
            base.close()
            return 0
        }
        let n = try base.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, allowed)]))
        readSoFar.withLock { $0 += n }
        return n
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws { try base.write(bytes) }
    func close() { base.close() }
}

/// A fake server that answers Hello and PullRequest properly and then sends whatever the test
/// scripts, to see how a pulling client copes with a hostile or broken peer.
enum HostileServer {
    struct Script: Sendable {
        var hello: @Sendable (HelloMessage) -> HelloMessage = { $0 }
        /// Raw bytes to send after the PullRequest, given the channel for replies.
        var afterPullRequest: @Sendable (FramedChannel, PipeStream) throws -> Void
    }

    static func pull(_ client: TestNode, serverID: NodeID, script: Script) throws -> SyncReport {
        let serverStore = StoreID.random()
        let hostile = ServedPipe { serverEnd in
            let channel = FramedChannel(stream: serverEnd)
            guard case .hello(let hello)? = try? channel.receiveMessage(expecting: "Hello") else { return }
            let reply = HelloMessage(
                nodeID: serverID, storeID: serverStore, intent: hello.intent, version: 1, software: "hostile")
            try? channel.send(.hello(script.hello(reply)))
            guard (try? channel.receiveMessage(expecting: "PullRequest")) != nil else { return }
            try? script.afterPullRequest(channel, serverEnd)
            serverEnd.close()
        }
        defer { hostile.close() }
        return try SyncClient(store: client.store, logger: quietLogger).pull(
            over: hostile.channel(), serverNodeID: serverID, peerName: "hostile")
    }

    static func page(_ entries: [ManifestEntry], through: Int64) -> Message {
        .manifestPage(ManifestPage(entries: entries, throughSeq: through, isFinal: true))
    }

    /// Lists `entry`, sends `item` (whose image is `good`) and then `good` with byte `flipped`
    /// changed: bytes that do not match the digest the record announced.
    static func corruptImage(_ good: [UInt8], flipping flipped: Int, entry: ManifestEntry, item: Item) -> Script {
        Script { channel, _ in
            let ref = ImageRef(digest: SHA256.hash(good), size: Int64(good.count))
            try channel.send(page([entry], through: 1))
            _ = try channel.receiveMessage(expecting: "FetchRecords")
            try channel.send(.records([item]))
            _ = try channel.receiveMessage(expecting: "FetchImages")
            try channel.send(.imageHeader(ImageHeaderMessage(key: item.key, digest: ref.digest, size: ref.size)))
            var evil = good
            evil[flipped] ^= 0xFF
            try evil.withUnsafeBytes { try channel.sendImageChunk($0) }
            _ = try? channel.receiveMessage(expecting: "anything")
        }
    }

    static func raw(_ stream: PipeStream, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try stream.write($0) }
    }
}
