import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Synchronization
import Testing

@testable import HPSyncEngine

/// Where the code must do what Protocol.md says (issue 12 §5).
@Suite struct SpecConformanceTests {
    let serverID = NodeID(certificateDER: Array("source".utf8))

    func entry(_ key: ItemKey, seq: Int64) -> ManifestEntry {
        ManifestEntry(
            key: key, version: Version(stamp: VersionStamp(rawValue: 1_750_000_000_000 << 16), origin: serverID),
            deleted: false, seq: seq)
    }

    /// Runs a pull against a scripted source and returns what the sink sent after the script's
    /// last frame: a sink that detects a violation must say why with an Error, then close.
    func errorAfter(_ script: @escaping @Sendable (FramedChannel, PipeStream) throws -> Void) throws
        -> PeerErrorMessage?
    {
        let client = try TestNode("client")
        let received = Mutex<PeerErrorMessage?>(nil)
        let script = HostileServer.Script { channel, stream in
            try script(channel, stream)
            if case .error(let error)? = try? channel.receiveMessage(expecting: "Error") {
                received.withLock { $0 = error }
            }
        }
        #expect(throws: (any Error).self) { try HostileServer.pull(client, serverID: serverID, script: script) }
        return received.withLock { $0 }
    }

    @Test func aSinkThatSeesAKeyTwiceSaysSoWithErrorProtocol() throws {
        let key = ItemKey.random()
        let error = try errorAfter { channel, _ in
            // Two entries, one key: valid framing, broken rule (Protocol.md 4.3).
            try channel.send(
                .manifestPage(
                    ManifestPage(entries: [entry(key, seq: 1), entry(key, seq: 2)], throughSeq: 2, isFinal: true)))
        }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("twice") == true)
    }

    @Test func aSinkThatGetsAnUnrequestedRecordSaysSo() throws {
        let key = ItemKey.random()
        let error = try errorAfter { channel, _ in
            try channel.send(HostileServer.page([entry(key, seq: 1)], through: 1))
            _ = try channel.receiveMessage(expecting: "FetchRecords")
            let stranger = Item(
                key: .random(), name: "x", dateCreatedMilliseconds: 0,
                version: Version(stamp: VersionStamp(rawValue: 1), origin: serverID))
            try channel.send(.records([stranger]))
        }
        #expect(error?.code == .protocolViolation)
    }

    @Test func aSinkThatGetsATooLongNameSaysErrorBadData() throws {
        let key = ItemKey.random()
        let error = try errorAfter { channel, stream in
            try channel.send(HostileServer.page([entry(key, seq: 1)], through: 1))
            _ = try channel.receiveMessage(expecting: "FetchRecords")
            // A name of 1,025 bytes, encoded by hand: the validating encoder would not make it.
            func varint(_ value: UInt64) -> [UInt8] {
                var value = value
                var bytes: [UInt8] = []
                while value >= 0x80 {
                    bytes.append(UInt8(value & 0x7F) | 0x80)
                    value >>= 7
                }
                return bytes + [UInt8(value)]
            }
            func field(_ number: UInt64, _ bytes: [UInt8]) -> [UInt8] {
                varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
            }
            let record =
                field(1, Array(key.rawValue.utf8)) + field(2, Array(repeating: 0x78, count: 1025))
                + varint(8 << 3) + varint(1_750_000_000_000 << 16) + field(9, Array(repeating: 1, count: 32))
            let payload = field(6, field(1, record))  // Envelope.records { records: [record] }
            let length = UInt32(payload.count)
            try HostileServer.raw(
                stream,
                [
                    1, UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
                    UInt8(length & 0xFF),
                ] + payload)
        }
        #expect(error?.code == .badData)
    }

    /// Version 1 has no dry_run: a server that would serve a preview in it must refuse.
    @Test func aPushPreviewIsRefusedRatherThanAppliedInVersion1() {
        let client = NodeID(certificateDER: [1])
        let hello = HelloMessage(
            minVersion: 1, maxVersion: 1, nodeID: client, storeID: .random(), intent: .push, software: "old",
            dryRun: true)
        let decision = ServerHandshake.decide(
            hello: hello, certificateNodeID: client, peer: Peer(name: "p", nodeID: client, permission: .readWrite),
            serverNodeID: serverID,
            serverStoreID: .random(), software: "s")
        guard case .refuse(let error) = decision else {
            Issue.record("a version-1 push preview was accepted: it would be applied")
            return
        }
        #expect(error.code == .incompatibleVersion)
    }
}
