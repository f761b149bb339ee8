import Foundation
import HPSyncCrypto
import HPSyncModel
import SwiftProtobuf
import Testing

@testable import HPSyncProtocol

/// The decoder reuses the previous entry's origin when the bytes are the same: each entry must
/// still get its own origin, and a malformed one after a good one is still refused.
@Suite struct OriginDecodingTests {
    static let a = Data(repeating: 1, count: 32)
    static let b = Data((0..<32).map { UInt8($0) })
    /// `a` but for its last byte.
    static let nearA = Data(repeating: 1, count: 31) + [2]

    func decode(_ body: Hpsync_V1_Envelope.OneOf_Body) throws -> HPSyncProtocol.Message {
        var envelope = Hpsync_V1_Envelope()
        envelope.body = body
        let bytes: [UInt8] = try envelope.serializedBytes()
        return try HPSyncProtocol.Message(decoding: bytes)
    }

    func records(_ origins: [Data]) -> Hpsync_V1_Envelope.OneOf_Body {
        var records = Hpsync_V1_Records()
        records.records = origins.map { origin in
            var record = Hpsync_V1_Record()
            record.key = ItemKey.random().rawValue
            record.name = "Lamp"
            record.origin = origin
            record.stamp = 1
            return record
        }
        return .records(records)
    }

    func page(_ origins: [Data]) -> Hpsync_V1_Envelope.OneOf_Body {
        var page = Hpsync_V1_ManifestPage()
        page.entries = origins.enumerated().map { index, origin in
            var entry = Hpsync_V1_ManifestEntry()
            entry.key = ItemKey.random().rawValue
            entry.origin = origin
            entry.stamp = 1
            entry.seq = UInt64(index + 1)
            return entry
        }
        page.throughSeq = UInt64(origins.count)
        return .manifestPage(page)
    }

    static let sequence = [a, a, b, b, a, nearA, nearA, a]

    @Test func eachRecordKeepsItsOwnOrigin() throws {
        guard case .records(let items) = try decode(records(Self.sequence)) else {
            Issue.record("not Records")
            return
        }
        #expect(items.map { Data($0.version.origin.bytes) } == Self.sequence)
    }

    @Test func eachManifestEntryKeepsItsOwnOrigin() throws {
        guard case .manifestPage(let page) = try decode(page(Self.sequence)) else {
            Issue.record("not ManifestPage")
            return
        }
        #expect(page.entries.map { Data($0.version.origin.bytes) } == Self.sequence)
    }

    @Test(arguments: [Data(repeating: 1, count: 31), Data(repeating: 1, count: 33), Data()])
    func aMalformedOriginAfterAGoodOneIsRefused(_ bad: Data) {
        #expect(throws: ProtocolError.self) { try decode(records([Self.a, bad])) }
        #expect(throws: ProtocolError.self) { try decode(page([Self.a, bad])) }
    }
}
