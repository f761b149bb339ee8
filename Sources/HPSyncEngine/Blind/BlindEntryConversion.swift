import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Converts a blind store of version-4 entries to packs (Protocol.md 5.8.7): done by the first
/// push of a version-6 node behind a version-6 host. The entries are checked first exactly as a
/// pull checks them (`BlindMirrorSync`: the head opens, no rollback, the entries are the ones the
/// last push sealed into it), then each is opened and checked and sealed again into packs, and
/// one finished head of format 2 names them; the host drops the entries as it takes that head.
///
/// The local store is neither read nor changed: what the blind store held, from every node, is
/// carried over as it was, and the push that follows adds this node's own changes. An entry that
/// does not open is reported and left behind (the push then offers everything, so a node that
/// holds it stores it again). A conversion cut short leaves the entries and the head as they
/// were; the next push converts again.
struct BlindEntryConversion {
    let store: Store
    let remote: BlindRemote
    let seal: BlindRecordSeal
    let peer: Peer
    let hostStore: StoreID
    let logger: Logger

    /// What failed authentication or was not served (those entries are not carried over).
    func run() throws -> [String] {
        let checked = try BlindMirrorSync(
            store: store, remote: remote, seal: seal, peer: peer, hostStore: hostStore, logger: logger
        ).run()
        let packSeal = BlindPackSeal(keys: seal.keys)
        var findings: [String] = []
        var packs: [BlindPackRecord] = []
        var cursor: Int64 = 0
        var carried = 0
        while true {
            let rows = try store.blindMirrorRows(
                peer: peer.nodeID, after: cursor, limit: ProtocolLimits.maxBlindObjects)
            guard let last = rows.last else { break }
            cursor = last.entry.seq
            let objects = try remote.get(rows.map(\.entry.id))
            var items: [Item] = []
            for row in rows {
                guard let object = objects[row.entry.id], object.entry.version == row.entry.version,
                    object.entry.photo == row.entry.photo
                else {
                    findings.append("record \(row.entry.id) (seq \(row.entry.seq)) was listed but not served as listed")
                    continue
                }
                do {
                    items.append(try seal.open(object))
                } catch {
                    findings.append("\(error)")
                }
            }
            guard !items.isEmpty else { continue }
            let sealed = try packSeal.seal(items)
            try remote.upload(sealed.id, kind: .pack, sealed: sealed.bytes)
            packs.append(
                BlindPackRecord(
                    id: sealed.id, plainSize: sealed.plainSize, applied: false,
                    contents: BlindPackIndex(items, seal: seal).encoded()))
            carried += items.count
        }
        let head = BlindPackHead(
            epoch: checked.epoch + 1, isOpen: false,
            packs: packs.map { BlindPackHead.Pack(id: $0.id, plainSize: $0.plainSize) })
        guard try remote.setHead(expected: checked.epoch, head.sealed(keys: seal.keys, store: hostStore)) else {
            throw BlindError.concurrentWrite(peer: peer.name)
        }
        try store.noteBlindPackHead(
            peer: peer.nodeID, storeID: hostStore, epoch: head.epoch, naming: Set(packs.map(\.id)))
        try store.rememberBlindPacks(packs, peer: peer.nodeID)
        logger.notice(
            "converted blind peer \(peer.name) to packs: \(carried) records in \(packs.count) packs\(findings.isEmpty ? "" : ", \(findings.count) left behind")"
        )
        return findings
    }
}
