import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// Reads packs the head of a blind store names and opens them (`Docs/blind-packs-design.md`):
/// each pack is asked for, read whole (at most a few MiB) and opened under the ID and plaintext
/// size the head names, so a pack withheld, cut, altered or swapped with another is refused.
struct BlindPackReader {
    let remote: BlindRemote
    let seal: BlindPackSeal

    /// The records of `pack`; throws a `BlindRecordSeal.Failure` saying what is wrong. Every
    /// answer asked for before must have been read.
    func read(_ pack: BlindPackHead.Pack) throws -> [Item] {
        try remote.askPhoto(pack.id, kind: .pack)
        let expected = BlindKeys.sealedSize(of: .pack, plainSize: pack.plainSize)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(expected))
        let served = try remote.photo(pack.id, kind: .pack, expectedSize: expected) { bytes += $0 }
        guard served else {
            throw BlindRecordSeal.Failure(
                "pack \(pack.id), which the head names, is not served at its size (withheld, lost or replaced)")
        }
        return try seal.open(bytes, id: pack.id, plainSize: pack.plainSize)
    }
}
