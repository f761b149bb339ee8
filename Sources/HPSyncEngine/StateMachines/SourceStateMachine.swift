import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The sending side of a transfer, as a state machine that does no I/O.
///
/// After each ManifestPage the source answers the sink's requests until the sink's PageDone;
/// requests may only name keys of the page in hand, and PageDone must echo its `through_seq`.
/// In version 1 PageDone means the page is durably applied; in version 2 it only asks for the
/// next page, and its `durable_seq` says how far the sink has committed (never backwards, and
/// all of it by the final page).
public struct SourceStateMachine: Sendable {
    enum State: Sendable {
        case readyToSendPage
        case pageSent(ManifestPage, keys: Set<ItemKey>)
        case finished
    }

    /// What the session must do next.
    public enum Action: Sendable, Equatable {
        case sendRecords([ItemKey])
        case sendImages([ImageWanted])
        /// The sink took the page; send the next one, starting after `after`. `durableThrough`
        /// is set when the sink has durably applied more pages than it had said before.
        case sendNextPage(after: Int64, durableThrough: Int64?, sinkCounts: ChangeCounts)
        /// The sink applied the final page (and, in version 2, everything before it).
        case finished(sinkCounts: ChangeCounts)
        case peerError(PeerErrorMessage)
    }

    private(set) var state: State = .readyToSendPage
    private let version: UInt32
    private var durable: Int64 = -1
    /// Version 3: the first entry of the session the sink did not apply, once it says so. A
    /// checkpoint of the sink's progress stays below it.
    public private(set) var firstHeldSeq: Int64?
    /// Version 3: the entries of the last acknowledged page the sink refused.
    public private(set) var refusals: [PageRefusal] = []

    public init(version: UInt32 = 1) {
        self.version = version
    }

    /// Records that the session sent this page.
    public mutating func sent(_ page: ManifestPage) {
        guard case .readyToSendPage = state else { preconditionFailure("a page is already outstanding") }
        state = .pageSent(page, keys: Set(page.entries.map(\.key)))
    }

    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Validates a message from the sink and says what to do.
    public mutating func received(_ message: Message) throws(ProtocolError) -> Action {
        if case .error(let error) = message { return .peerError(error) }
        guard case .pageSent(let page, let keys) = state else {
            throw .unexpectedMessage(got: message.name, expected: "nothing (no page outstanding)")
        }
        switch message {
        case .fetchRecords(let wanted):
            guard wanted.allSatisfy(keys.contains) else {
                throw .violation("FetchRecords names a key that is not on the current ManifestPage")
            }
            return .sendRecords(wanted)
        case .fetchImages(let wanted):
            guard wanted.allSatisfy({ keys.contains($0.key) }) else {
                throw .violation("FetchImages names a key that is not on the current ManifestPage")
            }
            return .sendImages(wanted)
        case .pageDone(let through, let counts, let durableSeq, let firstHeld, let refused):
            guard through == page.throughSeq else {
                throw .violation("PageDone.through_seq \(through) does not echo the page's \(page.throughSeq)")
            }
            guard refused.allSatisfy({ keys.contains($0.key) }) else {
                throw .violation("PageDone.refusals names a key that is not on the current ManifestPage")
            }
            if version >= ProtocolLimits.heldEntriesVersion {
                if firstHeld > 0 { firstHeldSeq = min(firstHeldSeq ?? firstHeld, firstHeld) }
                refusals = refused
            }
            let nowDurable = version >= 2 ? durableSeq : through
            guard version < 2 || durableSeq == 0 || durableSeq >= durable else {
                throw .violation("PageDone.durable_seq went backwards (\(durableSeq) after \(durable))")
            }
            if page.isFinal {
                guard nowDurable == through else {
                    throw .violation(
                        "the final PageDone must have everything durable (durable_seq \(nowDurable) < \(through))")
                }
                state = .finished
                return .finished(sinkCounts: counts)
            }
            state = .readyToSendPage
            let advanced = nowDurable > durable && nowDurable > 0
            if advanced { durable = nowDurable }
            return .sendNextPage(after: through, durableThrough: advanced ? nowDurable : nil, sinkCounts: counts)
        default:
            throw .unexpectedMessage(got: message.name, expected: "FetchRecords, FetchImages or PageDone")
        }
    }
}
