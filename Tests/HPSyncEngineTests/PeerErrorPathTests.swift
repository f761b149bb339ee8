import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Error paths a peer can reach that the hostile-peer suite did not: each ends in the right
/// error, applies nothing, and leaves the store valid.
@Suite struct PeerErrorPathTests {
    let serverID = NodeID(certificateDER: Array("hostile".utf8))
    let now: UInt64 = 1_750_000_000_000

    func entry(_ key: ItemKey) -> ManifestEntry {
        ManifestEntry(
            key: key, version: Version(stamp: VersionStamp(milliseconds: now), origin: serverID), deleted: false, seq: 1
        )
    }

    func item(_ key: ItemKey, image: ImageRef? = nil) -> Item {
        Item(
            key: key, name: "x", dateCreatedMilliseconds: 0, image: image,
            version: Version(stamp: VersionStamp(milliseconds: now), origin: serverID))
    }

    /// Runs the hostile pull and returns what it threw, checking the store is as it was.
    func failure(_ client: TestNode, _ script: HostileServer.Script) throws -> any Error {
        let before = try client.snapshot()
        var caught: (any Error)?
        do {
            _ = try HostileServer.pull(client, serverID: serverID, script: script)
        } catch {
            caught = error
        }
        #expect(try client.snapshot() == before, "nothing was applied")
        #expect(try client.store.verify(repair: false).isClean)
        return try #require(caught, "the hostile pull succeeded")
    }

    @Test func imageBytesThatDoNotMatchTheirDigestAreThePeersFault() throws {
        let client = try TestNode("client")
        let key = ItemKey.random()
        let good = jpeg(1)
        let ref = ImageRef(digest: SHA256.hash(good), size: Int64(good.count))
        let error = try failure(
            client,
            HostileServer.corruptImage(good, flipping: 10, entry: entry(key), item: item(key, image: ref)))
        guard case SyncError.imageDigestMismatch(let errorKey, _) = error else {
            Issue.record("expected imageDigestMismatch, got \(error)")
            return
        }
        #expect(errorKey == key.rawValue)
        #expect((error as? SyncError)?.wireCode == .badData)
    }

    @Test func anImageAboveThisStoresLimitIsRefusedBeforeAnyByteIsRead() throws {
        var small = StoreConfiguration()
        small.maxImageBytes = 1000
        let client = try TestNode("client", configuration: small)
        let key = ItemKey.random()
        let big = ImageRef(digest: SHA256.hash(jpeg(2)), size: 5000)
        let error = try failure(
            client,
            .init { channel, _ in
                try channel.send(HostileServer.page([entry(key)], through: 1))
                _ = try channel.receiveMessage(expecting: "FetchRecords")
                try channel.send(.records([item(key, image: big)]))
                _ = try? channel.receiveMessage(expecting: "anything")
            })
        guard case SyncError.imageTooLarge(_, let size, let limit) = error else {
            Issue.record("expected imageTooLarge, got \(error)")
            return
        }
        #expect(size == 5000 && limit == 1000)
    }

    @Test func aChunkWhereAMessageBelongsIsAProtocolError() throws {
        let client = try TestNode("client")
        let key = ItemKey.random()
        let error = try failure(
            client,
            .init { channel, stream in
                try channel.send(HostileServer.page([entry(key)], through: 1))
                _ = try channel.receiveMessage(expecting: "FetchRecords")
                try HostileServer.raw(stream, FrameEncoder.chunkHeader(count: 1) + [0])
                _ = try? channel.receiveMessage(expecting: "anything")
            })
        #expect(error as? ProtocolError == .unexpectedMessage(got: "IMAGE_CHUNK", expected: "Records"))
    }

    @Test func aServerThatChoosesAVersionWeDoNotSpeakIsRefused() throws {
        let client = try TestNode("client")
        var script = HostileServer.Script { _, _ in }
        script.hello = { hello in
            var changed = hello
            changed.version = ProtocolLimits.maxVersion + 1
            return changed
        }
        let error = try failure(client, script)
        guard case SyncError.protocolViolation(.violation(let text)) = error else {
            Issue.record("expected a violation, got \(error)")
            return
        }
        #expect(text.contains("version \(ProtocolLimits.maxVersion + 1)"))
    }

    @Test func anErrorInsteadOfAPageEndsThePullAndMayBeRetried() throws {
        let client = try TestNode("client")
        let error = try failure(
            client,
            .init { channel, _ in
                try channel.send(.error(PeerErrorMessage(code: .shuttingDown, message: "stopping")))
            })
        guard case SyncError.refusedByPeer(let peerError) = error else {
            Issue.record("expected refusedByPeer, got \(error)")
            return
        }
        #expect(peerError.code == .shuttingDown)
        #expect(RetryPolicy.isRetryable(error))
    }

    @Test func somethingOtherThanDoneAtTheEndIsAProtocolError() throws {
        let client = try TestNode("client")
        let error = try failure(
            client,
            .init { channel, _ in
                try channel.send(HostileServer.page([], through: 0))
                _ = try channel.receiveMessage(expecting: "PageDone")
                try channel.send(.pageDone(throughSeq: 0, counts: ChangeCounts()))
            })
        #expect("\(error)".contains("received PageDone while expecting Done"))
    }

    @Test func aClientWhoseFirstMessageIsNotHelloIsToldSo() throws {
        let server = try TestNode("server")
        let served = ServedPipe(server.store, for: NodeID(certificateDER: [9]))
        let channel = served.channel()
        try channel.send(.pullRequest(checkpointStore: nil, sinceSeq: 0))
        let reply = try channel.receiveMessage(expecting: "Error")
        served.waitForServer()
        guard case .error(let error) = reply else {
            Issue.record("expected an Error, got \(reply.name)")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(error.message.contains("received PullRequest while expecting Hello"))
    }

    @Test func aServerShuttingDownStopsBetweenPagesAndTheClientIsTold() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try a.add("Not sent: the server is stopping")
        let stopping = ServedPipe(a.store, for: b.nodeID) {
            ServerSession(store: $0, logger: quietLogger, shouldStop: { true })
        }
        defer { stopping.close() }
        #expect {
            try SyncClient(store: b.store, logger: quietLogger).pull(
                over: stopping.channel(), serverNodeID: a.nodeID, peerName: "a")
        } throws: { error in
            guard case SyncError.refusedByPeer(let peerError) = error else { return false }
            return peerError.code == .shuttingDown
        }
        #expect(try b.snapshot().isEmpty)
    }
}
