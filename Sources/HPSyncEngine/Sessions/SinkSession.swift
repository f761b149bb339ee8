import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Receives a source's changes into the local store by performing what `SinkStateMachine`
/// decides: it receives frames, reads the store, stages images, sends requests and PageDone,
/// and hands batches to a `BatchCommitter`, which commits each on a thread of its own while
/// the next pages arrive.
final class SinkSession {
    /// Who the session receives from, as the Hellos told, and how its refusals word the clocks.
    struct Peer {
        /// The source's store and node, which a full reconciliation needs; nil for none.
        var source: (store: StoreID, node: NodeID)?
        /// The session's protocol version (see `SinkStateMachine.Configuration`).
        var version = ProtocolLimits.maxVersion
        /// The peer as the mass-deletion guard names it.
        var name = ""
        /// The clocks as the Hellos told them, when they differ by more than the skew: a
        /// refusal then says which clock is behind instead of blaming the record's origin.
        var clockSkew: ClockSkew?
        /// How a refusal names this node ("this node"; a server: "this server").
        var me = "this node"
    }

    private let channel: any MessageChannel
    private let store: Store
    private let logger: Logger
    private let plan: SyncPlan
    private let peer: Peer
    /// Where the checkpoint lives: set for a pulling client, nil for a server receiving a push.
    private let checkpoint: (store: StoreID, direction: SyncDirection)?
    /// A guarded pull's first session: applies only if the plan's guard lets the source's
    /// announced tombstones through (`SyncRun.guardedPull`).
    private let asksBeforeApplying: Bool
    private let committer: BatchCommitter

    init(
        channel: any MessageChannel, store: Store, plan: SyncPlan, peer: Peer,
        checkpoint: (store: StoreID, direction: SyncDirection)?, asksBeforeApplying: Bool = false, logger: Logger
    ) {
        self.channel = channel
        self.store = store
        self.plan = plan
        self.peer = peer
        self.checkpoint = checkpoint
        self.asksBeforeApplying = asksBeforeApplying
        self.logger = logger
        self.committer = BatchCommitter(store: store, keepReplaced: plan.keepsReplaced)
    }

