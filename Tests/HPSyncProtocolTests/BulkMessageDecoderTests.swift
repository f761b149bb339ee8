import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncProtocol

/// The direct decoding of ManifestPage and Records must give what the generic decoding gives,
/// for every payload it accepts; for the rest the generic decoding decides.
struct BulkMessageDecoderTests {
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
                deleted: Bool.random(using: &random), seq: seq)
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

    /// One of the messages the direct decoding takes, in turn.
    static func message(_ round: Int, _ random: inout SplitMix64) -> Message {
        switch round % 3 {
        case 0: page(&random)
        case 1: records(&random)
        default: fetchRecords(&random)
        }
    }

    static func payload(_ message: Message) -> [UInt8] { message.serializedEnvelope() }

    static func fast(_ payload: [UInt8]) -> Message? {
        payload.withUnsafeBytes { BulkMessageDecoder.decode($0) }
    }

    @Test func everyPageAndRecordsTheEncoderMakesIsDecodedDirectlyAsTheGenericDecodingDoes() throws {
        var random = SplitMix64(seed: 18)
        for round in 0..<300 {
            let message = Self.message(round, &random)
            let payload = Self.payload(message)
            let direct = Self.fast(payload)
            guard case .fetchRecords(let keys) = message, Set(keys).count < keys.count else {
                #expect(direct == message, "round \(round)")
                #expect(try Message(decodingGenerically: payload) == message, "round \(round)")
                continue
            }
            #expect(direct == nil, "round \(round): a key twice")
            #expect(throws: ProtocolError.self) { try Message(decodingGenerically: payload) }
        }
    }

    /// Random damage to valid payloads: whatever the direct decoding still accepts, the generic
    /// one accepts too, with the same result. Some damage keeps a payload valid (a changed
    /// stamp, a flipped flag), so the direct decoding must take some of them.
    @Test func aDamagedPayloadIsTakenDirectlyOnlyWhenTheGenericDecodingAgrees() throws {
        var random = SplitMix64(seed: 2026)
        var accepted = 0
        var rejected = 0
        for round in 0..<3000 {
            var payload = Self.payload(Self.message(round, &random))
            guard !payload.isEmpty else { continue }
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<max(payload.count, 1), using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: payload[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                case 1: payload[at] = UInt8.random(in: 0...255, using: &random)
                case 2: payload.removeSubrange(at...)
                case 3: payload.insert(UInt8.random(in: 0...255, using: &random), at: at)
                default: payload.remove(at: at)
                }
                if payload.isEmpty { break }
            }
            let generic = Result { () throws(ProtocolError) in try Message(decodingGenerically: payload) }
            guard let direct = Self.fast(payload) else {
                rejected += 1
                continue
            }
            accepted += 1
            #expect(try generic.get() == direct, "round \(round): \(payload)")
        }
        #expect(accepted > 100 && rejected > 100, "accepted \(accepted), rejected \(rejected)")
    }

    /// What the encoder never writes but protobuf allows: unknown fields at every level, a
    /// field given twice (the last counts), a key in lowercase, an empty serial number present.
    @Test func unknownFieldsRepeatedFieldsAndLowercaseKeysReadAsTheGenericDecodingReadsThem() throws {
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
        for payload in [Wire.field(4, bytes: page), records] {
            let direct = try #require(Self.fast(payload))
            #expect(try Message(decodingGenerically: payload) == direct)
        }
        #expect(
            Self.fast(records).map { if case .records(let items) = $0 { items.map(\.deleted) } else { [] } } == [
                false, true,
            ])
        guard case .manifestPage(let decoded)? = Self.fast(Wire.field(4, bytes: page)) else {
            Issue.record("the page was not decoded directly")
            return
        }
        #expect(decoded.throughSeq == 5 && decoded.isFinal)
        #expect(decoded.entries.map(\.version.stamp.rawValue) == [11])
        #expect(decoded.entries.map(\.deleted) == [false])
        #expect(decoded.entries.map(\.key.rawValue) == [key.uppercased()])
    }

    /// Payloads the direct decoding leaves to the generic one: another message, two bodies, a
    /// known field with the wrong wire type, a group, a field number protobuf does not allow.
    @Test func whatTheDirectDecodingDoesNotTakeIsLeftToTheGenericOne() throws {
        let empty = Wire.field(4, bytes: [])
        #expect(Self.fast(empty) == .manifestPage(ManifestPage(entries: [], throughSeq: 0, isFinal: false)))
        let cases: [[UInt8]] = [
            Self.payload(.pageDone(throughSeq: 3, counts: ChangeCounts())),
            empty + empty,
            Wire.field(4, bytes: Wire.field(2, bytes: [1])),
            Wire.field(4, bytes: [0x0B, 0x0C]),
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
        for payload in cases { #expect(Self.fast(payload) == nil, "\(payload)") }
        #expect(throws: ProtocolError.self) { try Message(decodingGenerically: cases[cases.count - 2]) }
    }

    @Test func pagesAndRecordsOverTheirCountLimitsAreLeftToTheGenericDecoding() throws {
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
            let payload = Self.payload(message)
            #expect(Self.fast(payload) == nil)
            #expect(throws: ProtocolError.self) { try Message(decodingGenerically: payload) }
            var fewer = message
            if case .manifestPage(var page) = message {
                page.entries.removeLast()
                fewer = .manifestPage(page)
            } else {
                fewer = .records(records.dropLast())
            }
            #expect(Self.fast(Self.payload(fewer)) == fewer)
        }
    }

    @Test func theAuditChecksTheFirstAndEvery64thAndTurnsTheDirectRouteOffAtADisagreement() {
        let audit = BulkMessageDecoder.Audit()
        let decisions = (0..<129).map { _ in audit.next() }
        #expect(decisions.indices.filter { decisions[$0] == .check } == [0, 64, 128])
        #expect(decisions.allSatisfy { $0 != .off })
        audit.disagreed()
        #expect(audit.next() == .off)
        #expect(audit.disagreements == 1)
    }

    /// Message(decoding:) goes through the audit: each payload the direct route takes counts.
    @Test func decodingAPageThroughMessageCountsInTheAudit() throws {
        var random = SplitMix64(seed: 7)
        let message = Self.page(&random)
        let before = BulkMessageDecoder.audit.decoded
        #expect(try Message(decoding: Self.payload(message)) == message)
        #expect(BulkMessageDecoder.audit.decoded > before)
    }
}
