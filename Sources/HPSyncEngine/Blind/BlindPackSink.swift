import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The sink side of a push to a blind store whose inventory is in packs, played locally
/// (`BlindPeerChannel`, `Docs/blind-packs-design.md`): of each page the local source offers it
/// asks for the records the blind store lacks, holds older, or holds at the same version in
/// another merge state (Protocol.md 5.9), uploads the photos no pack names yet, and fills packs
/// of up to 1,024 records, each sealed and uploaded when full.
///
/// The first upload opens a new epoch with an open head that still names the old packs, so
/// readers go on reading them. Every `packsPerHead` packs, and at the end, a new head names the
/// packs uploaded so far; only then are the pages whose records they hold acknowledged as
/// durable, so a push cut short resumes after the last head and re-sends nothing before it.
final class BlindPackSink: BlindPeerPart {
    let context: BlindPeerContext
    private let packSeal: BlindPackSeal
    private let out: BlindOutbox
    private let dryRun: Bool
    private var epoch: Int64
    private var opened = false
    /// The head names packs that could not be read: this push's head leaves them out, even if
    /// it uploads nothing.
    private let leavesOut: Bool
    private var counts = ChangeCounts()
    /// The newest version the blind store held of each key when the push began, and the photos
    /// it holds.
    private let held: BlindPackHeld
    private var heldPhotos: Set<BlindID>
    /// Photos a pull found damaged there, and those of them this push uploaded again.
    private let damagedPhotos: Set<BlindID>
    private var healedPhotos: Set<BlindID> = []
    /// The packs the last head named (those that read), then those this push added.
    private var named: [BlindPackHead.Pack]
    /// Packs uploaded and not yet named by a head.
    private var unnamed: [BlindPackRecord] = []
    /// Records waiting for the pack being filled, and where each key sits in it.
    private var filling: [Item] = []
    private var fillingIndex: [ItemKey: Int] = [:]
    private var packsUploaded = 0
    /// Pages whose records all went into packs, each with how many packs must be uploaded (and
    /// named) before it is durable.
    private var waiting: [(throughSeq: Int64, packs: Int)] = []
    private var durableThrough: Int64 = 0
    /// The page in flight, its records, and what it waits for.
    private var page: ManifestPage?
    private var pageItems: [Item] = []
    private var photosWanted = 0
    private var upload: BlindPhotoUpload?
    private var firstHeld: Int64 = 0
    private let packsPerHead: Int

    /// How many packs a push uploads between two heads: at most this many packs' worth of work
    /// is sent again after a cut (16,384 records), and a head is written about every 2 MiB.
    static let packsPerHead = 16

    init(
        context: BlindPeerContext, catalog: BlindPackCatalog, dryRun: Bool, out: BlindOutbox,
        packsPerHead: Int = packsPerHead
    ) {
        self.context = context
        self.packsPerHead = packsPerHead
        self.packSeal = BlindPackSeal(keys: context.seal.keys)
        self.epoch = catalog.epoch
        self.dryRun = dryRun
        self.out = out
        held = catalog.held
        heldPhotos = catalog.held.photos.subtracting(catalog.damagedPhotos)
        damagedPhotos = catalog.damagedPhotos
        named = catalog.packs.filter { !catalog.unreadable.contains($0.id) }
        leavesOut = !catalog.unreadable.isEmpty
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
        counts.entries += offered.entries.count
        let wanted = offered.entries.filter { !held.holds($0) }.map(\.key)
        counts.skipped += offered.entries.count - wanted.count
        if wanted.isEmpty { try finishPage() } else { out.message(.fetchRecords(wanted)) }
    }

    private func received(_ items: [Item]) throws {
        var photos: [BlindID: (wanted: ImageWanted, size: Int64)] = [:]
        for item in items {
            pageItems.append(item)
            if let image = item.image {
                let id = seal.photo(image).id
                if !heldPhotos.contains(id) {
                    photos[id] = (ImageWanted(key: item.key, digest: image.digest), image.size)
                }
            }
        }
        counts.records += items.count
        photosWanted = photos.count
        if dryRun {
            counts.images += photos.count
            counts.imageBytes += photos.values.reduce(0) { $0 + $1.size }
            photosWanted = 0
        }
        if photosWanted == 0 { try storePage() } else { out.message(.fetchImages(photos.values.map(\.wanted))) }
    }

