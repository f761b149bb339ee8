import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The order of the frames a sink accepts, the part of `SinkStateMachine` that reads the wire.
///
/// The machine tells it what it asked for (`requested...`) and feeds it every frame that
/// arrives (`received(_:)`); it answers with an event or throws when the frame is not one the
/// conversation allows at this point. Order, counts and identities are checked here; content
/// (digests, the merge rule) is the rest of the machine's and the store's job.
struct SinkFrameOrder: Sendable {
    enum State: Sendable {
        case awaitingPage
        case awaitingRecords(requested: Set<ItemKey>)
        case awaitingImageHeader(queue: ArraySlice<ImageWanted>)
        case receivingImage(header: ImageHeaderMessage, remaining: Int64, queue: ArraySlice<ImageWanted>)
        case pageInHand
        case finished
    }

    /// What the arrived frame means.
    enum Event: Sendable, Equatable {
        case page(ManifestPage)
        case records([Item])
        case imageStarted(ImageHeaderMessage)
        case imageChunk([UInt8])
        /// All bytes of the image announced by this header have arrived (or it is missing).
        case imageFinished(ImageHeaderMessage)
        case peerError(PeerErrorMessage)
    }

    private(set) var state: State = .awaitingPage
    /// The previous page's `through_seq`; nil before the first page, because the source may
    /// start from 0 rather than where it was asked (its store was re-created or restored).
    private var lastThroughSeq: Int64?
    /// The first page's `reconcile_horizon`: every page of a session carries the same one.
    private var horizon: VersionStamp??
    private var currentPage: ManifestPage?
    private var pageKeys: Set<ItemKey> = []

    /// Records that the sink sent FetchRecords for these keys.
    mutating func requestedRecords(_ keys: [ItemKey]) {
        precondition(isIdleWithPage, "FetchRecords only while a page is in hand")
        state = .awaitingRecords(requested: Set(keys))
    }

    /// Records that the sink sent FetchImages for these images, in this order.
    mutating func requestedImages(_ images: [ImageWanted]) {
        precondition(isIdleWithPage && !images.isEmpty, "FetchImages only while a page is in hand")
        state = .awaitingImageHeader(queue: images[...])
    }

    /// Records that the sink applied the page and sent PageDone; true when it was the last.
    mutating func pageApplied() -> Bool {
        precondition(isIdleWithPage, "PageDone only after the page's requests completed")
        let isFinal = currentPage?.isFinal ?? false
        currentPage = nil
        pageKeys = []
        state = isFinal ? .finished : .awaitingPage
        return isFinal
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    var isIdleWithPage: Bool {
        if case .pageInHand = state { return true }
        return false
    }

    /// Validates the next frame against the conversation so far.
    mutating func received(_ frame: IncomingFrame) throws(ProtocolError) -> Event {
        if case .message(.error(let error)) = frame { return .peerError(error) }
        switch (state, frame) {
        case (.awaitingPage, .message(.manifestPage(let page))):
            if let lastThroughSeq {
                guard page.throughSeq >= lastThroughSeq else {
                    throw .violation("ManifestPage.through_seq went backwards (\(page.throughSeq) < \(lastThroughSeq))")
                }
                if let first = page.entries.first, first.seq <= lastThroughSeq {
                    throw .violation("ManifestPage repeats seq \(first.seq), already covered through \(lastThroughSeq)")
                }
            }
            if let horizon, horizon != page.reconcileHorizon {
                throw .violation("ManifestPage.reconcile_horizon changed within the session")
            }
            horizon = .some(page.reconcileHorizon)
            let keys = Set(page.entries.map(\.key))
            guard keys.count == page.entries.count else { throw .violation("ManifestPage lists a key twice") }
            lastThroughSeq = page.throughSeq
            currentPage = page
            pageKeys = keys
            state = .pageInHand
            return .page(page)

        case (.awaitingRecords(let requested), .message(.records(let items))):
            // Sized by what arrived, which the decoder bounds (`maxRecordsPerBatch`).
            var seen = Set<ItemKey>(minimumCapacity: items.count)
            for item in items {
                guard requested.contains(item.key), seen.insert(item.key).inserted else {
                    throw .violation("Records holds \(item.key), which was not requested or came twice")
                }
            }
            state = .pageInHand
            return .records(items)

        case (.awaitingImageHeader(let queue), .message(.imageHeader(let header))):
            guard let wanted = queue.first, wanted.key == header.key, wanted.digest == header.digest else {
                throw .violation("ImageHeader for \(header.key) does not match the next image requested")
            }
            let rest = queue.dropFirst()
            if header.missing || header.size == 0 {
                state = rest.isEmpty ? .pageInHand : .awaitingImageHeader(queue: rest)
                return .imageFinished(header)
            }
            state = .receivingImage(header: header, remaining: header.size, queue: rest)
            return .imageStarted(header)

        case (.receivingImage(let header, let remaining, let queue), .imageChunk(let bytes)):
            guard Int64(bytes.count) <= remaining else {
                throw .violation(
                    "IMAGE_CHUNK overruns the \(header.size) bytes ImageHeader announced for \(header.key)")
            }
            let left = remaining - Int64(bytes.count)
            if left == 0 {
                state = queue.isEmpty ? .pageInHand : .awaitingImageHeader(queue: queue)
            } else {
                state = .receivingImage(header: header, remaining: left, queue: queue)
            }
            return .imageChunk(bytes)

        default:
            throw .unexpectedMessage(got: Self.name(of: frame), expected: expectation)
        }
    }

    /// True when the last chunk delivered completed its image.
    var imageComplete: Bool {
        if case .receivingImage = state { return false }
        return true
    }

    /// What the machine waits for, for error messages.
    var expectation: String {
        switch state {
        case .awaitingPage: return "ManifestPage"
        case .awaitingRecords: return "Records"
        case .awaitingImageHeader: return "ImageHeader"
        case .receivingImage: return "IMAGE_CHUNK"
        case .pageInHand: return "nothing (the sink is working on a page)"
        case .finished: return "nothing (the transfer is finished)"
        }
    }

    static func name(of frame: IncomingFrame) -> String {
        switch frame {
        case .message(let message): return message.name
        case .imageChunk: return "IMAGE_CHUNK"
        }
    }
}
