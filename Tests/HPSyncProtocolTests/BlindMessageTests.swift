import Foundation
import HPSyncCrypto
import HPSyncModel
import SwiftProtobuf
import Testing

@testable import HPSyncProtocol

/// Version 4's blind messages (Protocol.md 4.15): what a blind store and a trusted node accept.
@Suite struct BlindMessageTests {
    func decode(_ body: Hpsync_V1_Envelope.OneOf_Body) throws -> HPSyncProtocol.Message {
        try MessageValidationTests().decode(body)
    }

    let origin = NodeID(certificateDER: [9])
    func id(_ byte: UInt8) -> BlindID { BlindID(bytes: [UInt8](repeating: byte, count: 32))! }

    func entry(_ byte: UInt8, seq: Int64, photo: Bool = false) -> BlindEntry {
        BlindEntry(
            id: id(byte), version: Version(stamp: VersionStamp(rawValue: 1 << 20 | UInt64(byte)), origin: origin),
            seq: seq, photo: photo ? BlindPhotoRef(id: id(byte &+ 100), size: 4113) : nil)
    }

    @Test func blindMessagesRoundTrip() throws {
        let object = BlindObject(entry: entry(1, seq: 3, photo: true), sealed: [UInt8](repeating: 5, count: 284))
        var hello = HelloMessage(
            nodeID: origin, storeID: .random(), intent: .blind, version: 4, software: "t", clockMilliseconds: 7)
        hello.blind = true
        hello.inventoryKey = [UInt8](repeating: 3, count: 32)
        let messages: [HPSyncProtocol.Message] = [
            .hello(hello),
            .blindHeadRequest,
            .blindHead(BlindHeadMessage(epoch: 0, sealed: [])),
            .blindHead(BlindHeadMessage(epoch: 9, sealed: [1, 2, 3])),
            .blindList(sinceSeq: 42),
            .blindListPage(
                BlindListPage(entries: [entry(1, seq: 1), entry(2, seq: 5, photo: true)], throughSeq: 9, isFinal: true)),
            .blindGet([id(1), id(2)]),
            .blindObjects([object], isFinal: false),
            .blindObjects([], isFinal: true),
            .blindGetPhoto(id(4), kind: .photo), .blindGetPhoto(id(5), kind: .pack),
            .blindPhotoHeader(BlindPhotoHeader(id: id(4), size: 4113)),
            .blindPhotoHeader(BlindPhotoHeader(id: id(4), size: 0, missing: true)),
            .blindPhotoHeader(BlindPhotoHeader(id: id(6), size: 69_222_929, kind: .pack)),
            .blindPut([object]),
            .blindPutDone(applied: 1, stale: 2, throughSeq: 3),
            .blindSetHead(expected: 2, head: BlindHeadMessage(epoch: 3, sealed: [7])),
        ]
        for message in messages {
            #expect(try HPSyncProtocol.Message(decoding: message.serializedEnvelope()) == message, "\(message.name)")
        }
    }

    @Test func badIDsSizesCountsAndOrdersAreRefused() throws {
        var get = Hpsync_V1_BlindGet()
        get.ids = [Data(repeating: 1, count: 31)]
        #expect(throws: ProtocolError.self) { try decode(.blindGet(get)) }
        get.ids = [Data(repeating: 1, count: 32), Data(repeating: 1, count: 32)]
        #expect(throws: ProtocolError.self) { try decode(.blindGet(get)) }
        get.ids = (0..<1025).map { Data(repeating: UInt8($0 % 256), count: 31) + Data([UInt8($0 / 256)]) }
        #expect(throws: ProtocolError.self) { try decode(.blindGet(get)) }

        var wire = Hpsync_V1_BlindEntry()
        wire.id = Data(repeating: 1, count: 32)
        wire.origin = Data(origin.bytes)
        wire.stamp = 5
        wire.seq = 2
        var page = Hpsync_V1_BlindListPage()
        page.entries = [wire, wire]
        page.throughSeq = 9
        #expect(throws: ProtocolError.self, "seqs must ascend") { try decode(.blindListPage(page)) }
        page.entries = [wire]
        page.throughSeq = 1
        #expect(throws: ProtocolError.self, "seq beyond through_seq") { try decode(.blindListPage(page)) }
        wire.photoSize = 10
        page.entries = [wire]
        page.throughSeq = 9
        #expect(throws: ProtocolError.self, "a size without a photo") { try decode(.blindListPage(page)) }
        wire.photoSize = 0
        wire.stamp = 0
        page.entries = [wire]
        #expect(throws: ProtocolError.self, "stamp 0") { try decode(.blindListPage(page)) }

        var object = Hpsync_V1_BlindObject()
        object.sealed = Data([1])
        var put = Hpsync_V1_BlindPut()
        put.objects = [object]
        #expect(throws: ProtocolError.self, "no entry") { try decode(.blindPut(put)) }
        wire.stamp = 5
        object.entry = wire
        object.sealed = Data(count: 65_537)
        put.objects = [object]
        #expect(throws: ProtocolError.self, "sealed record over 64 KiB") { try decode(.blindPut(put)) }

        var head = Hpsync_V1_BlindHead()
        head.epoch = 0
        head.sealed = Data([1])
        #expect(throws: ProtocolError.self, "sealed bytes without an epoch") { try decode(.blindHead(head)) }
        var set = Hpsync_V1_BlindSetHead()
        set.expectedEpoch = 4
        set.epoch = 4
        set.sealed = Data([1])
        #expect(throws: ProtocolError.self, "an epoch that does not move forward") { try decode(.blindSetHead(set)) }

        var hello = Hpsync_V1_Hello()
        hello.minVersion = 1
        hello.maxVersion = 4
        hello.nodeID = Data(origin.bytes)
        hello.storeID = Data(repeating: 1, count: 16)
        hello.intent = .pull
        hello.inventoryKey = Data(repeating: 1, count: 31)
        #expect(throws: ProtocolError.self, "a 31-byte inventory key") { try decode(.hello(hello)) }
    }

    /// Version 6: a sealed stream's kind is a photo or a pack, and each has its own size bound
    /// (`ProtocolLimits.maxSealedPackBytes` is checked against the sealing in HPSyncCryptoTests).
    @Test func aStreamsKindAndItsSizeBoundAreChecked() throws {
        var header = Hpsync_V1_BlindPhotoHeader()
        header.photoID = Data(repeating: 3, count: 32)
        header.kind = 2
        #expect(throws: ProtocolError.self, "kind 2") { try decode(.blindPhotoHeader(header)) }
        header.kind = 1
        header.size = UInt64(ProtocolLimits.maxSealedPackBytes) + 1
        #expect(throws: ProtocolError.self, "a pack beyond its bound") { try decode(.blindPhotoHeader(header)) }
        header.kind = 0
        #expect(
            try decode(.blindPhotoHeader(header))
                == .blindPhotoHeader(
                    BlindPhotoHeader(id: id(3), size: ProtocolLimits.maxSealedPackBytes + 1)),
            "a photo may be that large")
        var get = Hpsync_V1_BlindGetPhoto()
        get.photoID = Data(repeating: 3, count: 32)
        get.kind = 7
        #expect(throws: ProtocolError.self, "kind 7") { try decode(.blindGetPhoto(get)) }
    }
}
