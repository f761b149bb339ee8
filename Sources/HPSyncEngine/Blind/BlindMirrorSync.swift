import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Brings this node's mirror of a blind peer up to date and checks it (Protocol.md 5.8): the
/// head must open under the inventory key and must not be older than the newest this node saw
/// there (rollback), and when the last push finished, the mirror must hold exactly the entries
/// that push sealed into the head (withheld, added or replaced entries). Nothing is applied or
/// sent before this passes.
struct BlindMirrorSync: BlindPeerPart {
    let context: BlindPeerContext

    /// What the check found: the head's epoch (0: none) and whether the last push finished.
    struct Outcome {
        var epoch: Int64
        var head: BlindHead?
    }

    func run() throws -> Outcome {
        let seenEpoch = try Self.seenEpoch(store: store, peer: peer, hostStore: hostStore)
        var since = try store.blindPeerState(peer.nodeID).flatMap { $0.storeID == hostStore ? $0.throughSeq : nil } ?? 0
        for _ in 0..<4 {
            let served = try remote.head()
            let head: BlindHead?
            do {
                head = try BlindHead.open(served, keys: seal.keys, store: hostStore)
            } catch {
                throw BlindError.tampered(peer: peer.name, details: ["\(error)"])
            }
            let epoch = head?.epoch ?? 0
            guard epoch >= seenEpoch else {
                throw BlindError.rolledBack(
                    peer: peer.name, detail: "its head is at epoch \(epoch); this node saw epoch \(seenEpoch)")
            }
            var through = since
            try remote.list(after: since) { page in
                through = page.throughSeq
                try store.mirrorBlindEntries(
                    peer: peer.nodeID, page.entries,
                    state: .init(storeID: hostStore, throughSeq: max(since, page.throughSeq), epoch: seenEpoch))
            }
            guard through >= since else {
                throw BlindError.rolledBack(
                    peer: peer.name, detail: "it lists changes through seq \(through); this node saw seq \(since)")
            }
            since = through
            // A writer that moved the head while we listed wrote more: list that too.
            guard try remote.head() == served else { continue }
            try check(head)
            try store.setBlindEpoch(peer: peer.nodeID, epoch)
            return Outcome(epoch: epoch, head: head)
        }
        throw BlindError.concurrentWrite(peer: peer.name)
    }

    /// The highest head epoch this node saw at the blind store `hostStore` (0: none); throws
    /// when the blind peer now answers with another store than one it saw a head in (made
    /// again: everything it held is gone, which a node must not take for an empty store).
    static func seenEpoch(store: Store, peer: Peer, hostStore: StoreID) throws -> Int64 {
        guard let state = try store.blindPeerState(peer.nodeID) else { return 0 }
        if state.storeID == hostStore { return state.epoch }
        guard state.epoch == 0 else {
            throw BlindError.rolledBack(
                peer: peer.name,
                detail:
                    "its store was made again (store ID \(hostStore), this node saw \(state.storeID) at epoch \(state.epoch))"
            )
        }
        return 0
    }

    private func check(_ head: BlindHead?) throws {
        let mirrored = try store.blindMirrorDigest(peer: peer.nodeID)
        guard let head else {
            guard mirrored.count == 0 else {
                throw BlindError.headMismatch(
                    peer: peer.name,
                    detail: "it lists \(mirrored.count) entries but no trusted node sealed a head there")
            }
            return
        }
        guard let sealed = head.entries else {
            logger.notice(
                "the last push to blind peer \(peer.name) did not finish; its entries are checked when the next one does"
            )
            return
        }
        guard sealed.count == mirrored.count, sealed.digest == mirrored.digest else {
            throw BlindError.headMismatch(
                peer: peer.name,
                detail:
                    "the head sealed at epoch \(head.epoch) names \(sealed.count) entries, it lists \(mirrored.count)\(sealed.count == mirrored.count ? " with other versions" : "")"
            )
        }
    }
}
