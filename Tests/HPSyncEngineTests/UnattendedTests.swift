import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Synchronization
import Testing

@testable import HPSyncEngine

/// Opens one in-memory session per call (each served by its own `ServerSession` thread), for
/// client code that connects more than once: the guarded pull and retries.
final class Dialer: @unchecked Sendable {
    private let server: TestNode
    private let client: TestNode
    private let wrap: @Sendable (Int, any ByteStream) -> any ByteStream
    private let sessions = Mutex<[ServedPipe]>([])
    /// How the server's sessions misbehave (a faulty announcement, small pages).
    private let testHooks: EngineTestHooks

    init(
        _ client: TestNode, to server: TestNode,
        wrap: @escaping @Sendable (Int, any ByteStream) -> any ByteStream = { $1 },
        testHooks: EngineTestHooks = EngineTestHooks()
    ) {
        self.client = client
        self.server = server
        self.wrap = wrap
        self.testHooks = testHooks
    }

    var count: Int { sessions.withLock { $0.count } }

    func connect() -> any MessageChannel {
        let testHooks = testHooks
        let served = ServedPipe(server.store, for: client.nodeID) { store in
            ServerSession(store: store, logger: quietLogger, testHooks: testHooks)
        }
        let attempt = sessions.withLock {
            $0.append(served)
            return $0.count
        }
        return FramedChannel(stream: wrap(attempt, served.clientEnd))
    }

    /// Closes every client end and waits for the server threads.
    func finish() {
        for served in sessions.withLock({ $0 }) { served.close() }
    }
}

/// A pull as `hp-sync pull` runs it (`SyncRun`): under `rule`, with the store's trash policy.
func runPull(
    _ sink: TestNode, from source: TestNode, over dialer: Dialer, peerName: String, guard rule: MassDeleteGuard?,
    configure: (inout SyncPlan) -> Void = { _ in }
) throws -> SyncReport {
    var options = SyncPlan()
    options.massDeleteGuard = rule
    configure(&options)
    return try SyncRun(
        store: sink.store, peer: SyncRun.Peer(name: peerName, nodeID: source.nodeID), connect: dialer.connect,
        plan: options, logger: quietLogger
    ).pull()
}

