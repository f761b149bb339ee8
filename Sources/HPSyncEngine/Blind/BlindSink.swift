import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// The sink side of a push to a blind peer, played locally (`BlindPeerChannel`): for each page
/// the local source offers, it asks for the records the blind store lacks or holds older (by the
/// mirror), or holds at the same version in another merge state (Protocol.md 5.9: a join keeps
/// the greater version, so a state that took in an older one's fields keeps its version), seals them, uploads the photos it does not hold yet, stores the sealed records, and
/// acknowledges the page as durable. The first write opens a new head epoch; the end of a push
/// that wrote seals a finished head naming every entry the blind store now holds.
final class BlindSink: BlindPeerPart {
    let context: BlindPeerContext
    private let out: BlindOutbox
    private let dryRun: Bool
    private var epoch: Int64
    private var opened = false
    private var counts = ChangeCounts()
    /// The page in flight, and what it waits for.
    private var page: ManifestPage?
    private var held: [BlindObject] = []
    private var heldItems: [BlindID: Item] = [:]
    private var photosWanted = 0
    private var upload: BlindPhotoUpload?
    private var uploaded: Set<BlindID> = []
    private var firstHeld: Int64 = 0
    /// Records whose copy there a trusted node found broken: their photo is uploaded again too.
    private var damaged: Set<BlindID> = []
    /// The mirror's rows of the page in flight, as looked up when it was offered.
    private var pageMirror: [BlindID: Store.BlindMirrorRow] = [:]
    /// Puts sent and not yet answered, oldest first, each with the items behind its objects
    /// and, for a page's last put, the page's through_seq.
    private var pending: [(objects: [BlindObject], known: [BlindID: Known], pageThrough: Int64?)] = []
    /// The seq the mirror is listed through (nil until first read from the store).
    private var listedThrough: Int64?
    /// Every page through this seq is durable at the blind store (0: none yet).
    private var durableThrough: Int64 = 0
    /// Items behind puts the blind store did not number as sent: listed back once no put waits.
    private var unlisted: [BlindID: Known]?
    /// Entries stored and numbered as sent, not yet written to the mirror (a few pages at a time).
    private var unmirrored: (entries: [BlindEntry], known: [BlindID: Known], through: Int64) = ([], [:], 0)
    /// Whether the mirror held no entry when the push began (a first push): then no key this
    /// push offers can be mirrored but one it stored itself, which it does not offer again.
    private var startedEmpty: Bool?

    private typealias Known = (version: Version, key: ItemKey, deleted: Bool, mergeDigest: UInt64)

    init(context: BlindPeerContext, epoch: Int64, dryRun: Bool, out: BlindOutbox) {
        self.context = context
        self.epoch = epoch
        self.dryRun = dryRun
        self.out = out
    }

