import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Testing

@testable import HPSyncEngine

/// Every order and identity rule the state machines enforce on a peer, without I/O.
@Suite struct StateMachineViolationTests {
    static let origin = NodeID(certificateDER: [7])

    static func entry(_ key: ItemKey, seq: Int64) -> ManifestEntry {
        ManifestEntry(
            key: key, version: Version(stamp: VersionStamp(milliseconds: 1), origin: origin), deleted: false, seq: seq)
    }

    static func isViolation(_ error: ProtocolError) -> Bool {
        if case .violation = error { return true }
        return false
    }

    // MARK: - Source (the server in a pull): what an authorized client may ask for.

    static func sourceWithPage(_ keys: [ItemKey], through: Int64 = 5, final: Bool = false) -> SourceStateMachine {
        var machine = SourceStateMachine()
        let entries = keys.enumerated().map { entry($0.element, seq: Int64($0.offset + 1)) }
        machine.sent(ManifestPage(entries: entries, throughSeq: through, isFinal: final))
        return machine
    }

    @Test func sourceRefusesRecordsForKeysNotOnThePage() {
        var machine = Self.sourceWithPage([ItemKey.random()])
        #expect(throws: ProtocolError.self) { try machine.received(.fetchRecords([ItemKey.random()])) }
    }

    @Test func sourceRefusesImagesForKeysNotOnThePage() {
        var machine = Self.sourceWithPage([ItemKey.random()])
        let wanted = ImageWanted(key: ItemKey.random(), digest: SHA256.hash([1]))
        #expect(throws: ProtocolError.self) { try machine.received(.fetchImages([wanted])) }
    }

    @Test func sourceRefusesAPageDoneForAnotherPage() {
        var machine = Self.sourceWithPage([ItemKey.random()], through: 5)
        #expect(throws: ProtocolError.violation("PageDone.through_seq 4 does not echo the page's 5")) {
            try machine.received(.pageDone(throughSeq: 4, counts: ChangeCounts()))
        }
    }

    @Test func sourceRefusesMessagesASinkNeverSends() {
        var machine = Self.sourceWithPage([ItemKey.random()])
        #expect(
            throws: ProtocolError.unexpectedMessage(got: "Records", expected: "FetchRecords, FetchImages or PageDone")
        ) {
            try machine.received(.records([]))
        }
        var idle = SourceStateMachine()
        #expect(throws: ProtocolError.self) { try idle.received(.fetchRecords([])) }
    }

    @Test func sourceAcceptsTheLegalSequence() throws {
        let key = ItemKey.random()
        var machine = Self.sourceWithPage([key], through: 5, final: true)
        #expect(try machine.received(.fetchRecords([key])) == .sendRecords([key]))
        #expect(
            try machine.received(.pageDone(throughSeq: 5, counts: ChangeCounts())) == .finished(sinkCounts: .init()))
        #expect(machine.isFinished)
    }

    // MARK: - Sink (the client in a pull): what a source may send.

    @Test func sinkRefusesThroughSeqGoingBackwards() throws {
        var machine = SinkStateMachine()
        _ = try machine.received(.message(.manifestPage(ManifestPage(entries: [], throughSeq: 5, isFinal: false))))
        _ = machine.frames.pageApplied()
        #expect(throws: ProtocolError.violation("ManifestPage.through_seq went backwards (3 < 5)")) {
            try machine.received(.message(.manifestPage(ManifestPage(entries: [], throughSeq: 3, isFinal: true))))
        }
    }

    @Test func sinkRefusesAKeyListedTwiceOnAPage() {
        var machine = SinkStateMachine()
        let key = ItemKey.random()
        let page = ManifestPage(
            entries: [Self.entry(key, seq: 1), Self.entry(key, seq: 2)], throughSeq: 2, isFinal: true)
        #expect(throws: ProtocolError.violation("ManifestPage lists a key twice")) {
            try machine.received(.message(.manifestPage(page)))
        }
    }

    @Test func sinkRefusesAnImageHeaderForAnotherImage() throws {
        var machine = SinkStateMachine()
        let key = ItemKey.random()
        _ = try machine.received(
            .message(.manifestPage(ManifestPage(entries: [Self.entry(key, seq: 1)], throughSeq: 1, isFinal: true))))
        machine.requestedImages([ImageWanted(key: key, digest: SHA256.hash([1]))])
        let other = ImageHeaderMessage(key: key, digest: SHA256.hash([2]), size: 10)
        #expect(throws: ProtocolError.self) { try machine.received(.message(.imageHeader(other))) }
    }

    @Test func sinkRefusesAChunkWhereAMessageBelongs() {
        var machine = SinkStateMachine()
        #expect(throws: ProtocolError.unexpectedMessage(got: "IMAGE_CHUNK", expected: "ManifestPage")) {
            try machine.received(.imageChunk([1, 2, 3]))
        }
    }

    // MARK: - Handshake

    @Test func aClientOfAnotherProtocolVersionIsToldToUpgrade() {
        let client = NodeID(certificateDER: [1])
        var hello = HelloMessage(nodeID: client, storeID: .random(), intent: .pull, software: "future")
        hello.minVersion = ProtocolLimits.maxVersion + 1
        hello.maxVersion = ProtocolLimits.maxVersion + 2
        let decision = ServerHandshake.decide(
            hello: hello, certificateNodeID: client, peer: Peer(name: "p", nodeID: client),
            serverNodeID: NodeID(certificateDER: [2]), serverStoreID: .random(), software: "s")
        guard case .refuse(let error) = decision else {
            Issue.record("accepted a client that speaks no common version")
            return
        }
        #expect(error.code == .incompatibleVersion)
        #expect(error.message.contains("upgrade the older side"))
    }
}