@Suite struct MassDeleteGuardTests {
    /// The guarded pull counts live items only up to `liveItemsNeeded`: the verdict on the capped
    /// count must be the verdict on the true count, for every store size and deletion count.
    @Test(arguments: [0.5, 0.25, 0.9])
    func aCountCappedAtWhatIsNeededGivesTheSameVerdict(_ fraction: Double) {
        var rule = MassDeleteGuard()
        rule.maxFraction = fraction
        for deleting in [0, 1, 10, 11, 12, 50, 99, 100, 101, 1_000] {
            let needed = rule.liveItemsNeeded(toJudge: deleting)
            for live in [0, 1, 10, 11, 20, 21, 22, 50, 99, 100, 101, 199, 200, 201, 202, 1_000, 5_000] {
                let capped = min(live, needed)
                #expect(
                    (rule.violation(deleting: deleting, liveItems: capped) == nil)
                        == (rule.violation(deleting: deleting, liveItems: live) == nil),
                    "deleting \(deleting) of \(live) (counted up to \(needed))")
            }
        }
    }

    @Test func theFractionRuleAppliesOnlyAboveTheFloor() {
        let rule = MassDeleteGuard()
        #expect(rule.violation(deleting: 1, liveItems: 1) == nil, "deleting 1 of 1 item is ordinary editing")
        #expect(rule.violation(deleting: 10, liveItems: 10) == nil, "at the floor")
        #expect(rule.violation(deleting: 11, liveItems: 11) != nil)
        #expect(rule.violation(deleting: 11, liveItems: 22) == nil, "exactly half is allowed")
        #expect(rule.violation(deleting: 12, liveItems: 22) != nil)
        #expect(rule.violation(deleting: 400, liveItems: 1000) == nil)
    }

    @Test func anAbsoluteCapAppliesWhateverTheSize() {
        let rule = MassDeleteGuard(maxDelete: 3)
        #expect(rule.violation(deleting: 3, liveItems: 1000) == nil)
        #expect(rule.violation(deleting: 4, liveItems: 1000)?.contains("--max-delete 3") == true)
        #expect(MassDeleteGuard(maxDelete: 0).violation(deleting: 1, liveItems: 1) != nil)
    }

    @Test func aRefusedPullAppliesNothing() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        var keys: [ItemKey] = []
        for i in 0..<14 { keys.append(try a.add("item \(i)").key) }
        try Sync.pull(b, from: a)
        try a.add("new one")
        _ = try a.store.delete(keys)
        let dialer = Dialer(b, to: a)
        defer { dialer.finish() }
        #expect(throws: MassDeleteRefused.self) {
            try runPull(b, from: a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        }
        #expect(dialer.count == 1, "refused after the preview, before a second session")
        #expect(try b.store.status().items == 14)
        #expect(try b.store.status().tombstones == 0)
        #expect(try b.store.item(keys[0])?.deleted == false, "not even the first page was applied")

        let allowed = try runPull(b, from: a, over: dialer, peerName: "a", guard: nil)
        #expect(allowed.deleted.count == 14)
        #expect(allowed.inserted.count == 1)
        #expect(try b.snapshot() == a.snapshot())
    }

    @Test func aNoOpPullIsOneSessionAndAnEmptyStoreSkipsThePreview() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<5 { try a.add("item \(i)") }
        let dialer = Dialer(b, to: a)
        defer { dialer.finish() }
        let first = try runPull(b, from: a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        #expect(first.inserted.count == 5)
        #expect(dialer.count == 1, "nothing here to delete: no preview")
        let again = try runPull(b, from: a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        #expect(again.manifestEntries == 0)
        #expect(again.dryRun == false)
        #expect(dialer.count == 2, "the preview found nothing, so no second session")
        try a.add("more")
        let third = try runPull(b, from: a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        #expect(third.inserted.count == 1)
        #expect(dialer.count == 3, "the server announced no tombstones, so the first session applied")
    }
}

@Suite struct RetryPolicyTests {
    @Test func delaysDoubleUpToTheCap() {
        let policy = RetryPolicy(retries: 10, initialDelay: .seconds(1), maxDelay: .seconds(10))
        #expect((1...6).map { policy.delay(beforeRetry: $0) } == [1, 2, 4, 8, 10, 10].map { Duration.seconds($0) })
    }

    @Test func onlyFailuresThatMayPassAreRetried() {
        #expect(RetryPolicy.isRetryable(TLSError.connectFailed(address: "x", reason: "refused")))
        #expect(RetryPolicy.isRetryable(TLSError.timedOut(operation: "read", after: .seconds(1), peer: "x")))
        #expect(RetryPolicy.isRetryable(ProtocolError.prematureEOF(expected: "Records")))
        #expect(RetryPolicy.isRetryable(SyncError.refusedByPeer(PeerErrorMessage(code: .busy, message: "busy"))))
        #expect(
            RetryPolicy.isRetryable(SyncError.refusedByPeer(PeerErrorMessage(code: .shuttingDown, message: "bye"))))
        #expect(
            !RetryPolicy.isRetryable(SyncError.refusedByPeer(PeerErrorMessage(code: .notAuthorized, message: "no"))))
        #expect(!RetryPolicy.isRetryable(TLSError.handshakeFailed(peer: "x", queue: "")))
        #expect(!RetryPolicy.isRetryable(ProtocolError.unknownFrameType(9)))
        #expect(!RetryPolicy.isRetryable(MassDeleteRefused(peer: "a", deleting: 20, liveItems: 20, reason: "")))
    }

    @Test func runStopsAtTheFirstSuccessOrAPermanentFailure() throws {
        var waits: [Duration] = []
        let policy = RetryPolicy(retries: 3)
        var calls = 0
        let value = try policy.run(logger: quietLogger, sleep: { waits.append($0) }) { attempt in
            calls += 1
            if attempt < 3 { throw TLSError.connectFailed(address: "x", reason: "refused") }
            return attempt
        }
        #expect(value == 3)
        #expect(waits == [.seconds(1), .seconds(2)])
        calls = 0
        #expect(throws: TLSError.self) {
            try policy.run(logger: quietLogger, sleep: { _ in }) { _ in
                calls += 1
                throw TLSError.handshakeFailed(peer: "x", queue: "")
            }
        }
        #expect(calls == 1)
        calls = 0
        #expect(throws: TLSError.self) {
            try RetryPolicy(retries: 2).run(logger: quietLogger, sleep: { _ in }) { _ in
                calls += 1
                throw TLSError.connectFailed(address: "x", reason: "refused")
            }
        }
        #expect(calls == 3)
    }

    @Test func aDroppedPullIsRetriedAndResumesFromTheCheckpoint() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<2_500 { try a.add("item \(i)") }
        let dialer = Dialer(b, to: a) { attempt, stream in
            attempt == 1 ? CuttingStream(stream, cutAfterReading: 300_000) : stream
        }
        defer { dialer.finish() }
        let report = try runPull(b, from: a, over: dialer, peerName: "a", guard: nil) { options in
            options.retryPolicy = RetryPolicy(retries: 2, initialDelay: .zero)
            options.commitEvery = 1_000  // every page, so the cut leaves a checkpoint to resume from
        }
        #expect(dialer.count == 2)
        #expect(report.manifestEntries <= 1_500, "the retry resumed from the checkpoint")
        #expect(try b.snapshot() == a.snapshot())
    }

    @Test func progressIsReportedPerPageAndImage() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<3 { try a.add("item \(i)", image: jpeg(UInt8(i))) }
        let updates = try progressUpdates(b, a, .pull)
        #expect(updates.count == 4, "three images, one page")
        #expect(updates.last?.items == 3)
        #expect(updates.last?.images == 3)
        #expect((updates.last?.bytes ?? 0) > 9000)
        #expect(updates.allSatisfy { $0.totalEntries == 3 }, "a version-2 server announces the total")
    }

    /// A push knows its own change feed; a pull learns the total from a version-2 server.
    @Test(arguments: [SyncDirection.pull, .push])
    func theTotalIsKnownSoProgressHasAnETA(_ direction: SyncDirection) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let source = direction == .pull ? a : b
        for i in 0..<1_500 { try source.add("item \(i)") }
        let updates = try progressUpdates(b, a, direction)
        #expect(updates.map(\.entries) == [1_000, 1_500], "one update per page")
        #expect(updates.allSatisfy { $0.totalEntries == 1_500 })
        #expect(updates.first?.secondsLeft(elapsed: 10) == 5, "500 more at 100 per second")
        #expect(updates.last?.secondsLeft(elapsed: 10) == 0)
    }

    /// The progress updates `client` reports while it pulls from or pushes to `server`.
    func progressUpdates(_ client: TestNode, _ server: TestNode, _ direction: SyncDirection) throws
        -> [SyncProgress]
    {
        let seen = Mutex<[SyncProgress]>([])
        var options = SyncPlan()
        options.progress = { progress in seen.withLock { $0.append(progress) } }
        _ = try Sync.session(client, server, .pipe) { channel in
            let syncClient = SyncClient(store: client.store, logger: quietLogger)
            return direction == .pull
                ? try syncClient.pull(
                    over: channel, serverNodeID: server.nodeID, peerName: server.name, plan: options)
                : try syncClient.push(
                    over: channel, serverNodeID: server.nodeID, peerName: server.name, plan: options)
        } wrap: {
            $0
        }
        return seen.withLock { $0 }
    }
}
