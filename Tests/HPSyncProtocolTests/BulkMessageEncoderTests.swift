import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncProtocol

/// Pages and records written directly must be the bytes SwiftProtobuf writes.
struct BulkMessageEncoderTests {
    typealias Messages = BulkMessageDecodingTests

    @Test func pagesAndRecordsAreWrittenByteForByteAsSwiftProtobufWritesThem() {
        var random = SplitMix64(seed: 15)
        for round in 0..<400 {
            let message = round.isMultiple(of: 2) ? Messages.page(&random) : Messages.records(&random)
            let direct = BulkMessageEncoder.encode(message)
            #expect(direct == message.serializedEnvelopeGenerically(), "round \(round): \(message)")
        }
    }

    /// Version 5: records whose items carry merge states (fields at versions of their own,
    /// bases, a clash kept as a conflict, a tombstone that keeps fields) with their candidates,
    /// and joined flags.
    @Test func recordsWithCandidatesAreWrittenAsSwiftProtobufWritesThem() throws {
        var random = SplitMix64(seed: 36)
        let origins = [
            NodeID(bytes: [UInt8](repeating: 3, count: 32))!, NodeID(bytes: [UInt8](repeating: 4, count: 32))!,
        ]
        for round in 0..<200 {
            guard case .records(var items) = Messages.records(&random) else { continue }
            for index in items.indices where !items[index].deleted && Bool.random(using: &random) {
                let stamp = items[index].version.stamp.rawValue >> 2
                func at(_ step: UInt64, _ origin: Int) -> Version {
                    Version(stamp: VersionStamp(rawValue: stamp + step), origin: origins[origin])
                }
                var base = items[index]
                base.version = at(0, 0)
                var one = ItemMergeState(record: base)
                var other = one
                try one.apply(FieldEdit(name: "", valueInDollars: -Int64(round)), at: at(1, 0))
                try other.apply(
                    FieldEdit(name: "other \(round)", serialNumber: .some(nil), photo: .some(nil)), at: at(2, 1))
                var joined = try one.joined(with: other)
                if round.isMultiple(of: 5) { try joined.delete(at: at(3, 1)) }
                items[index] = joined.item
                items[index].mergeState = joined
                items[index].joined = Bool.random(using: &random)
            }
            let message = Message.records(items)
            #expect(BulkMessageEncoder.encode(message) == message.serializedEnvelopeGenerically(), "round \(round)")
            // And back: the flag travels with the candidates.
            guard case .records(let decoded) = try Message(decoding: BulkMessageEncoder.encode(message)!) else {
                Issue.record("round \(round): not records")
                continue
            }
            #expect(decoded.map(\.joined) == items.map(\.joined), "round \(round)")
        }
    }

    /// Values at the edges of their varints, empty texts and pages, a serial number that is set
    /// but empty, negative values, tombstones whose other fields are ignored.
    @Test func edgeValuesAreWrittenAsSwiftProtobufWritesThem() {
        let origin = NodeID(bytes: [UInt8](repeating: 3, count: 32))!
        let key = ItemKey.random()
        var messages: [Message] = [
            .manifestPage(ManifestPage(entries: [], throughSeq: 0, isFinal: false)), .records([]),
        ]
        for value in [0, 1, 127, 128, 16_383, 16_384, Int64.max, -1, Int64.min] {
            let stamp = VersionStamp(rawValue: UInt64(bitPattern: value))
            let version = Version(stamp: stamp, origin: origin)
            let seq = max(value, 0)
            var page = ManifestPage(
                entries: [ManifestEntry(key: key, version: version, deleted: value < 0, seq: seq)], throughSeq: seq,
                isFinal: true, reconcileHorizon: value == 0 ? nil : stamp, tombstonesAhead: seq)
            page.entriesAhead = seq
            page.imageBytesAhead = seq
            messages.append(.manifestPage(page))
            let image =
                value > 0 ? ImageRef(digest: SHA256Digest(bytes: [UInt8](repeating: 1, count: 32))!, size: value) : nil
            messages.append(
                .records([
                    Item(
                        key: key, name: value == 0 ? "" : "n\(value)", serialNumber: value < 0 ? "" : nil,
                        valueInDollars: value, dateCreatedMilliseconds: value, image: image, version: version),
                    Item(
                        key: key, name: "ignored", valueInDollars: 5, dateCreatedMilliseconds: 5, version: version,
                        deleted: true),
                ]))
        }
        for message in messages {
            #expect(BulkMessageEncoder.encode(message) == message.serializedEnvelopeGenerically(), "\(message)")
        }
        #expect(BulkMessageEncoder.encode(.pageDone(throughSeq: 1, counts: ChangeCounts())) == nil)
    }
}
