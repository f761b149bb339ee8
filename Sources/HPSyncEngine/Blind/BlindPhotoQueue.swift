import Foundation
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The photos a locally played source (`BlindSource`, `BlindPackSource`) has asked the blind
/// store for: each is asked at once and queued in the outbox as a promise; when the sink's turn
/// comes, it is read, opened and checked (`BlindPhotoFetch`) before a byte goes out. The blind
/// store answers in the order asked, so every answer still on the way is read before any other
/// request is sent (`readAll`).
final class BlindPhotoQueue {
    private let store: Store
    private let remote: BlindRemote
    private let seal: BlindRecordSeal
    private let out: BlindOutbox
    /// Photos asked of the blind store whose answers are not read yet, oldest first.
    private var asked: [Ticket] = []
    /// Opened photos waiting in memory for the sink: a page's worth at M (2,000 photos of
    /// ~200 KB over 100 pages), so a restore's memory stays near a plain pull's.
    private let budget = OpenedPhoto.Budget(bytes: 8 << 20)

    /// A photo asked for: its answer, once read.
    private final class Ticket {
        let fetch: BlindPhotoFetch
        var opened: Result<OpenedPhoto, any Error>?

        init(_ fetch: BlindPhotoFetch) { self.fetch = fetch }

        /// The answer, handed over once: the ticket lets go of the photo (and of the memory it
        /// holds) as the sink takes it.
        func take() throws -> OpenedPhoto {
            defer { opened = nil }
            return try opened!.get()
        }
    }

    init(store: Store, remote: BlindRemote, seal: BlindRecordSeal, out: BlindOutbox) {
        self.store = store
        self.remote = remote
        self.seal = seal
        self.out = out
    }

    /// Queues each wanted photo whose record in `records` names it (counted in `counts`); the
    /// rest are announced missing. `failed` hears of a photo that did not open or check out.
    func queue(
        _ wanted: [ImageWanted], records: [ItemKey: Item], counts: inout ChangeCounts,
        failed: @escaping (ItemKey, BlindPhotoRef, any Error) -> Void
    ) throws {
        for image in wanted {
            guard let ref = records[image.key]?.image, ref.digest == image.digest else {
                out.missing(image.key, image.digest)
                continue
            }
            let photo = seal.photo(ref)
            try remote.askPhoto(photo.id)
            let ticket = Ticket(
                BlindPhotoFetch(store: store, remote: remote, keys: seal.keys, photo: photo, image: ref, budget: budget)
            )
            asked.append(ticket)
            let key = image.key
            out.photo(key: key, image: ref) { [self] in
                while ticket.opened == nil { readNext() }
                return try ticket.take()
            } failed: { error in
                failed(key, photo, error)
            }
            counts.images += 1
            counts.imageBytes += ref.size
        }
    }

    /// Reads every photo answer still on the way, so the next request's answer is next.
    func readAll() {
        while !asked.isEmpty { readNext() }
    }

    /// Reads the answer to the oldest photo asked for.
    private func readNext() {
        let ticket = asked.removeFirst()
        ticket.opened = Result { try ticket.fetch.receive() }
    }
}
