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
struct BlindPackSync {
    let store: Store
    let remote: BlindRemote
    let seal: BlindRecordSeal
    let peer: Peer
    let hostStore: StoreID
    let logger: Logger

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
        let damagedPhotos = try store.blindDamagedPhotos(peer: peer.nodeID)
        for record in remembered where named.contains(record.id) {
            // A push reads what each pack holds; one whose index is damaged is read again.
            guard BlindPackIndex.scan(record.contents, { _ in true }) else {
                logger.warning("the index of pack \(record.id) of blind peer \(peer.name) is damaged; reading it again")
                continue
            }
            catalog.known[record.id] = record
        }
        var findings: [String] = []
        let reader = BlindPackReader(remote: remote, seal: BlindPackSeal(keys: seal.keys))
        var learned: [BlindPackRecord] = []
        for pack in catalog.packs where catalog.known[pack.id] == nil {
            do {
                let index = BlindPackIndex(try reader.read(pack), seal: seal)
                let record = BlindPackRecord(
                    id: pack.id, plainSize: pack.plainSize, applied: false, contents: index.encoded())
                catalog.known[pack.id] = record
                learned.append(record)
            } catch let failure as BlindRecordSeal.Failure {
                findings.append("\(failure)")
                catalog.unreadable.insert(pack.id)
            }
        }
        try store.rememberBlindPacks(learned, peer: peer.nodeID)
        for (id, record) in catalog.known {
            // A pack naming a photo a pull found damaged is left out like an unreadable one: a
            // node that holds its records (and the photo) stores them again.
            if !damagedPhotos.isEmpty && BlindPackIndex.names(anyOf: damagedPhotos, record.contents) {
                logger.notice("pack \(id) of blind peer \(peer.name) names a photo found damaged there; leaving it out")
                catalog.known[id] = nil
                catalog.unreadable.insert(id)
            } else {
                _ = catalog.held.add(record.contents)
            }
        }
        return (catalog, findings)
    }
}
