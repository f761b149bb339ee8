import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Tombstone GC end to end over in-memory sessions: a stale peer gets a full reconciliation,
/// and nothing a collected tombstone deleted comes back, by pull or by push.
@Suite struct GCReconciliationTests {
    static func isPage(_ frame: IncomingFrame) -> Bool {
        if case .message(.manifestPage) = frame { return true }
        return false
    }

    static let day: UInt64 = 86_400_000

    /// A server `a` and a client `b` on one clock; `b` pulled `count` items, then `a` deleted
    /// `deleted` of them, the clock moved 200 days and `a` collected every tombstone.
    struct Collected {
        let clock = TestClock()
        let a: TestNode
        let b: TestNode
        let items: [ItemKey]
        let gone: [ItemKey]
        let horizon: GCHorizon

        init(count: Int = 5, deleted: Int = 1, beforeCollecting: (TestNode, [ItemKey]) throws -> Void = { _, _ in })
            throws
        {
            a = try TestNode("a", clock: clock)
            b = try TestNode("b", clock: clock)
            try a.allow(b)
            try b.allow(a)
            var items: [ItemKey] = []
            for i in 0..<count { items.append(try a.add("item \(i)").key) }
            self.items = items
            try Sync.pull(b, from: a)
            clock.advance(milliseconds: GCReconciliationTests.day)
            gone = Array(items.prefix(deleted))
            _ = try a.store.delete(gone)
            try beforeCollecting(a, items)
            clock.advance(milliseconds: 200 * GCReconciliationTests.day)
            let outcome = try a.store.collectGarbage(before: VersionStamp(milliseconds: clock.nowMilliseconds()))
            #expect(outcome.dropped == deleted)
            horizon = outcome.horizon
        }
    }

    @Test func aStaleClientGetsAFullListingAndTrashesWhatWasCollected() throws {
        let f = try Collected()
        let made = try f.b.add("made here, newer than the horizon")
        let report = try Self.pullKeepingReplaced(f.b, from: f.a)
        #expect(report.reconcileHorizon == Int64(f.horizon.stamp.milliseconds))
        #expect(report.reconciled.kept == f.gone.map(\.rawValue))
        #expect(report.deleted.kept == f.gone.map(\.rawValue), "counted as deleted")
        let tombstone = try #require(try f.b.store.item(f.gone[0]))
        #expect(tombstone.deleted, "not revived: the stale copy went")
        #expect(tombstone.version == Version(stamp: f.horizon.stamp, origin: f.a.nodeID))
        #expect(try f.b.store.trashEntries().map(\.key) == f.gone)
        #expect(try f.b.store.item(made.key)?.deleted == false, "newer than the horizon: kept, syncs normally")
        #expect(try f.b.store.items().count == f.items.count - f.gone.count + 1)

        // The next pull is ordinary: the checkpoint now covers the collected seqs.
        let next = try Sync.pull(f.b, from: f.a)
        #expect(next.reconcileHorizon == nil)
        #expect(next.manifestEntries == 0)

        // b's own tombstone reaches a, which records it (it is at the horizon, not below).
        try Sync.push(f.b, to: f.a)
        #expect(try f.a.store.item(made.key)?.name == made.name)
        #expect(try f.a.store.items().count == f.items.count - f.gone.count + 1)
        #expect(try f.a.store.items().map(\.key).contains(f.gone[0]) == false)
    }

