import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The source side of a pull from a blind store whose inventory is in packs, played locally
/// (`BlindPeerChannel`, `Docs/blind-packs-design.md`): every pack the head names and this node
/// has not applied is read, opened and offered to the local sink as one manifest page, so the
/// sink applies its records by the ordinary rules (the merge, the clock guard, the mass-deletion
/// guard, the trash) exactly as from a trusted peer. Photos are read as the sink asks for them.
///
/// The entries are numbered on from the sink's checkpoint, a pack's entries in a row; a pack is
/// marked applied once the sink says every entry of it is durably applied and none was held
/// back. A pack that is not served or does not open is left out and reported; the rest lands.
final class BlindPackSource: BlindPeerPart {
    let context: BlindPeerContext
    private let reader: BlindPackReader
    private let out: BlindOutbox
    private let photos: BlindPhotoQueue
    /// The packs the head names that this node has not applied, in the head's order.
    private let pending: [BlindPackHead.Pack]
    private var next = 0
    /// The seq of the last entry offered (entries are numbered on from the sink's checkpoint).
    private var lastSeq: Int64 = 0
    /// The records of the page in flight, by key: what FetchRecords asks for.
    private var opened: [ItemKey: Item] = [:]
    /// Packs offered and not yet marked applied, each with the seq of its last entry.
    private var offered: [(lastSeq: Int64, record: BlindPackRecord)] = []
    private var sentFinal = false
    private var counts = ChangeCounts()
    /// What was not served or failed authentication (reported when the session ends).
    private(set) var findings: [String]

    init(context: BlindPeerContext, catalog: BlindPackCatalog, findings: [String], out: BlindOutbox) {
        self.context = context
        self.reader = BlindPackReader(remote: context.remote, seal: BlindPackSeal(keys: context.seal.keys))
        self.out = out
        self.findings = findings
        photos = BlindPhotoQueue(store: context.store, remote: context.remote, seal: context.seal, out: out)
        pending = catalog.packs.filter { catalog.known[$0.id]?.applied != true }
    }

    func handle(_ message: Message) throws {
        switch message {
        case .fetchImagesByDigest(let wanted):
            // Healing by digest: the image size comes from this store's own record.
            try queuePhotos(wanted, records: store.mergeBases(wanted.map(\.key)))
        case .endSession:
            photos.readAll()
            out.message(.done(counts))
        case .pullRequest(let checkpointStore, let since):
            lastSeq = checkpointStore == hostStore ? since : 0
            try queuePage()
        case .fetchRecords(let keys):
            let items = try keys.map { key in
                guard let item = opened[key] else {
                    throw SyncError.protocolViolation(
                        .violation("the sink asked for record \(key), which no page offered"))
                }
                return item
            }
            counts.records += items.count
            out.message(.records(items))
        case .fetchImages(let wanted):
            try queuePhotos(wanted, records: opened)
        case .pageDone(_, _, let durable, let firstHeld, _):
            photos.readAll()
            try markApplied(durableThrough: durable, firstHeld: firstHeld)
            if sentFinal { out.message(.done(counts)) } else { try queuePage() }
        default:
            throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "a sink's request"))
        }
    }

    /// The next pack that reads and opens, as a page; an empty final page when none is left.
    private func queuePage() throws {
        opened = [:]
        var entries: [ManifestEntry] = []
        while entries.isEmpty && next < pending.count {
            let pack = pending[next]
            next += 1
            let items: [Item]
            do {
                items = try reader.read(pack)
            } catch let failure as BlindRecordSeal.Failure {
                findings.append("\(failure)")
                continue
            }
            for item in items {
                lastSeq += 1
                opened[item.key] = item
                entries.append(
                    ManifestEntry(
                        key: item.key, version: item.version, deleted: item.deleted, seq: lastSeq,
                        mergeDigest: item.mergeDigest))
            }
            let index = BlindPackIndex(items, seal: seal)
            offered.append(
                (
                    lastSeq,
                    BlindPackRecord(id: pack.id, plainSize: pack.plainSize, applied: true, contents: index.encoded())
                ))
        }
        sentFinal = next == pending.count
        counts.entries += entries.count
        out.message(.manifestPage(ManifestPage(entries: entries, throughSeq: lastSeq, isFinal: sentFinal)))
    }

    /// Marks applied the packs whose every entry the sink durably applied, none held back.
    private func markApplied(durableThrough durable: Int64, firstHeld: Int64) throws {
        let done = offered.filter { $0.lastSeq <= durable && (firstHeld == 0 || $0.lastSeq < firstHeld) }
        guard !done.isEmpty else { return }
        offered.removeAll { $0.lastSeq <= durable }
        try store.rememberBlindPacks(done.map(\.record), peer: peer.nodeID)
    }

    /// Queues each wanted photo whose record in `records` names it; the rest are announced missing.
    private func queuePhotos(_ wanted: [ImageWanted], records: [ItemKey: Item]) throws {
        try photos.queue(wanted, records: records, counts: &counts) { [self] key, photo, error in
            findings.append("photo of item \(key): \(error)")
            // A push from a node that holds the photo uploads it again.
            try? store.markBlindPhotoDamaged(peer: peer.nodeID, photo.id)
        }
    }
}
