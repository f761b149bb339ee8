import HPSyncModel
import HPSyncStore

/// What a trusted node knows, for one session, of a blind store whose inventory is in packs: the
/// head it read there and what it remembers of each pack the head names.
struct BlindPackCatalog {
    /// The head read (nil: the blind store holds nothing yet).
    var head: BlindPackHead?
    /// What this node remembers of the packs the head names, by ID.
    var known: [BlindID: BlindPackRecord]
    /// For a push: what the known packs hold.
    var held = BlindPackHeld()
    /// For a push: the photos a pull of this node found damaged or missing there.
    var damagedPhotos: Set<BlindID> = []
    /// Packs the head names that could not be read (withheld or damaged): a push leaves them out
    /// of its head and offers everything again, so what they held is stored anew.
    var unreadable: Set<BlindID> = []
    /// How many packs this node knew that the head no longer names: another node's push found
    /// them unreadable and left them out, so what they held is stored again by whoever holds it.
    var dropped = 0

    var epoch: Int64 { head?.epoch ?? 0 }
    /// The packs the head names, in its order.
    var packs: [BlindPackHead.Pack] { head?.packs ?? [] }
}