    @Test func aCollectionDuringAListingEndsTheSessionAndTheNextPullReconciles() throws {
        let clock = TestClock()
        let a = try TestNode("a", clock: clock)
        let c = try TestNode("c", clock: clock)
        try a.allow(c)
        var items: [ItemKey] = []
        for i in 0..<2_500 { items.append(try a.add("item \(i)").key) }
        // The deletions are the newest changes, so they are listed after the first page.
        let gone = Array(items.suffix(3))
        _ = try a.store.delete(gone)
        clock.advance(milliseconds: 200 * Self.day)
        var dropped = 0
        var refusal: PeerErrorMessage?
        do {
            _ = try Sync.session(c, a, .pipe) { channel in
                let hooked = ObservingChannel(channel) { frame in
                    guard Self.isPage(frame), dropped == 0 else { return }
                    let cutoff = VersionStamp(milliseconds: clock.nowMilliseconds())
                    dropped = try a.store.collectGarbage(before: cutoff).dropped
                }
                return try SyncClient(store: c.store, logger: quietLogger).pull(
                    over: hooked, serverNodeID: a.nodeID, peerName: "a")
            } wrap: {
                $0
            }
        } catch SyncError.refusedByPeer(let error) {
            refusal = error
        }
        #expect(dropped == 3)
        #expect(refusal?.code == .internalError)
        #expect(refusal?.message.contains("garbage-collected during the session") == true)
        let next = try Sync.pull(c, from: a)
        #expect(next.reconcileHorizon != nil, "the next pull is a full reconciliation")
        #expect(try c.snapshot().filter { !$0.deleted } == a.snapshot().filter { !$0.deleted })
        for key in gone { #expect(try c.store.item(key)?.deleted != false, "a collected deletion is not live") }
    }

    @Test func aPushFromAStaleClientDoesNotReviveOnTheServer() throws {
        let f = try Collected()
        // b still holds its stale live copy and pushes everything it has (first push).
        let report = try Sync.push(f.b, to: f.a)
        #expect(report.peerCounts.inserted == 0)
        #expect(try f.a.store.item(f.gone[0]) == nil, "the virtual tombstone beat the stale copy")
        #expect(try f.a.store.items().count == f.items.count - f.gone.count)
    }

    @Test func anInterruptedReconciliationResumesAndFinishes() throws {
        // 1500 items: b pulls them, a deletes the first and edits 1000 others, so that the first
        // page of the listing from 0 already passes the collected seq.
        let f = try Collected(count: 1500, deleted: 1) { a, items in
            for key in items[500..<1500] { _ = try a.store.edit(key, ItemEdit(valueInDollars: 2)) }
        }
        #expect(throws: ProtocolError.self) {
            try Sync.session(f.b, f.a, .pipe) { channel in
                var options = SyncPlan()
                options.commitEvery = 1_000  // commit each page, so the break leaves one applied
                options.keepDeletedMilliseconds = 30 * 86_400_000  // `--keep-deleted 30d`
                return try SyncClient(store: f.b.store, logger: quietLogger).pull(
                    over: ObservingChannel.cut(channel, after: 1, of: Self.isPage), serverNodeID: f.a.nodeID,
                    peerName: "a",
                    plan: options)
            } wrap: {
                $0
            }
        }
        #expect(try f.b.store.reconciliationInProgress(source: f.a.store.storeID) == f.horizon.stamp)
        #expect(try f.b.store.item(f.gone[0])?.deleted == false, "nothing deleted before the final page")
        let checkpoint = try f.b.store.checkpoint(peerStore: f.a.store.storeID, direction: .pull)
        #expect(checkpoint >= f.horizon.seq, "the resumed session continues without the field")

        let resumed = try Self.pullKeepingReplaced(f.b, from: f.a)
        #expect(resumed.reconcileHorizon == Int64(f.horizon.stamp.milliseconds), "the stored horizon")
        #expect(resumed.reconciled.kept == [f.gone[0].rawValue])
        #expect(try f.b.store.item(f.gone[0])?.deleted == true)
        #expect(try f.b.store.items().count == 1499, "items listed before the break are not deleted")
        #expect(try f.b.store.reconciliationInProgress(source: f.a.store.storeID) == nil)
    }

    @Test func theMassDeletionGuardCountsReconciliationDeletions() throws {
        let f = try Collected(count: 14, deleted: 14)
        let dialer = Dialer(f.b, to: f.a)
        defer { dialer.finish() }
        #expect(throws: MassDeleteRefused.self) {
            try runPull(f.b, from: f.a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        }
        #expect(try f.b.store.items().count == 14, "nothing applied")
        let allowed = try runPull(f.b, from: f.a, over: dialer, peerName: "a", guard: nil)
        #expect(allowed.reconciled.count == 14)
        #expect(try f.b.store.items().isEmpty)
    }

