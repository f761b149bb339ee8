import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// One network fault to inject into a pull or a push over real TLS sockets.
struct FaultCase: Sendable, CustomTestStringConvertible {
    var push: Bool
    var fault: FaultProxy.Fault
    var direction: FaultProxy.Direction
    /// Whether the session must fail (a throttle only slows it down).
    var mustFail: Bool { if case .throttle = fault { false } else { true } }
    var testDescription: String { "\(push ? "push" : "pull"), \(fault), \(direction)" }

    /// Offsets fit the direction: the sink's requests are a few KB, the source's data ~250 KB.
    static let all: [FaultCase] = [false, true].flatMap { push in
        [FaultProxy.Direction.toServer, .toClient].flatMap { direction in
            let heavy = (direction == .toServer) == push
            let offsets = heavy ? [300, 4_000, 90_000] : [300, 1_500, 5_000]
            return offsets.flatMap { offset in
                [FaultProxy.Fault.cut(afterBytes: offset), .flip(atByte: offset - 100)]
            }.map { FaultCase(push: push, fault: $0, direction: direction) }
                + [FaultCase(push: push, fault: .stall(afterBytes: heavy ? 20_000 : 2_000), direction: direction)]
        } + [FaultCase(push: push, fault: .throttle(bytesPerSecond: 400_000), direction: push ? .toServer : .toClient)]
    }
}

/// Client and server talk through a `FaultProxy`: every fault ends in a clear error, nothing
/// half-applied, and the next run through a healthy network finishes the job.
@Suite struct NetworkFaultTests {
    /// Server timeouts short enough that a stalled peer is dropped quickly.
    static let timeouts = TLSTimeouts(connect: .seconds(5), handshake: .seconds(2), idle: .seconds(2))

    @Test(arguments: FaultCase.all)
    func faultEndsInAClearErrorAndTheNextRunFinishes(_ fault: FaultCase) throws {
        let server = try TLSNode("server")
        let client = try TLSNode("client")
        try server.serve(timeouts: Self.timeouts)
        defer { server.stop() }
        try server.trust(client)
        let source = fault.push ? client : server
        let sink = fault.push ? server : client
        for i in 0..<200 {
            try source.node.add(
                "item \(i)", value: Int64(i), image: i % 70 == 0 ? jpeg(UInt8(i % 256), size: 60_000) : nil)
        }
        try sink.node.add("already on the sink")

        func run(through proxy: FaultProxy) throws -> SyncReport {
            try? client.node.store.removePeer(named: "server")
            try client.node.store.addPeer(
                Peer(name: "server", nodeID: server.identity.nodeID, address: "127.0.0.1:\(proxy.port)"))
            return fault.push
                ? try client.push("server", timeouts: Self.timeouts)
                : try client.pull("server", timeouts: Self.timeouts)
        }

        let proxy = try FaultProxy(to: server.address.port, fault: fault.fault, direction: fault.direction)
        let started = Date()
        var failure: (any Error)?
        do { _ = try run(through: proxy) } catch { failure = error }
        proxy.stop()
        if fault.mustFail {
            let error = try #require(failure, "the fault went unnoticed")
            #expect(!"\(error)".isEmpty)
            print("network fault \(fault.testDescription): \(error)")
            #expect(Date().timeIntervalSince(started) < 15, "the fault was detected in time")
        } else {
            #expect(failure == nil, "a slow network is not an error: \(String(describing: failure))")
        }
        // Stopping the server waits for its side of the session to notice the fault and roll
        // back its page; a new server serves the next run.
        server.stop()
        for node in [source, sink] {
            #expect(try node.node.store.verify(repair: false).isClean)
        }
        let sourceItems = Dictionary(uniqueKeysWithValues: try source.node.snapshot().map { ($0.key, $0) })
        for item in try sink.node.snapshot() where item.name != "already on the sink" {
            #expect(sourceItems[item.key] == item, "only whole records are applied")
            if let image = item.image {
                #expect(sink.node.imageBytes(item.key).map(SHA256.hash) == image.digest)
            }
        }

        try server.serve(timeouts: Self.timeouts)
        let healthy = try FaultProxy(to: server.address.port, fault: .none, direction: .toClient)
        defer { healthy.stop() }
        _ = try run(through: healthy)
        let expected = try source.node.snapshot().filter { $0.name != "already on the sink" }
        #expect(try sink.node.snapshot().filter { $0.name != "already on the sink" } == expected)
        #expect(try sink.node.store.verify(repair: false).isClean)
    }

    /// The TLS layer, not the protobuf decoder, must catch a flipped byte in application data.
    @Test(arguments: [FaultProxy.Direction.toServer, .toClient])
    func flippedByteIsCaughtByTLS(_ direction: FaultProxy.Direction) throws {
        let server = try TLSNode("server")
        let client = try TLSNode("client")
        try server.serve(timeouts: Self.timeouts)
        defer { server.stop() }
        try server.trust(client)
        // Data flows toward the side that reads the flipped byte: push for the server, pull for the client.
        let source = direction == .toServer ? client : server
        for i in 0..<50 { try source.node.add("item \(i)", image: i == 0 ? jpeg(9, size: 40_000) : nil) }
        let proxy = try FaultProxy(to: server.address.port, fault: .flip(atByte: 20_000), direction: direction)
        defer { proxy.stop() }
        try client.node.store.addPeer(
            Peer(name: "server", nodeID: server.identity.nodeID, address: "127.0.0.1:\(proxy.port)"))
        let text: String
        do {
            _ =
                try direction == .toServer
                ? client.push("server", timeouts: Self.timeouts) : client.pull("server", timeouts: Self.timeouts)
            Issue.record("a flipped byte went unnoticed")
            return
        } catch {
            text = "\(error)"
        }
        if direction == .toClient {
            // The client read the corrupted record itself: OpenSSL's AEAD check must say so.
            #expect(text.contains("TLS") || text.contains("decrypt") || text.contains("bad record"), "\(text)")
        }
        #expect(!text.contains("protobuf"), "corruption reached the decoder: \(text)")
    }
}
