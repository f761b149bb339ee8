import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// Seals up to 1,024 item versions as one pack, and opens packs again
/// (`Docs/blind-packs-design.md`).
///
/// The plaintext is one `Envelope` whose body is `Records` (Protocol.md 4.5): the records as a
/// version-5 source sends them, field states and tombstones included, so an outside client reads
/// a pack with the schema and the checks of any Records message. It is sealed as a stream of kind
/// pack under a fresh random ID; the head names the ID and the plaintext size, and the seal binds
/// both, so a pack altered, cut, swapped with another or offered under another ID does not open.
struct BlindPackSeal {
    let keys: BlindKeys

    /// One sealed pack: what the blind store keeps under `id`, and the size the head names.
    struct Sealed: Equatable {
        let id: BlindID
        let plainSize: Int64
        let bytes: [UInt8]
    }

    /// Seals `items` (1...1,024 of them, one version per key) under a fresh pack ID.
    func seal(_ items: [Item]) throws -> Sealed {
        precondition(
            !items.isEmpty && items.count <= ProtocolLimits.maxRecordsPerBatch, "a pack holds 1...1024 records")
        let plaintext = Message.records(items).serializedEnvelope()
        let id = BlindID(bytes: BlindKeys.newPackID())!
        var sealer = keys.sealer(.pack, id: id.bytes, plainSize: Int64(plaintext.count))
        let bytes = sealer.update(plaintext) + (try sealer.finish())
        return Sealed(id: id, plainSize: Int64(plaintext.count), bytes: bytes)
    }

    /// The item versions of the pack `id` of `plainSize` bytes, as the head names it; throws a
    /// `BlindRecordSeal.Failure` saying what is wrong.
    func open(_ sealed: [UInt8], id: BlindID, plainSize: Int64) throws -> [Item] {
        var opener = keys.opener(.pack, id: id.bytes, plainSize: plainSize)
        let plaintext: [UInt8]
        do {
            plaintext = try opener.update(sealed)
            try opener.finish()
        } catch {
            throw BlindRecordSeal.Failure("pack \(id): \(error)")
        }
        let items: [Item]
        do {
            guard case .records(let records) = try Message(decoding: plaintext) else {
                throw BlindRecordSeal.Failure("pack \(id) opened but holds another message than Records")
            }
            items = records
        } catch let failure as BlindRecordSeal.Failure {
            throw failure
        } catch {
            throw BlindRecordSeal.Failure("pack \(id) opened but holds no valid records: \(error)")
        }
        guard !items.isEmpty else { throw BlindRecordSeal.Failure("pack \(id) opened but holds no record") }
        guard Set(items.map(\.key)).count == items.count else {
            throw BlindRecordSeal.Failure("pack \(id) holds two versions of one item")
        }
        return items
    }
}