    func handle(_ message: Message) throws {
        switch message {
        case .manifestPage(let offered): try received(offered)
        case .records(let items): try received(items)
        case .imageHeader(let header): try begin(header)
        default:
            throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "a source's message"))
        }
    }

    /// One IMAGE_CHUNK of the photo being uploaded: sealed and sent on.
    func chunk(_ bytes: UnsafeRawBufferPointer) throws {
        guard upload != nil else {
            throw SyncError.protocolViolation(.violation("an image chunk the push did not ask for"))
        }
        try upload!.add(bytes, remote: remote)
        if upload!.isComplete { try endUpload() }
    }

    private func received(_ offered: ManifestPage) throws {
        page = offered
        firstHeld = 0
        counts.entries += offered.entries.count
        let ids = offered.entries.map { seal.id($0.key) }
        if startedEmpty == nil { startedEmpty = try store.blindMirrorCount(peer: peer.nodeID, after: 0) == 0 }
        let mirrored = startedEmpty == true ? [:] : try store.blindMirrorRows(peer: peer.nodeID, ids: ids)
        pageMirror = mirrored
        let wanted = zip(offered.entries, ids).filter { entry, id in
            guard let row = mirrored[id], !row.damaged else {
                if mirrored[id]?.damaged == true { damaged.insert(id) }
                return true
            }
            // An unknown digest (an entry another node stored, not opened here yet) is taken as
            // the same state: the pull a sync starts with opens it and learns its digest.
            return row.entry.version < entry.version
                || (row.entry.version == entry.version && row.mergeDigest.map { $0 != entry.mergeDigest } ?? false)
        }.map(\.0.key)
        counts.skipped += offered.entries.count - wanted.count
        if wanted.isEmpty { try finishPage() } else { out.message(.fetchRecords(wanted)) }
    }

    private func received(_ items: [Item]) throws {
        var photos: [BlindID: (wanted: ImageWanted, size: Int64)] = [:]
        for item in items {
            let object = seal.seal(item)
            held.append(object)
            heldItems[object.entry.id] = item
            if let image = item.image, let photo = object.entry.photo, !uploaded.contains(photo.id),
                try damaged.contains(object.entry.id) || startedEmpty == true
                    || !store.blindMirrorHasPhoto(peer: peer.nodeID, photo.id)
            {
                photos[photo.id] = (ImageWanted(key: item.key, digest: image.digest), image.size)
            }
        }
        counts.records += items.count
        photosWanted = photos.count
        if dryRun {
            counts.images += photos.count
            counts.imageBytes += photos.values.reduce(0) { $0 + $1.size }
            photosWanted = 0
        }
        if photosWanted == 0 { try storeHeld() } else { out.message(.fetchImages(photos.values.map(\.wanted))) }
    }

    private func begin(_ header: ImageHeaderMessage) throws {
        guard let image = heldItems[seal.id(header.key)]?.image else {
            throw SyncError.protocolViolation(.violation("an image the push did not ask for: \(header.key)"))
        }
        guard !header.missing, image.size == header.size, image.digest == header.digest else {
            // This node cannot read its own photo: the records naming it wait for a later push.
            let photoID = seal.photo(image).id
            let dropped = Set(held.filter { $0.entry.photo?.id == photoID }.map(\.entry.id))
            held.removeAll { dropped.contains($0.entry.id) }
            for entry in page?.entries ?? [] where dropped.contains(seal.id(entry.key)) {
                if firstHeld == 0 || entry.seq < firstHeld { firstHeld = entry.seq }
            }
            counts.skipped += dropped.count
            try photoDone()
            return
        }
        try openHead()
        upload = try BlindPhotoUpload(seal.photo(image), of: image, keys: seal.keys, remote: remote)
        if image.size == 0 { try endUpload() }
    }

    private func endUpload() throws {
        guard var current = upload else { return }
        try current.finish(remote: remote)
        upload = nil
        // No answer: the blind store makes it durable before its next BlindPutDone.
        uploaded.insert(current.id)
        counts.images += 1
        counts.imageBytes += current.size
        try photoDone()
    }

    private func photoDone() throws {
        photosWanted -= 1
        if photosWanted == 0 { try storeHeld() }
    }

    /// Stores the page's sealed records and acknowledges the page. The puts are answered while
    /// the next page is prepared: the page is acknowledged as durable once they are.
    private func storeHeld() throws {
        if !dryRun && !held.isEmpty {
            try openHead()
            var known: [BlindID: Known] = [:]
            for object in held {
                let item = heldItems[object.entry.id]
                if item?.deleted == true {
                    counts.deleted += 1
                } else if pageMirror[object.entry.id] == nil {
                    counts.inserted += 1
                } else {
                    counts.updated += 1
                }
                if let item { known[object.entry.id] = (item.version, item.key, item.deleted, item.mergeDigest) }
            }
            let batches = held.chunked(ProtocolLimits.maxBlindObjects).map(Array.init)
            for (index, batch) in batches.enumerated() {
                try remote.startPut(batch)
                let behind = batch.reduce(into: [BlindID: Known]()) { $0[$1.entry.id] = known[$1.entry.id] }
                pending.append((batch, behind, index == batches.count - 1 ? page?.throughSeq : nil))
            }
            try settle(keeping: batches.count)
        } else {
            try settle(keeping: 0)
            durableThrough = page?.throughSeq ?? durableThrough
        }
        held = []
        heldItems = [:]
        pageMirror = [:]
        try finishPage()
    }

    private func finishPage() throws {
        guard let current = page else { return }
        if current.isFinal && !dryRun {
            try settle(keeping: 0)
            durableThrough = current.throughSeq
        }
        page = nil
        let durable = dryRun ? 0 : durableThrough
        out.message(
            .pageDone(throughSeq: current.throughSeq, counts: counts, durableSeq: durable, firstHeldSeq: firstHeld))
        if current.isFinal {
            try sealHead()
            out.message(.done(counts))
        }
    }

    /// Reads the answers of all but the last `keeping` puts sent, mirroring what each stored.
    /// A put the blind store numbered as sent (nothing stale, its entries the next seqs in the
    /// order sent: 5.8.4) is mirrored as sealed here; any other is listed back from the store
    /// once no put waits for its answer.
    private func settle(keeping: Int) throws {
        while pending.count > keeping {
            let put = pending.removeFirst()
            let result = try remote.putDone()
            let since = try listedThrough ?? store.blindPeerState(peer.nodeID)?.throughSeq ?? 0
            if unlisted == nil, result.stale == 0, result.applied == Int64(put.objects.count),
                result.throughSeq == since + result.applied
            {
                for (index, object) in put.objects.enumerated() {
                    var entry = object.entry
                    entry.seq = since + 1 + Int64(index)
                    unmirrored.entries.append(entry)
                }
                unmirrored.known.merge(put.known) { _, new in new }
                unmirrored.through = result.throughSeq
                listedThrough = result.throughSeq
            } else {
                unlisted = (unlisted ?? [:]).merging(put.known) { _, new in new }
            }
            if let through = put.pageThrough { durableThrough = through }
        }
        if pending.isEmpty || unmirrored.entries.count >= Self.mirrorBatch {
            try writeMirror()
        }
        if pending.isEmpty, let known = unlisted {
            try catchUp(known: known)
            unlisted = nil
        }
    }

    /// Entries are mirrored in transactions of about this many: each one rewrites the leaves of
    /// the mirror's index of random IDs it touches, so fewer, larger ones write less.
    private static let mirrorBatch = 8192

    /// Writes the entries numbered as sent into the mirror, with the seq now listed through.
    private func writeMirror() throws {
        guard !unmirrored.entries.isEmpty else { return }
        try store.mirrorBlindEntries(
            peer: peer.nodeID, unmirrored.entries,
            state: .init(storeID: hostStore, throughSeq: unmirrored.through, epoch: epoch), known: unmirrored.known)
        unmirrored = ([], [:], 0)
    }

    /// Mirrors what the blind store listed since this node's last look.
    private func catchUp(known: [BlindID: Known] = [:]) throws {
        let state = try store.blindPeerState(peer.nodeID)
        let since = state?.throughSeq ?? 0
        var through = since
        try remote.list(after: since) { listed in
            through = max(since, listed.throughSeq)
            try store.mirrorBlindEntries(
                peer: peer.nodeID, listed.entries,
                state: .init(storeID: hostStore, throughSeq: through, epoch: epoch), known: known)
        }
        listedThrough = through
    }

    /// Before the first write: a new epoch with an open head, so readers know a push is under way.
    private func openHead() throws {
        guard !opened else { return }
        let next = BlindHead(epoch: epoch + 1, entries: nil)
        guard try remote.setHead(expected: epoch, next.sealed(keys: seal.keys, store: hostStore)) else {
            throw BlindError.concurrentWrite(peer: peer.name)
        }
        epoch += 1
        opened = true
        try store.setBlindEpoch(peer: peer.nodeID, epoch)
    }

    /// After a push that wrote: a finished head naming every entry the blind store holds.
    private func sealHead() throws {
        guard opened else { return }
        try catchUp()
        let mirrored = try store.blindMirrorDigest(peer: peer.nodeID)
        let next = BlindHead(epoch: epoch + 1, entries: (mirrored.count, mirrored.digest))
        guard try remote.setHead(expected: epoch, next.sealed(keys: seal.keys, store: hostStore)) else {
            throw BlindError.concurrentWrite(peer: peer.name)
        }
        epoch += 1
        try store.setBlindEpoch(peer: peer.nodeID, epoch)
    }
}
