import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// The source side of a pull from a blind peer, played locally (`BlindPeerChannel`): it answers
/// the local sink's PullRequest, FetchRecords and FetchImages from the mirror and from objects it
/// fetches from the blind store and opens, so the sink applies them by the ordinary rules (the
/// merge, the clock guard, the mass-deletion guard, the trash) exactly as from a trusted peer.
/// A record or photo whose seal is broken is left out and reported; the rest of the pull lands.
final class BlindSource: BlindPeerPart {
    let context: BlindPeerContext
    private let out: BlindOutbox
    /// Records opened for the page in flight, by key: what FetchRecords will ask for.
    private var opened: [ItemKey: Item] = [:]
    private var cursor: Int64 = 0
    private var sentFinal = false
    private var first = true
    private var counts = ChangeCounts()
    /// What failed authentication (reported when the session ends).
    private(set) var findings: [String] = []
    private let photos: BlindPhotoQueue

    init(context: BlindPeerContext, out: BlindOutbox) throws {
        self.context = context
        self.out = out
        photos = BlindPhotoQueue(store: context.store, remote: context.remote, seal: context.seal, out: out)
        // Damage found before stays reported until a push stores a good copy.
        findings = try context.store.blindDamagedRows(peer: context.peer.nodeID).map {
            "record \($0.entry.id) (seq \($0.entry.seq)) failed authentication before and was not stored again since"
        }
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
            cursor = checkpointStore == hostStore ? since : 0
            try queuePage()
        case .fetchRecords(let keys):
            var items: [Item] = []
            for key in keys {
                guard let item = try opened[key] ?? fetchAndOpen(key) else {
                    throw SyncError.protocolViolation(
                        .violation("the sink asked for record \(key), which the blind peer could not supply"))
                }
                items.append(item)
            }
            counts.records += items.count
            out.message(.records(items))
        case .fetchImages(let wanted):
            try queuePhotos(wanted, records: opened)
        case .pageDone:
            photos.readAll()
            if sentFinal { out.message(.done(counts)) } else { try queuePage() }
        default:
            throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "a sink's request"))
        }
    }

    /// The next page of the mirror after `cursor`, with every record the sink may want opened.
    private func queuePage() throws {
        let size = ProtocolLimits.manifestPageSize
        let rows = try store.blindMirrorRows(peer: peer.nodeID, after: cursor, limit: size)
        let last = try store.blindPeerState(peer.nodeID)?.throughSeq ?? cursor
        let isFinal = rows.count < size
        opened = [:]
        let local = try store.mergeBases(rows.compactMap(\.key))
        // Opened: versions this node never sealed or opened, those newer than its own, and those
        // whose merge state differs from its own (Protocol.md 5.9: the sink fetches them).
        let needed = rows.filter { row in
            guard let key = row.key, row.deleted != nil, let digest = row.mergeDigest, let mine = local[key] else {
                return true
            }
            return mine.version < row.entry.version || mine.mergeDigest != digest
        }
        var learned: [(entry: BlindEntry, key: ItemKey, deleted: Bool, mergeDigest: UInt64)] = []
        var damaged: [BlindEntry] = []
        for chunk in needed.chunked(ProtocolLimits.maxBlindObjects) {
            for (row, result) in try remote.openListed(Array(chunk), seal: seal) {
                switch result {
                case .success(let item):
                    opened[item.key] = item
                    learned.append((row.entry, item.key, item.deleted, item.mergeDigest))
                case .failure(let failure):
                    findings.append("\(failure)")
                    damaged.append(row.entry)
                }
            }
        }
        try store.noteBlindItems(peer: peer.nodeID, learned)
        try store.markBlindDamaged(peer: peer.nodeID, damaged)
        let bad = Set(damaged.map(\.id))
        let learnedKeys = Dictionary(
            learned.map { ($0.entry.id, ($0.key, $0.deleted, $0.mergeDigest)) }, uniquingKeysWith: { a, _ in a })
        var entries: [ManifestEntry] = []
        for row in rows where !bad.contains(row.entry.id) {
            guard
                let (key, deleted, digest) = learnedKeys[row.entry.id]
                    ?? row.key.flatMap({ key in row.deleted.map { (key, $0, row.mergeDigest ?? 0) } })
            else { continue }
            entries.append(
                ManifestEntry(
                    key: key, version: row.entry.version, deleted: deleted, seq: row.entry.seq, mergeDigest: digest))
        }
        let through = isFinal ? max(last, rows.last?.entry.seq ?? cursor, cursor) : rows.last!.entry.seq
        var page = ManifestPage(entries: entries, throughSeq: through, isFinal: isFinal)
        if first {
            page.entriesAhead = Int64(try store.blindMirrorCount(peer: peer.nodeID, after: cursor))
            first = false
        }
        counts.entries += entries.count
        cursor = through
        sentFinal = isFinal
        out.message(.manifestPage(page))
    }

    /// Fetches and opens the current version of `key`'s record (a sink asking for one this side
    /// did not expect it to want).
    private func fetchAndOpen(_ key: ItemKey) throws -> Item? {
        photos.readAll()
        let id = seal.id(key)
        guard let object = try remote.get([id])[id] else { return nil }
        do {
            return try seal.open(object)
        } catch {
            findings.append("\(error)")
            return nil
        }
    }

    /// Queues each wanted photo whose record in `records` names it; the rest are announced missing.
    private func queuePhotos(_ wanted: [ImageWanted], records: [ItemKey: Item]) throws {
        try photos.queue(wanted, records: records, counts: &counts) { [self] key, photo, error in
            findings.append("photo of item \(key): \(error)")
            if let version = opened[key]?.version {
                try? store.markBlindDamaged(
                    peer: peer.nodeID, [BlindEntry(id: seal.id(key), version: version, photo: photo)])
            }
        }
    }
}