    /// The preview allowed 5 reconciliation deletions; before the applying session the source
    /// deletes and collects 20 more. The applying session counts them itself and stops.
    @Test func theApplyingSessionCountsTheReconciliationDeletionsItself() throws {
        let f = try Collected(count: 30, deleted: 5)
        nonisolated(unsafe) let source = f.a
        let (clock, more) = (f.clock, Array(f.items.dropFirst(5).prefix(20)))
        let dialer = Dialer(f.b, to: f.a) { attempt, stream in
            if attempt == 2 {
                _ = try? source.store.delete(more)
                clock.advance(milliseconds: 200 * GCReconciliationTests.day)
                _ = try? source.store.collectGarbage(before: VersionStamp(milliseconds: clock.nowMilliseconds()))
            }
            return stream
        }
        defer { dialer.finish() }
        #expect {
            try runPull(f.b, from: f.a, over: dialer, peerName: "a", guard: MassDeleteGuard())
        } throws: { error in
            (error as? MassDeleteRefused)?.stoppedAfter != nil
        }
        #expect(dialer.count == 2, "a preview, then the applying session")
        #expect(try f.b.store.items().count == 30, "the reconciliation's deletions were not applied")
        #expect(try f.b.store.verify(repair: false).isClean)
    }

    @Test func aVersionOneClientIsRefusedWhenItNeedsAReconciliation() throws {
        let f = try Collected()
        let stale = try f.b.store.checkpoint(peerStore: f.a.store.storeID, direction: .pull)
        let refused = try versionOneFirstAnswer(from: f.a, client: f.b, since: stale)
        guard case .error(let error) = refused else {
            Issue.record("expected an Error, got \(refused.name)")
            return
        }
        #expect(error.code == .incompatibleVersion)
        let date = DateText.iso8601(milliseconds: Int64(f.horizon.stamp.milliseconds))
        #expect(error.message.contains("discarded deletions older than \(date)"))
        #expect(error.message.contains("protocol version 2"))

        // From 0 (a new version-1 client) it is served normally, without the field.
        let fresh = try versionOneFirstAnswer(from: f.a, client: f.b, since: 0)
        guard case .manifestPage(let page) = fresh else {
            Issue.record("expected a page, got \(fresh.name)")
            return
        }
        #expect(page.reconcileHorizon == nil)
        #expect(page.entries.count == 4)
    }

    @Test func aCollectedClientCannotPushToAVersionOneServer() throws {
        let f = try Collected()
        // c pushed x to a, then deleted x and collected the tombstone before pushing again.
        let c = try TestNode("c", clock: f.clock)
        try f.a.allow(c)
        try Sync.pull(c, from: f.a)
        let x = try c.add("deleted on c before a saw it")
        try Sync.push(c, to: f.a)
        _ = try c.store.delete([x.key])
        _ = try c.add("so the push checkpoint is not 0")
        f.clock.advance(milliseconds: 200 * Self.day)
        #expect(try c.store.collectGarbage(before: VersionStamp(milliseconds: f.clock.nowMilliseconds())).dropped == 1)

        let decision = ListingStart.decide(
            since: try c.store.checkpoint(peerStore: f.a.store.storeID, direction: .push),
            horizon: try c.store.gcHorizon(), version: 1)
        #expect(decision == .needsReconciliation(horizon: try c.store.gcHorizon().stamp))

        // Version 2 pushes the full listing and a deletes its copy of x.
        let report = try Sync.push(c, to: f.a)
        #expect(report.reconcileHorizon != nil)
        #expect(try f.a.store.item(x.key)?.deleted == true)
        #expect(report.peerCounts.deleted == 1)
    }

    @Test func listingStartFollowsTheHorizon() {
        let horizon = GCHorizon(stamp: VersionStamp(milliseconds: 1000), seq: 50)
        #expect(ListingStart.decide(since: 10, horizon: .none, version: 2) == .after(10))
        #expect(ListingStart.decide(since: 10, horizon: horizon, version: 2) == .reconcile(horizon: horizon.stamp))
        #expect(ListingStart.decide(since: 0, horizon: horizon, version: 2) == .reconcile(horizon: horizon.stamp))
        #expect(ListingStart.decide(since: 50, horizon: horizon, version: 2) == .after(50))
        #expect(
            ListingStart.decide(since: 10, horizon: horizon, version: 1) == .needsReconciliation(horizon: horizon.stamp)
        )
        #expect(ListingStart.decide(since: 0, horizon: horizon, version: 1) == .after(0))
        #expect(ListingStart.decide(since: 50, horizon: horizon, version: 1) == .after(50))
    }

    @Test func aHorizonThatChangesWithinASessionIsAProtocolError() throws {
        var machine = SinkStateMachine()
        _ = try machine.received(
            .message(
                .manifestPage(
                    ManifestPage(
                        entries: [], throughSeq: 1, isFinal: false, reconcileHorizon: VersionStamp(rawValue: 5)))))
        let wasFinal = machine.frames.pageApplied()
        #expect(!wasFinal)
        #expect(throws: ProtocolError.self) {
            try machine.received(.message(.manifestPage(ManifestPage(entries: [], throughSeq: 2, isFinal: true))))
        }
    }

    /// Speaks version 1 to `server` as `client`: Hello, PullRequest, and returns the first answer.
    private func versionOneFirstAnswer(from server: TestNode, client: TestNode, since: Int64) throws -> Message {
        var answer: Message?
        _ = try Sync.session(client, server, .pipe) { channel in
            let hello = HelloMessage(
                minVersion: 1, maxVersion: 1, nodeID: client.nodeID, storeID: client.store.storeID, intent: .pull,
                software: "version one")
            try channel.send(.hello(hello))
            guard case .hello(let reply) = try channel.receiveMessage(expecting: "Hello") else {
                throw ProtocolError.violation("no Hello")
            }
            #expect(reply.version == 1)
            try channel.send(.pullRequest(checkpointStore: server.store.storeID, sinceSeq: since))
            answer = try channel.receiveMessage(expecting: "ManifestPage or Error")
            return SyncReport(direction: .pull, peer: server.name)
        } wrap: {
            $0
        }
        return try #require(answer)
    }

    /// `Sync.pull` with the trash policy of `--keep-deleted`: what the pull replaces is kept.
    static func pullKeepingReplaced(_ client: TestNode, from server: TestNode) throws -> SyncReport {
        try Sync.session(client, server, .pipe) { channel in
            var options = SyncPlan()
            options.commitEvery = BatchPolicy.entries
            options.keepDeletedMilliseconds = 30 * 86_400_000  // `--keep-deleted 30d`
            return try SyncClient(store: client.store, logger: quietLogger).pull(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, plan: options)
        } wrap: {
            $0
        }
    }
}
