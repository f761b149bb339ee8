import HPSyncModel
import HPSyncStore
import Logging

/// A blind store as one session of this node reaches it (Protocol.md 5.8): this node's store,
/// the connection to the blind store, the inventory key's seals, the blind peer as this store
/// lists it, the blind store's ID as its Hello said, and the session's logger. Made once per
/// session by `BlindPeerChannel`, after the handshake, and handed to each part of the session.
struct BlindPeerContext {
    let store: Store
    let remote: BlindRemote
    let seal: BlindRecordSeal
    let peer: Peer
    let hostStore: StoreID
    let logger: Logger
}

/// A part of a session with a blind peer (a check of its head, a source, a sink): reaches what
/// its context holds by name.
protocol BlindPeerPart {
    var context: BlindPeerContext { get }
}

extension BlindPeerPart {
    var store: Store { context.store }
    var remote: BlindRemote { context.remote }
    var seal: BlindRecordSeal { context.seal }
    var peer: Peer { context.peer }
    var hostStore: StoreID { context.hostStore }
    var logger: Logger { context.logger }
}
