import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncProtocol

/// ManifestPage, Records and FetchRecords, most of a transfer's messages, through
/// `Message(decoding:)`: what the encoder writes, what protobuf allows beyond it, and what breaks a rule.
struct BulkMessageDecodingTests {
    /// Protobuf bytes written by hand, for payloads the encoder never makes.
    enum Wire {
        static func varint(_ value: UInt64) -> [UInt8] {
            var value = value
            var out: [UInt8] = []
            while value >= 0x80 {
                out.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            return out + [UInt8(value)]
        }

        static func field(_ number: UInt64, _ value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }

        static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] {
            varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
        }
    }

    static let origin = NodeID(bytes: [UInt8](repeating: 7, count: 32))!
    static let other = NodeID(bytes: [UInt8](repeating: 9, count: 32))!

    static func page(_ random: inout SplitMix64) -> Message {
        let count = Int.random(in: 0...40, using: &random)
        var seq = Int64.random(in: 0...1000, using: &random)
        let entries = (0..<count).map { _ -> ManifestEntry in
            seq += Int64.random(in: 1...5, using: &random)
            return ManifestEntry(
                key: .random(using: &random),
                version: Version(
                    stamp: VersionStamp(rawValue: UInt64.random(in: 0...UInt64.max, using: &random)),
                    origin: Bool.random(using: &random) ? origin : other),
                deleted: Bool.random(using: &random), seq: seq,
                // Version 5: a merge digest on some entries (0 is left out).
                mergeDigest: Bool.random(using: &random) ? 0 : UInt64.random(in: 1...UInt64.max, using: &random))
        }
        var page = ManifestPage(
            entries: entries, throughSeq: seq + Int64.random(in: 0...3, using: &random),
            isFinal: Bool.random(using: &random),
            reconcileHorizon: Bool.random(using: &random) ? VersionStamp(rawValue: 1 << 40) : nil,
            tombstonesAhead: Int64.random(in: 0...9, using: &random))
        page.entriesAhead = Int64.random(in: 0...100_000, using: &random)
        page.imageBytesAhead = Int64.random(in: 0...Int64.max, using: &random)
        return .manifestPage(page)
    }

    static func records(_ random: inout SplitMix64) -> Message {
        let names = ["", "Lamp", "Sofá", "長椅子 🛋️", String(repeating: "n", count: 1024)]
        let serials: [String?] = [nil, "", "SN-1", String(repeating: "s", count: 256)]
        let items = (0..<Int.random(in: 0...30, using: &random)).map { _ -> Item in
            let version = Version(
                stamp: VersionStamp(rawValue: UInt64.random(in: 0...UInt64.max, using: &random)),
                origin: Bool.random(using: &random) ? origin : other)
            let key = ItemKey.random(using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 { return Item.tombstone(key: key, version: version) }
            let image =
                Bool.random(using: &random)
                ? ImageRef(
                    digest: SHA256Digest(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })!,
                    size: Int64.random(in: 1...Int64.max, using: &random)) : nil
            return Item(
                key: key, name: names.randomElement(using: &random)!,
                serialNumber: serials.randomElement(using: &random)!,
                valueInDollars: Int64.random(in: ItemLimits.valueInDollars, using: &random),
                dateCreatedMilliseconds: Int64.random(in: Int64.min...Int64.max, using: &random), image: image,
                version: version)
        }
        return .records(items)
    }

    static func fetchRecords(_ random: inout SplitMix64) -> Message {
        var keys = (0..<Int.random(in: 0...50, using: &random)).map { _ in ItemKey.random(using: &random) }
        // Now and then a key twice, which the generic decoding refuses.
        if !keys.isEmpty, Int.random(in: 0..<8, using: &random) == 0 { keys.append(keys[0]) }
        return .fetchRecords(keys)
    }

    /// A page, records or a FetchRecords, in turn.
    static func message(_ round: Int, _ random: inout SplitMix64) -> Message {
        switch round % 3 {
        case 0: page(&random)
        case 1: records(&random)
        default: fetchRecords(&random)
        }
    }

    static func payload(_ message: Message) -> [UInt8] { message.serializedEnvelope() }

    @Test func everyPageRecordsAndFetchRecordsTheEncoderMakesDecodesToItself() throws {
        var random = SplitMix64(seed: 18)
        for round in 0..<300 {
            let message = Self.message(round, &random)
            let payload = Self.payload(message)
            guard case .fetchRecords(let keys) = message, Set(keys).count < keys.count else {
                #expect(try Message(decoding: payload) == message, "round \(round)")
                continue
            }
            #expect(throws: ProtocolError.self, "round \(round): a key twice") { try Message(decoding: payload) }
        }
    }

