import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Protocol.md §5.7: FetchImagesByDigest and EndSession, version 3, pull only, before the
/// PullRequest; a server never sends bytes that do not match their digest.
@Suite struct ImagesByDigestTests {
    static func hello(_ client: TestNode, max: UInt32) -> Message {
        .hello(
            HelloMessage(
                minVersion: 1, maxVersion: max, nodeID: client.nodeID, storeID: client.store.storeID, intent: .pull,
                software: "test"))
    }

    @Test func aVersion2SessionRefusesARequestByDigest() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        let item = try a.add("photo", image: jpeg(1))
        let served = ServedPipe(a.store, for: b.nodeID)
        let channel = served.channel()
        try channel.send(Self.hello(b, max: 2))
        guard case .hello(let reply) = try channel.receiveMessage(expecting: "Hello") else {
            Issue.record("no Hello")
            return
        }
        #expect(reply.version == 2)
        try channel.send(.fetchImagesByDigest([ImageWanted(key: item.key, digest: item.image!.digest)]))
        guard case .error(let error) = try channel.receiveMessage(expecting: "Error") else {
            Issue.record("a version-2 server session answered a version-3 request")
            return
        }
        #expect(error.code == .protocolViolation)
        served.waitForServer()
    }

    @Test func aDamagedImageIsAnsweredMissingAndRememberedThenEndSessionGetsDone() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        let good = try a.add("good", image: jpeg(2))
        let bad = try a.add("bad", image: jpeg(3))
        var rotten = try #require(a.imageBytes(bad.key))
        rotten[10] ^= 0xFF
        try Data(rotten).write(to: a.store.imageFileURL(for: bad.key))
        let served = ServedPipe(a.store, for: b.nodeID)
        let channel = served.channel()
        try channel.send(Self.hello(b, max: ProtocolLimits.maxVersion))
        guard case .hello(let reply) = try channel.receiveMessage(expecting: "Hello") else {
            Issue.record("no Hello")
            return
        }
        #expect(reply.version == ProtocolLimits.maxVersion && reply.version >= ProtocolLimits.imagesByDigestVersion)
        let wanted = [good, bad].map { ImageWanted(key: $0.key, digest: $0.image!.digest) }
        try channel.send(.fetchImagesByDigest(wanted))
        guard case .imageHeader(let first) = try channel.receiveMessage(expecting: "ImageHeader") else {
            Issue.record("no ImageHeader")
            return
        }
        #expect(first.key == good.key && !first.missing && first.size == good.image!.size)
        var received: [UInt8] = []
        while received.count < first.size {
            guard case .imageChunk(let bytes) = try channel.receive(expecting: "IMAGE_CHUNK") else { break }
            received += bytes
        }
        #expect(received == a.imageBytes(good.key))
        guard case .imageHeader(let second) = try channel.receiveMessage(expecting: "ImageHeader") else {
            Issue.record("no second ImageHeader")
            return
        }
        #expect(second.key == bad.key && second.missing && second.size == 0)
        try channel.send(.endSession)
        guard case .done(let counts) = try channel.receiveMessage(expecting: "Done") else {
            Issue.record("no Done after EndSession")
            return
        }
        #expect(counts.images == 1)
        served.waitForServer()
        #expect(try a.store.imagesToHeal().map(\.key) == [bad.key])
    }

    /// A healing sink asks by digest under its own key, which on the source may hold another
    /// image by now (or not exist): the source then finds the digest under any key, and the
    /// asked key's file, intact with other bytes, is not taken for damaged.
    @Test func aDigestAskedUnderAKeyHoldingOtherBytesIsFoundUnderAnotherKey() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        let wantedItem = try a.add("wanted", image: jpeg(4))
        let other = try a.add("other", image: jpeg(5))
        let digest = try #require(wantedItem.image?.digest)
        let served = ServedPipe(a.store, for: b.nodeID)
        let channel = served.channel()
        try channel.send(Self.hello(b, max: ProtocolLimits.maxVersion))
        _ = try channel.receiveMessage(expecting: "Hello")
        try channel.send(
            .fetchImagesByDigest([
                ImageWanted(key: other.key, digest: digest), ImageWanted(key: .random(), digest: digest),
            ]))
        for _ in 0..<2 {
            guard case .imageHeader(let header) = try channel.receiveMessage(expecting: "ImageHeader") else {
                Issue.record("no ImageHeader")
                return
            }
            #expect(!header.missing && header.digest == digest && header.size == wantedItem.image?.size)
            var received: [UInt8] = []
            while received.count < header.size {
                guard case .imageChunk(let bytes) = try channel.receive(expecting: "IMAGE_CHUNK") else { break }
                received += bytes
            }
            #expect(received == a.imageBytes(wantedItem.key))
        }
        try channel.send(.endSession)
        _ = try channel.receiveMessage(expecting: "Done")
        served.waitForServer()
        #expect(try a.store.imagesToHeal().isEmpty, "no intact file was taken for damaged")
    }

    /// A pull that meets a rotten local copy of an image it needs fails, but remembers it, so the
    /// next pull fetches it by digest first and then goes through.
    @Test func aRottenLocalCopyFailsOnePullAndHealsOnTheNext() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        let photo = jpeg(7)
        let first = try a.add("first", image: photo)
        try Sync.pull(b, from: a)
        var rotten = try #require(b.imageBytes(first.key))
        rotten[20] ^= 0xFF
        try Data(rotten).write(to: b.store.imageFileURL(for: first.key))
        let second = try a.add("same photo", image: photo)
        #expect(throws: (any Error).self) { try Sync.pull(b, from: a) }
        let report = try Sync.pull(b, from: a)
        #expect(report.healed.kept == [first.key.rawValue])
        #expect(b.imageBytes(first.key) == photo && b.imageBytes(second.key) == photo)
        #expect(try b.store.verify(repair: false).isClean)
    }

    /// A request of several images is answered in its order: every damaged file (the first, one
    /// in the middle, the last) is answered missing, and every intact one arrives whole, one
    /// larger than the sender's hold (checked, then read again to be sent) included. A guard for
    /// any sender that checks images ahead of sending them.
    @Test func aRequestIsAnsweredInItsOrderWithEveryDamagedFileMissing() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        var items: [Item] = []
        for seed in 1...6 {
            let size = seed == 3 ? ImageHold.defaultLimit + 4096 : 3000 + Int(seed)
            items.append(try a.add("item \(seed)", image: jpeg(UInt8(seed), size: size)))
        }
        let damaged = Set([items[0].key, items[3].key, items[5].key])
        for key in damaged {
            var rotten = try #require(a.imageBytes(key))
            rotten[rotten.count / 2] ^= 0xFF
            try Data(rotten).write(to: a.store.imageFileURL(for: key))
        }
        let served = ServedPipe(a.store, for: b.nodeID)
        let channel = served.channel()
        try channel.send(Self.hello(b, max: ProtocolLimits.maxVersion))
        guard case .hello = try channel.receiveMessage(expecting: "Hello") else {
            Issue.record("no Hello")
            return
        }
        try channel.send(.fetchImagesByDigest(items.map { ImageWanted(key: $0.key, digest: $0.image!.digest) }))
        for item in items {
            guard case .imageHeader(let header) = try channel.receiveMessage(expecting: "ImageHeader") else {
                Issue.record("no ImageHeader for \(item.name)")
                return
            }
            #expect(header.key == item.key, "answers out of order: \(header.key) for \(item.name)")
            if damaged.contains(item.key) {
                #expect(header.missing && header.size == 0, "\(item.name) is damaged")
                continue
            }
            #expect(!header.missing && header.size == item.image!.size)
            var received: [UInt8] = []
            while received.count < header.size {
                guard case .imageChunk(let bytes) = try channel.receive(expecting: "IMAGE_CHUNK") else { break }
                received += bytes
            }
            #expect(received == a.imageBytes(item.key), "\(item.name) arrived changed")
        }
        try channel.send(.endSession)
        guard case .done = try channel.receiveMessage(expecting: "Done") else {
            Issue.record("no Done after EndSession")
            return
        }
        served.waitForServer()
    }
}