    private func begin(_ header: ImageHeaderMessage) throws {
        guard let image = pageItems.first(where: { $0.key == header.key })?.image else {
            throw SyncError.protocolViolation(.violation("an image the push did not ask for: \(header.key)"))
        }
        guard !header.missing, image.size == header.size, image.digest == header.digest else {
            // This node cannot read its own photo: the records naming it wait for a later push.
            let dropped = pageItems.filter { $0.image?.digest == image.digest }.map(\.key)
            pageItems.removeAll { $0.image?.digest == image.digest }
            for entry in page?.entries ?? [] where dropped.contains(entry.key) {
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
        // No answer: the blind store makes it durable before its next BlindSetHead.
        heldPhotos.insert(current.id)
        if damagedPhotos.contains(current.id) { healedPhotos.insert(current.id) }
        counts.images += 1
        counts.imageBytes += current.size
        try photoDone()
    }

    private func photoDone() throws {
        photosWanted -= 1
        if photosWanted == 0 { try storePage() }
    }

    /// Puts the page's records into the pack being filled, uploading each pack that fills.
    private func storePage() throws {
        if !dryRun {
            for item in pageItems {
                if item.deleted {
                    counts.deleted += 1
                } else if !held.contains(item.key) {
                    counts.inserted += 1
                } else {
                    counts.updated += 1
                }
                // A key edited while the push runs comes again in a later page: a pack holds
                // one version of each item, the newer (and a later pack a newer one still).
                if let at = fillingIndex[item.key] {
                    if filling[at].version < item.version { filling[at] = item }
                } else {
                    fillingIndex[item.key] = filling.count
                    filling.append(item)
                }
                if filling.count == ProtocolLimits.maxRecordsPerBatch { try uploadFilling() }
            }
        }
        pageItems = []
        try finishPage()
    }

    private func finishPage() throws {
        guard let current = page else { return }
        page = nil
        if !dryRun {
            waiting.append((current.throughSeq, packsUploaded + (filling.isEmpty ? 0 : 1)))
            if current.isFinal {
                if !filling.isEmpty { try uploadFilling() }
                try nameHead(finished: true)
            } else if unnamed.count >= packsPerHead {
                try nameHead(finished: false)
            }
        }
        out.message(
            .pageDone(
                throughSeq: current.throughSeq, counts: counts, durableSeq: dryRun ? 0 : durableThrough,
                firstHeldSeq: firstHeld))
        if current.isFinal { out.message(.done(counts)) }
    }

    /// Seals the pack being filled and uploads it (in two or more when its plaintext would pass
    /// the largest message: a Records message must be readable as one).
    private func uploadFilling() throws {
        try openHead()
        var parts = [filling]
        while let part = parts.popLast() {
            let sealed = try packSeal.seal(part)
            if sealed.plainSize > Int64(ProtocolLimits.maxMessageBytes) && part.count > 1 {
                parts += [Array(part[..<(part.count / 2)]), Array(part[(part.count / 2)...])]
                continue
            }
            try remote.upload(sealed.id, kind: .pack, sealed: sealed.bytes)
            unnamed.append(
                BlindPackRecord(
                    id: sealed.id, plainSize: sealed.plainSize, applied: true,
                    contents: BlindPackIndex(part, seal: seal).encoded()))
        }
        packsUploaded += 1
        filling = []
        fillingIndex = [:]
    }

    /// Before the first upload: a new epoch with an open head naming the packs readers know.
    private func openHead() throws {
        guard !opened else { return }
        try setHead(BlindPackHead(epoch: epoch + 1, isOpen: true, packs: named))
        opened = true
    }

    /// A head naming every pack uploaded so far (open until the push ends); the pages whose
    /// records they hold are durable from then on.
    private func nameHead(finished: Bool) throws {
        guard opened || (finished && leavesOut) else {
            durableThrough = waiting.last?.throughSeq ?? durableThrough
            waiting = []
            return
        }
        let packs = named + unnamed.map { BlindPackHead.Pack(id: $0.id, plainSize: $0.plainSize) }
        guard packs.count <= BlindPackHead.maxPacks else {
            throw BlindError.tooManyPacks(peer: peer.name, count: packs.count)
        }
        try setHead(BlindPackHead(epoch: epoch + 1, isOpen: !finished, packs: packs))
        try store.rememberBlindPacks(unnamed, peer: peer.nodeID)
        // Once finished, no pack the head names holds a damaged photo: this push uploaded it
        // again, or left out the packs that name it.
        try store.clearBlindDamagedPhotos(peer: peer.nodeID, finished ? damagedPhotos : healedPhotos)
        healedPhotos = []
        named = packs
        unnamed = []
        while let first = waiting.first, first.packs <= packsUploaded {
            durableThrough = first.throughSeq
            waiting.removeFirst()
        }
    }

    private func setHead(_ next: BlindPackHead) throws {
        guard try remote.setHead(expected: epoch, next.sealed(keys: seal.keys, store: hostStore)) else {
            throw BlindError.concurrentWrite(peer: peer.name)
        }
        epoch = next.epoch
        try store.setBlindEpoch(peer: peer.nodeID, epoch)
    }
}