    /// What the encoder never writes but protobuf allows: unknown fields at every level, a
    /// field given twice (the last counts), a key in lowercase, an empty serial number present.
    @Test func unknownFieldsRepeatedFieldsAndLowercaseKeysAreRead() throws {
        let key = "4a73b5d2-a6f4-4b40-9f82-ea1e34c1dc04"
        let origin = [UInt8](repeating: 7, count: 32)
        let unknown =
            Wire.field(99, 5) + Wire.field(100, bytes: [1, 2, 3]) + Wire.varint(101 << 3 | 5) + [1, 2, 3, 4]
            + Wire.varint(102 << 3 | 1) + [UInt8](repeating: 0, count: 8)
        let entry =
            Wire.field(1, bytes: Array(key.utf8)) + Wire.field(2, 10) + unknown + Wire.field(2, 11)
            + Wire.field(3, bytes: origin) + Wire.field(4, 1) + Wire.field(5, 4) + Wire.field(4, 0)
        let page = unknown + Wire.field(1, bytes: entry) + Wire.field(2, 9) + Wire.field(3, 1) + Wire.field(2, 5)
        let record =
            Wire.field(1, bytes: Array(key.utf8)) + Wire.field(2, bytes: Array("Chair".utf8))
            + Wire.field(3, bytes: []) + unknown + Wire.field(4, UInt64(bitPattern: -3))
            + Wire.field(8, 12) + Wire.field(9, bytes: origin)
        // Any non-zero varint is true.
        let deleted = record + Wire.field(10, 2)
        let records = Wire.field(6, bytes: unknown + Wire.field(1, bytes: record) + Wire.field(1, bytes: deleted))
        guard case .records(let items) = try Message(decoding: records) else {
            Issue.record("the records were not decoded as records")
            return
        }
        #expect(items.map(\.deleted) == [false, true])
        #expect(items.first?.serialNumber == "")
        #expect(items.first?.valueInDollars == -3)
        guard case .manifestPage(let decoded) = try Message(decoding: Wire.field(4, bytes: page)) else {
            Issue.record("the page was not decoded as a page")
            return
        }
        #expect(decoded.throughSeq == 5 && decoded.isFinal)
        #expect(decoded.entries.map(\.version.stamp.rawValue) == [11])
        #expect(decoded.entries.map(\.deleted) == [false])
        #expect(decoded.entries.map(\.key.rawValue) == [key.uppercased()])
    }

    /// Bytes that are not protobuf, or protobuf that breaks a rule: a field number protobuf does
    /// not allow, a message given as a varint, texts that are not UTF-8, an image size without a
    /// digest.
    @Test func malformedPagesAndRecordsAreRefused() throws {
        #expect(
            try Message(decoding: Wire.field(4, bytes: []))
                == .manifestPage(
                    ManifestPage(entries: [], throughSeq: 0, isFinal: false)))
        let cases: [[UInt8]] = [
            Wire.field(4, bytes: Wire.varint(1 << 32) + [0]),
            Wire.field(4, 1),
            // A key that is not UTF-8 (its last byte 0xC3).
            Wire.field(5, bytes: Wire.field(1, bytes: Array("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC0".utf8) + [0xC3])),
            // A record whose value is outside the range (2^63 - 1).
            Wire.field(
                6,
                bytes: Wire.field(
                    1,
                    bytes: Wire.field(1, bytes: Array("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04".utf8))
                        + Wire.field(4, UInt64(Int64.max)) + Wire.field(9, bytes: [UInt8](repeating: 7, count: 32)))),
            // A record whose name is not UTF-8.
            Wire.field(
                6,
                bytes: Wire.field(
                    1,
                    bytes: Wire.field(1, bytes: Array("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04".utf8))
                        + Wire.field(2, bytes: [0x66, 0xC3, 0x28])
                        + Wire.field(9, bytes: [UInt8](repeating: 7, count: 32))
                )),
            // A record with an image size and no digest.
            Wire.field(
                6,
                bytes: Wire.field(
                    1,
                    bytes: Wire.field(1, bytes: Array("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04".utf8)) + Wire.field(7, 5)
                        + Wire.field(9, bytes: [UInt8](repeating: 7, count: 32)))),
        ]
        for payload in cases {
            #expect(throws: ProtocolError.self, "\(payload)") { try Message(decoding: payload) }
        }
    }

    @Test func pagesAndRecordsOverTheirCountLimitsAreRefused() throws {
        let version = Version(stamp: VersionStamp(rawValue: 1), origin: Self.origin)
        let entries = (1...ProtocolLimits.maxManifestEntries + 1).map {
            ManifestEntry(key: .random(), version: version, deleted: true, seq: Int64($0))
        }
        let records = (0...ProtocolLimits.maxRecordsPerBatch).map { _ in
            Item.tombstone(key: .random(), version: version)
        }
        for message in [
            Message.manifestPage(ManifestPage(entries: entries, throughSeq: Int64(entries.count), isFinal: true)),
            .records(records),
        ] {
            #expect(throws: ProtocolError.self) { try Message(decoding: Self.payload(message)) }
            var fewer = message
            if case .manifestPage(var page) = message {
                page.entries.removeLast()
                fewer = .manifestPage(page)
            } else {
                fewer = .records(records.dropLast())
            }
            #expect(try Message(decoding: Self.payload(fewer)) == fewer)
        }
    }
}
