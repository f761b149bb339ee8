import HPSyncModel
import HPSyncStore

/// What a trusted node knows, for one session, of a blind store whose inventory is in packs: the
/// head it read there and what it remembers of each pack the head names (`BlindPackIndex`).
struct BlindPackCatalog {
    /// The head read (nil: the blind store holds nothing yet).
    var head: BlindPackHead?
    /// What this node remembers of the packs the head names, by ID.
    var known: [BlindID: Known]
    /// Packs the head names that could not be read (withheld or damaged): a push leaves them out
    /// of its head and offers everything again, so what they held is stored anew.
    var unreadable: Set<BlindID> = []
    /// How many packs this node knew that the head no longer names: another node's push found
    /// them unreadable and left them out, so what they held is stored again by whoever holds it.
    var dropped = 0

    struct Known {
        var record: BlindPackRecord
        var index: BlindPackIndex
    }

    var epoch: Int64 { head?.epoch ?? 0 }
    /// The packs the head names, in its order.
    var packs: [BlindPackHead.Pack] { head?.packs ?? [] }

    /// The newest version the blind store holds of each key, with its merge digest: a push
    /// stores a version only when it is newer, or the same one in another merge state.
    func heldVersions() -> [ItemKey: (version: Version, mergeDigest: UInt64)] {
        var held: [ItemKey: (version: Version, mergeDigest: UInt64)] = [:]
        for pack in known.values {
            for entry in pack.index.entries where held[entry.key].map({ $0.version < entry.version }) ?? true {
                held[entry.key] = (entry.version, entry.mergeDigest)
            }
        }
        return held
    }

    /// The sealed photos the records of the known packs name: the blind store holds them (a push
    /// uploads a pack's photos before the pack).
    func heldPhotos() -> Set<BlindID> {
        Set(known.values.flatMap { $0.index.entries.compactMap(\.photo) })
    }
}