    /// Runs until the source's final page is applied; `report` gets what the session did, also
    /// when it fails.
    func run(into report: inout SyncReport) throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.plan = plan
        configuration.checkpoint = checkpoint
        configuration.source = peer.source
        configuration.version = peer.version
        configuration.asksBeforeApplying = asksBeforeApplying
        configuration.peer = peer.name
        configuration.maxImageBytes = store.maxImageBytes
        configuration.startsEmpty = try !plan.dryRun && store.hasNothingToMergeWith()
        var machine = SinkStateMachine(configuration, report: report)
        defer { report = machine.report }
        if plan.dryRun {
            try receive(&machine)
        } else {
            try store.bulkApply { try receive(&machine) }
        }
    }

    private func receive(_ machine: inout SinkStateMachine) throws {
        var preview: ReconcilePreview?
        var staging: (file: ImageStaging, key: ItemKey)?
        defer {
            // A batch still committing when the session fails ends first, and counts.
            if let committed = try? committer.wait() { machine.batchCommitted(committed) }
            try? preview?.close()
            staging?.file.abort()
            for image in machine.heldTemporaries { image.discard() }
        }
        var action = SinkStateMachine.Action.receive
        while true {
            switch action {
            case .receive:
                action = try machine.received(channel.receive(expecting: machine.expectation))
            case .lookUpReconciliation(let source):
                action = machine.reconciliationLookedUp(try store.reconciliationInProgress(source: source))
            case .countLiveItems:
                action = machine.liveItemsCounted(try store.liveItemCount())
            case .decideWhetherToApply(let tombstones):
                action = machine.applyDecided(mayApply(tombstones))
            case .checkClocks(let versions):
                action = machine.clocksChecked(clockRefusals(versions))
            case .commit(let commit):
                try perform(commit, on: &machine)
                action = machine.proceed()
            case .readLocal(let keys, let applyingNext):
                action = machine.localRead(try store.mergeBases(keys, applyingNext: applyingNext))
            case .previewReconciliation(let step, let horizon):
                let reconciliation =
                    preview ?? ReconcilePreview(store: store, source: step.source, continuing: step.horizon == nil)
                preview = reconciliation
                try reconciliation.record(step.listed)
                action = machine.reconciliationPreviewed(try horizon.map(reconciliation.victims) ?? [])
            case .fetchRecords(let keys):
                try channel.send(.fetchRecords(keys))
                action = .receive
            case .countReconciliationVictims(let step, let horizon):
                let victims = try store.reconciliationVictimCount(
                    source: step.source, horizon: horizon, countRecorded: !(step.isFirstPage && step.horizon != nil),
                    alsoListed: step.listed)
                action = machine.victimsCounted(victims)
            case .locateImages(let digests):
                action = machine.imagesLocated(try store.imageFiles(withDigests: digests))
            case .fetchImages(let wanted):
                store.expectImages(wanted.count)
                try channel.send(.fetchImages(wanted))
                action = .receive
            case .stageImage(let header):
                let file = try store.stageImage(expected: ImageRef(digest: header.digest, size: header.size))
                staging = (file, header.key)
                action = .receive
            case .writeChunk(let bytes, let finishing):
                guard let file = staging?.file else { preconditionFailure("a chunk with no staging file") }
                try bytes.withUnsafeBytes { try file.write($0) }
                guard let key = finishing else {
                    action = .receive
                    continue
                }
                let image = try file.finish(sentBy: key)
                staging = nil
                action = machine.imageArrived(image)
                reportProgress(machine)
            case .stageCopies(let copies):
                action = machine.copiesStaged(try stage(copies))
            case .sendPageDone(let message):
                try channel.send(message)
                reportProgress(machine)
                switch machine.pageDoneSent() {
                case .receive: action = .receive
                case .finished: return
                }
            case .fail(let error):
                throw error
            }
        }
    }

    /// Hands a batch to the committer or waits for one; each commit that ends is reported.
    private func perform(_ commit: SinkStateMachine.Commit, on machine: inout SinkStateMachine) throws {
        switch commit {
        case .submit(let batch, let wait):
            if let batch { try submit(batch, to: &machine) }
            if wait, let committed = try committer.wait() { machine.batchCommitted(committed) }
        case .wait:
            if let committed = try committer.wait() { machine.batchCommitted(committed) }
        case .poll:
            if let committed = try committer.poll() { machine.batchCommitted(committed) }
        }
    }

    /// Hands a batch to the committer, which first ends the one before (and reports it).
    private func submit(_ batch: PendingBatch.Sealed, to machine: inout SinkStateMachine) throws {
        do {
            if let committed = try committer.submit(batch) { machine.batchCommitted(committed) }
        } catch {
            // The batch before failed, so this one was never queued: its temporaries are ours.
            for image in batch.staged { image.discard() }
            throw error
        }
    }

    /// Copies local files that hold images the source's records name (no bytes move).
    private func stage(_ copies: [SinkStateMachine.LocalCopy]) throws -> [ItemKey: StagedImage] {
        var staged: [ItemKey: StagedImage] = [:]
        do {
            for copy in copies { staged[copy.key] = try store.stageImage(copying: copy.file, expected: copy.image) }
        } catch {
            for image in staged.values { image.discard() }
            throw error
        }
        return staged
    }

    private func reportProgress(_ machine: SinkStateMachine) {
        plan.progress?(
            SyncProgress(
                machine.report, received: machine.receivedItems, bytes: channel.bytesSent + channel.bytesReceived,
                totalEntries: machine.totalEntries, totalImageBytes: machine.totalImageBytes))
    }

    /// Whether the plan's mass-deletion guard lets the source's announced tombstones through.
    /// The decision only needs to know "at least this many" live items.
    private func mayApply(_ tombstones: Int64) -> Bool {
        guard let rule = plan.massDeleteGuard else { return true }
        let deleting = Int(clamping: tombstones)
        guard let live = try? store.liveItemCount(upTo: rule.liveItemsNeeded(toJudge: deleting)) else { return false }
        return rule.violation(deleting: deleting, liveItems: live) == nil
    }

    /// The versions the clock guard refuses, by index, with why.
    private func clockRefusals(_ versions: [Version]) -> [SinkStateMachine.ClockRefusal] {
        var refusals: [SinkStateMachine.ClockRefusal] = []
        for (index, version) in versions.enumerated() {
            if let reason = refusal(version) { refusals.append(.init(index: index, reason: reason)) }
        }
        return refusals
    }

    /// Why the clock guard refuses `version`, or nil. When the source's own clock is ahead of
    /// ours beyond the skew, ours may be the one that is wrong: the reason says so.
    private func refusal(_ version: Version) -> String? {
        guard let reason = store.clockGuardRefusal(version) else { return nil }
        let me = peer.me
        guard let clockSkew = peer.clockSkew, clockSkew.localIsBehind else { return reason }
        let ahead = (version.stamp.milliseconds &- store.nowMilliseconds()) / 1000
        return "stamped \(ahead) s ahead of \(me)'s clock by node \(version.origin.short), and "
            + "\(clockSkew.comparison(me: me)): if \(me)'s clock is wrong, set it right; the record is retried at "
            + "the next sync"
    }
}
