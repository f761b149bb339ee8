import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Reads the head of a blind store whose inventory is in packs and checks it before anything is
/// applied or sent (`Docs/blind-packs-design.md`): it must open under the inventory key, it must
/// not be older than the newest this node saw there (rollback), and a blind store made again
/// must not pass for the one this node knew. A push also indexes every pack the head names that
/// this node does not know yet, so it stores only what the blind store lacks; a pack that cannot
/// be read is left out of the push's head, and a node that finds packs it knew left out stores
/// everything they could have held again (`BlindPeerChannel`).
struct BlindPackSync: BlindPeerPart {
    let context: BlindPeerContext

    /// The catalog of the blind store, and what failed authentication or was not served.
    func run(indexing: Bool) throws -> (catalog: BlindPackCatalog, findings: [String]) {
        let seen = try BlindMirrorSync.seenEpoch(store: store, peer: peer, hostStore: hostStore)
        let head: BlindPackHead?
        do {
            head = try BlindPackHead.open(try remote.head(), keys: seal.keys, store: hostStore)
        } catch let failure as BlindRecordSeal.Failure {
            throw BlindError.tampered(peer: peer.name, details: ["\(failure)"])
        }
        let epoch = head?.epoch ?? 0
        guard epoch >= seen else {
            throw BlindError.rolledBack(
                peer: peer.name, detail: "its head is at epoch \(epoch); this node saw epoch \(seen)")
        }
        let named = Set(head?.packs.map(\.id) ?? [])
        let remembered = try store.blindPacks(peer: peer.nodeID)
        try store.noteBlindPackHead(peer: peer.nodeID, storeID: hostStore, epoch: epoch, naming: named)
        var catalog = BlindPackCatalog(head: head, known: [:])
        catalog.dropped = remembered.filter { !named.contains($0.id) }.count
        guard indexing else {
            for record in remembered where named.contains(record.id) { catalog.known[record.id] = record }
            return (catalog, [])
        }
        catalog.damagedPhotos = try store.blindDamagedPhotos(peer: peer.nodeID)
        let damagedPhotos = catalog.damagedPhotos
        // Whether the pack goes into this push's view of what the blind store holds: a pack
        // naming a photo a pull found damaged is left out like an unreadable one, so that a node
        // holding its records (and the photo) stores them again.
        func take(_ record: BlindPackRecord) -> Bool {
            if !damagedPhotos.isEmpty && BlindPackIndex.names(anyOf: damagedPhotos, record.contents) {
                logger.notice(
                    "pack \(record.id) of blind peer \(peer.name) names a photo found damaged there; leaving it out")
                catalog.unreadable.insert(record.id)
                return false
            }
            return catalog.held.add(record.contents)
        }
        for record in remembered where named.contains(record.id) {
            if take(record) {
                catalog.known[record.id] = record
            } else if !catalog.unreadable.contains(record.id) {
                // Its index is damaged: the pack is read again below.
                logger.warning("the index of pack \(record.id) of blind peer \(peer.name) is damaged; reading it again")
            }
        }
        var findings: [String] = []
        let reader = BlindPackReader(remote: remote, seal: BlindPackSeal(keys: seal.keys))
        var learned: [BlindPackRecord] = []
        for pack in catalog.packs where catalog.known[pack.id] == nil && !catalog.unreadable.contains(pack.id) {
            do {
                let index = BlindPackIndex(try reader.read(pack), seal: seal)
                let record = BlindPackRecord(
                    id: pack.id, plainSize: pack.plainSize, applied: false, contents: index.encoded())
                learned.append(record)
                if take(record) { catalog.known[pack.id] = record }
            } catch let failure as BlindRecordSeal.Failure {
                findings.append("\(failure)")
                catalog.unreadable.insert(pack.id)
            }
        }
        try store.rememberBlindPacks(learned, peer: peer.nodeID)
        return (catalog, findings)
    }
}
