import Foundation
import HPSyncCrypto
import HPSyncModel
import Testing

@testable import HPSyncProtocol

@Suite struct FrameCodecTests {
    static let node = NodeID(certificateDER: [1, 2, 3])
    static let key = try! ItemKey("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")

    static func sampleMessages() -> [Message] {
        let version = Version(stamp: VersionStamp(milliseconds: 1_700_000_000_000, counter: 3), origin: node)
        let digest = SHA256.hash(Array("image".utf8))
        return [
            .hello(HelloMessage(nodeID: node, storeID: StoreID.random(), intent: .pull, software: "test")),
            .error(PeerErrorMessage(code: .busy, message: "busy")),
            .pullRequest(checkpointStore: StoreID.random(), sinceSeq: 42),
            .pullRequest(checkpointStore: nil, sinceSeq: 0),
            .manifestPage(
                ManifestPage(
                    entries: [ManifestEntry(key: key, version: version, deleted: false, seq: 7)], throughSeq: 9,
                    isFinal: true)),
            .fetchRecords([key]),
            .records([
                Item(
                    key: key, name: "Couch", serialNumber: "S1", valueInDollars: 500,
                    dateCreatedMilliseconds: 1_600_000_000_123, image: ImageRef(digest: digest, size: 10),
                    version: version),
                Item(key: key, name: "No serial", dateCreatedMilliseconds: -5, version: version),
                Item.tombstone(key: key, version: version),
            ]),
            .fetchImages([ImageWanted(key: key, digest: digest)]),
            .imageHeader(ImageHeaderMessage(key: key, digest: digest, size: 123)),
            .imageHeader(ImageHeaderMessage(key: key, digest: digest, size: 0, missing: true)),
            .pageDone(throughSeq: 9, counts: ChangeCounts()),
            .done(ChangeCounts()),
        ]
    }

    @Test func everyMessageRoundTrips() throws {
        let messages = Self.sampleMessages()
        var decoder = FrameDecoder()
        for message in messages {
            decoder.append(FrameEncoder.encode(message))
        }
        decoder.append(FrameEncoder.chunkHeader(count: 3) + [9, 8, 7])
        for message in messages {
            let decoded = try decoder.next()
            #expect(decoded == .message(message), "\(String(describing: decoded)) != \(message)")
        }
        #expect(try decoder.next() == .imageChunk([9, 8, 7]))
        #expect(try decoder.next() == nil)
    }

    @Test func decoderWaitsForWholeFrames() throws {
        let bytes = FrameEncoder.encode(.fetchRecords([Self.key]))
        var decoder = FrameDecoder()
        for byte in bytes.dropLast() {
            decoder.append([byte])
            #expect(try decoder.next() == nil)
        }
        decoder.append([bytes.last!])
        #expect(try decoder.next() == .message(.fetchRecords([Self.key])))
    }

    @Test func headerRejectsOversizedAndUnknownFrames() {
        #expect(throws: ProtocolError.frameTooLarge(type: "MESSAGE", length: 0xFFFF_FFFF, limit: 4 << 20)) {
            try FrameHeader(parsing: [1, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: ProtocolError.frameTooLarge(type: "IMAGE_CHUNK", length: (1 << 20) + 1, limit: 1 << 20)) {
            try FrameHeader(parsing: FrameHeader(type: .imageChunk, length: (1 << 20) + 1).bytes)
        }
        #expect(throws: ProtocolError.unknownFrameType(0x47)) { try FrameHeader(parsing: Array("GET /".utf8)) }
        #expect(throws: ProtocolError.emptyFrame(type: "MESSAGE")) { try FrameHeader(parsing: [1, 0, 0, 0, 0]) }
    }

    @Test func garbagePayloadIsAnError() {
        var decoder = FrameDecoder()
        decoder.append([1, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
        #expect(throws: ProtocolError.self) { try decoder.next() }
    }

    @Test func emptyEnvelopeIsUnknownMessage() {
        // A field number this version does not know decodes to an envelope with no body.
        let unknownField: [UInt8] = [0xF8, 0x07, 0x01]  // field 127, varint 1
        #expect(throws: ProtocolError.unknownMessage) { try Message(decoding: unknownField) }
    }
}
