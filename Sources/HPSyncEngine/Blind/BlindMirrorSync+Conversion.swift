import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Converts a blind store of version-4 entries to packs (Protocol.md 5.8.7): done by the first
/// push of a version-6 node behind a version-6 host. The entries are checked first exactly as a
/// pull checks them (`run()`: the head opens, no rollback, the entries are the ones the last push
/// sealed into it), then each is opened and checked and sealed again into packs, and
/// one finished head of format 2 names them; the host drops the entries as it takes that head.
///
/// The local store is neither read nor changed: what the blind store held, from every node, is
/// carried over as it was, and the push that follows adds this node's own changes. An entry that
/// does not open is reported and left behind (the push then offers everything, so a node that
/// holds it stores it again). A conversion cut short leaves the entries and the head as they
/// were; the next push converts again.
extension BlindMirrorSync {
    /// Converts the blind store; returns what failed authentication or was not served (those
    /// entries are not carried over).
    func convertToPacks() throws -> [String] {
        let checked = try run()
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
            var items: [Item] = []
            for (_, result) in try remote.openListed(rows, seal: seal) {
                switch result {
                case .success(let item): items.append(item)
                case .failure(let failure): findings.append("\(failure)")
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
