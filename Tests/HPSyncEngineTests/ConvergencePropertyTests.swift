import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import HPSyncTransfer
import PropertyBased
import Testing

@testable import HPSyncEngine

/// One step of a random history, kept as small integers so the shrinker can simplify it.
struct HistoryStep: Sendable, CustomStringConvertible {
    enum Kind: Int, CaseIterable, Sendable {
        case add, edit, delete, setImage, removeImage, pull, push
        /// The node's clock jumps a day ahead or behind (by the parameter's parity), or back to right.
        case clockJump
        /// With its clock right, the node runs `clock reset` if its high-water mark is ahead.
        case clockReset
        /// The node runs `hp-sync gc`: `--older-than` and `--force` by the parameter (`gcAge`).
        case gc

        /// What a step's kind number means: adds, deletions, sessions and gc come twice, so
        /// that tombstones are made, spread and collected within a short history.
        static let weighted: [Kind] = [
            .add, .edit, .delete, .setImage, .removeImage, .pull, .push, .clockJump, .clockReset, .gc,
            .add, .delete, .pull, .push, .gc,
        ]
    }
    var kind: Kind
    /// The acting node (the client for pull and push).
    var node: Int
    /// The other node of a pull or push.
    var peer: Int
    /// Which of the shared keys an item operation acts on.
    var slot: Int
    /// Image seed, value, cut point or time step, depending on the kind.
    var parameter: Int

    var description: String { "\(kind)(n\(node), peer n\(peer), k\(slot), p\(parameter))" }

    /// A gc step's `--older-than`: none, 1 s, 10 s or an hour. The steps tick up to ~9 s
    /// apart, so tombstones made a few steps earlier go (on clocks that agree).
    var gcAge: Int64 { [0, 1_000, 10_000, 3_600_000][(parameter / 2) % 4] }
    /// Half the gc steps are forced past peers that have not synced since.
    var gcForce: Bool { parameter % 2 == 1 }
    /// Half the gc steps run after a night (8 hours) has passed: longer than the clocks are
    /// apart, so tombstones any node made before can go. (Syncs raise every node's stamps to
    /// the clock furthest ahead, and gc's cutoff is on the node's own clock.)
    var gcAfterANight: Bool { (parameter / 8) % 2 == 1 }
}

/// A random history: node count, each node's clock offset, and the steps.
struct History: Sendable, CustomStringConvertible {
    var nodeCount: Int
    /// Milliseconds each node's clock is ahead (negative: behind) of the shared "real" time.
    var offsets: [Int64]
    var steps: [HistoryStep]
    /// Every pair of nodes synced once before the steps, as `hp-sync join` does: otherwise
    /// gc's safe rule refuses while a listed peer never synced.
    var introduced = false

    var description: String {
        "History(nodes: \(nodeCount), offsets ms: \(offsets.prefix(nodeCount)), steps: \(steps.count)"
            + "\(introduced ? ", introduced" : ""))"
    }

    /// Up to 20 steps over 3–5 nodes, clocks up to 3 hours apart from real time.
    static let generator = zip(
        Gen.bool,
        Gen.int(in: 3...5),
        Gen.int64(in: -3 * 3_600_000...3 * 3_600_000).array(of: 5),
        zip(
            Gen.int(in: 0...(HistoryStep.Kind.weighted.count - 1)), Gen.int(in: 0...4), Gen.int(in: 0...4),
            Gen.int(in: 0...3), Gen.int(in: 0...255)
        )
        .map { kind, node, peer, slot, parameter in
            HistoryStep(
                kind: HistoryStep.Kind.weighted[kind], node: node, peer: peer, slot: slot, parameter: parameter)
        }
        .array(of: 0...20)
    ).map { introduced, count, offsets, steps in
        History(nodeCount: count, offsets: offsets, steps: steps, introduced: introduced)
    }
}

/// Runs a history over in-memory nodes and checks every node converges to the merge rule's winners.
final class HistoryRun {
    static let start: UInt64 = 1_750_000_000_000
    /// Larger than any offset difference a history's clocks make (6 h), so only a clock jump
    /// (a day) makes the clock guard refuse stamps.
    static let skew: UInt64 = 7 * 3_600_000
    static let day: Int64 = 86_400_000
    /// Thousands of stores are made and dropped: on Linux they live in RAM, where fsync is free.
    /// One folder per test process, removed as a whole when the property is done.
    static let base: URL? = memoryFolder("convergence")

    /// A new folder in /dev/shm (nil where there is none) for one suite's stores: each suite
    /// removes its own when done, never one another test is still writing in.
    static func memoryFolder(_ label: String) -> URL? {
        guard FileManager.default.fileExists(atPath: "/dev/shm") else { return nil }
        let folder = URL(fileURLWithPath: "/dev/shm/hp-sync-\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    let history: History
    let nodes: [TestNode]
    let clocks: [TestClock]
    let keys: [ItemKey]
    var now: UInt64 = start
    /// Every edit and deletion any node made: the model of the field merge.
    var oracle = FieldMergeOracle()
    var imagesByDigest: [SHA256Digest: [UInt8]] = [:]
    var log: [String] = []
    var sessionsCut = 0
    /// Each node's clock jump now in force (0: its clock is right).
    var jumps: [Int64]
    /// Set by `fixClocks`: every node's offset from real time is gone too.
    var clocksRight = false
    var clockJumps = 0
    var resets = 0
    var restamps = 0
    /// Nodes that did not converge to the merge rule's winners.
    var divergent = 0
    /// Open conflicts the merge rule expects after the final round (on every node).
    var conflicts = 0
    /// gc steps that ran (`forcedGCs` of them with `--force`), those the rule refused (a peer
    /// never synced), and the tombstones dropped.
    var gcRuns = 0
    var forcedGCs = 0
    var gcRefused = 0
    var tombstonesDropped = 0
    /// Sessions that were a full reconciliation (Protocol.md 6.1), and the items they deleted.
    var reconciliations = 0
    var reconciledDeletions = 0
    /// Every GC horizon stamp each node has held: a reconciliation's tombstone is stamped with one.
    var horizons: [Set<VersionStamp>]
    /// Each node's highest horizon from a `gc --force`, and the live items the final check found
    /// missing on a node below it (`check`).
    var forcedHorizons: [VersionStamp]
    /// Keys a `gc --force` dropped a tombstone of that some other node did not hold as it was:
    /// what only that tombstone kept (a deletion, an add's fields) is gone, as `--force` says.
    var lostByForce: Set<ItemKey> = []
    var refusedBelowForcedHorizon = 0

    /// The stores go in `base` (nil: the temporary folder); the property's shared one is
    /// removed when its last shard ends, so tests that run beside it pass nil.
    init(_ history: History, in base: URL? = HistoryRun.base) throws {
        self.history = history
        keys = (0..<4).map { try! ItemKey(String(format: "00000000-0000-4000-8000-%012d", $0 + 1)) }
        var clocks: [TestClock] = []
        var nodes: [TestNode] = []
        for index in 0..<history.nodeCount {
            let clock = TestClock(UInt64(Int64(Self.start) + history.offsets[index]))
            clocks.append(clock)
            nodes.append(
                try TestNode(
                    "n\(index)", clock: clock,
                    configuration: StoreConfiguration(maxClockSkewMilliseconds: Self.skew), in: base))
        }
        for a in nodes { for b in nodes where a !== b { try a.allow(b) } }
        self.nodes = nodes
        self.clocks = clocks
        jumps = Array(repeating: 0, count: history.nodeCount)
        horizons = Array(repeating: [], count: history.nodeCount)
        forcedHorizons = Array(repeating: .zero, count: history.nodeCount)
        log.append("\(history)")
    }

    func tick(_ milliseconds: UInt64) {
        now += milliseconds
        oracle.now = now
        for (index, clock) in clocks.enumerated() {
            clock.set(UInt64(Int64(now) + (clocksRight ? 0 : history.offsets[index]) + jumps[index]))
        }
    }

    /// Each pair of nodes syncs once, the later node pulling from the earlier (empty stores).
    func introduce() throws {
        guard history.introduced else { return }
        for server in nodes.indices {
            for client in nodes.indices where client > server {
                try Sync.pull(nodes[client], from: nodes[server])
                try nodes[client].store.recordSyncSuccess(peer: nodes[server].name, direction: .pull)
            }
        }
        log.append("introductions: each pair of nodes synced once")
    }

    /// Performs one step; an operation that does not apply to the node's current state is skipped.
    func perform(_ step: HistoryStep) throws {
        // Some steps happen in the same millisecond, to exercise the counter and the origin tiebreak.
        tick(step.parameter % 3 == 0 ? 0 : UInt64(step.parameter * 37))
        // An item operation acts on the first key from its slot on (cyclically) it applies to:
        // an add on one absent or deleted there, the others on a live one, and an operation on a
        // live item on the first node from its own on that holds one.
        func isLive(_ slot: Int, on node: TestNode) throws -> Bool {
            try node.store.item(keys[slot]).map { !$0.deleted } ?? false
        }
        let liveKinds: [HistoryStep.Kind] = [.edit, .delete, .setImage, .removeImage]
        let index =
            liveKinds.contains(step.kind)
            ? try nodes.indices.map { (step.node + $0) % nodes.count }.first { candidate in
                try keys.indices.contains { try isLive($0, on: nodes[candidate]) }
            } ?? step.node % nodes.count : step.node % nodes.count
        let node = nodes[index]
        func isLive(_ slot: Int) throws -> Bool { try isLive(slot, on: node) }
        let itemKinds: [HistoryStep.Kind] = [.add] + liveKinds
        let slot =
            itemKinds.contains(step.kind)
            ? try keys.indices.map { (step.slot + $0) % keys.count }.first { try isLive($0) == (step.kind != .add) }
                ?? step.slot : step.slot
        let key = keys[slot]
        let live = try isLive(slot)
        let before = try node.store.mergeState(key)
        let prefix = "t+\(now - Self.start)ms n\(index):"
        func image() -> [UInt8] {
            let bytes = jpeg(UInt8(step.parameter), size: 600 + step.parameter)
            imagesByDigest[SHA256.hash(bytes)] = bytes
            return bytes
        }
        switch step.kind {
        case .add where !live:
            let withImage = step.parameter % 2 == 0
            var draft = ItemDraft(key: key, name: "k\(slot) by n\(index) #\(step.parameter)")
            draft.valueInDollars = Int64(step.parameter)
            if withImage { draft.imageFile = try node.writeTemp(image()) }
            oracle.change(try node.store.add(draft), fields: ItemField.allCases, before: before)
            log.append("\(prefix) add k\(slot)\(withImage ? " with image \(step.parameter)" : "")")
        case .edit where live:
            let edited = try node.store.edit(
                key, ItemEdit(name: "k\(slot) edited by n\(index) #\(step.parameter)"))
            oracle.change(edited, fields: [.name], before: before)
            log.append("\(prefix) edit k\(slot)")
        case .delete where live:
            _ = try node.store.delete([key])
            oracle.delete(key, at: try #require(try node.store.item(key)).version)
            log.append("\(prefix) delete k\(slot)")
        case .setImage where live:
            oracle.change(
                try node.store.setImage(key, from: try node.writeTemp(image())), fields: [.photo], before: before)
            log.append("\(prefix) set image of k\(slot) to \(step.parameter)")
        case .removeImage where live:
            let old = try node.store.item(key)
            let after = try node.store.removeImage(key)
            if after != old { oracle.change(after, fields: [.photo], before: before) }
            log.append("\(prefix) remove image of k\(slot)\(after == old ? " (had none)" : "")")
        case .clockJump:
            jumps[index] = jumps[index] != 0 ? 0 : (step.parameter % 2 == 0 ? Self.day : -Self.day)
            clockJumps += 1
            tick(0)
            log.append("\(prefix) clock jumps to \(jumps[index] / 3_600_000) h from right")
        case .clockReset where jumps[index] == 0:
            try resetClock(index, prefix: prefix)
        case .gc:
            if step.gcAfterANight {
                tick(8 * 3_600_000)
                log.append("\(prefix) a night passes (8 h)")
            }
            try collectGarbage(index, olderThan: step.gcAge, force: step.gcForce, prefix: prefix)
        case .pull, .push:
            let peerIndex = step.peer % nodes.count == index ? (index + 1) % nodes.count : step.peer % nodes.count
            try session(step, client: index, server: peerIndex, prefix: prefix)
        default:
            log.append("\(prefix) \(step.kind) k\(slot) skipped (\(live ? "live" : "absent or deleted"))")
        }
    }

    func session(_ step: HistoryStep, client: Int, server: Int, prefix: String) throws {
        // A quarter of the sessions are cut: in the handshake, the manifest, a record or an image.
        let cut = step.parameter < 64 ? 40 + step.parameter * 12 : nil
        let wrap: ((any ByteStream) -> any ByteStream)? = cut.map { limit in
            { CuttingStream($0, cutAfterReading: limit) }
        }
        let verb = step.kind == .pull ? "pull from" : "push to"
        var outcome = "ok"
        let (sink, source) = step.kind == .pull ? (client, server) : (server, client)
        let before = try live(sink)
        do {
            let report: SyncReport
            if step.kind == .pull {
                report = try Sync.pull(nodes[client], from: nodes[server], clientStream: wrap)
            } else {
                report = try Sync.push(nodes[client], to: nodes[server], wrap: wrap)
            }
            // As `SyncRun` does after a run (the served side records its own).
            try nodes[client].store.recordSyncSuccess(
                peer: nodes[server].name, direction: step.kind == .pull ? .pull : .push,
                peerClock: report.clockSkew?.peerMilliseconds)
            if let horizon = report.reconcileHorizon {
                reconciliations += 1
                outcome += ", a full reconciliation at horizon \(horizon)"
            }
        } catch {
            guard cut != nil else { throw error }
            sessionsCut += 1
            outcome = "cut: \(error)"
        }
        log.append("\(prefix) \(verb) n\(server)\(cut.map { " [cut after \($0) bytes]" } ?? "") -> \(outcome)")
        try observeReconciliation(sink: sink, source: source, before: before)
        guard cut != nil else { return }
        for index in [client, server] {
            let report = try nodes[index].store.verify(repair: false)
            #expect(report.isClean, "n\(index) not clean after a session:\n\(transcript)")
        }
    }

    /// What a user does once a clock is right again: `clock reset` where the high-water mark is
    /// ahead. Every version it restamps comes back, same content, as this node's edit stamped
    /// now, a whole record: the old version is withdrawn from the model (`expected` leaves out
    /// the future), the new one is an edit of every field (or a deletion) like any other.
    func resetClock(_ index: Int, prefix: String) throws {
        let store = nodes[index].store
        guard try store.clockAhead() != nil else {
            log.append("\(prefix) clock reset: nothing ahead")
            return
        }
        let before = Dictionary(uniqueKeysWithValues: try store.items(includeDeleted: true).map { ($0.key, $0) })
        let reset = try store.resetClock()
        resets += 1
        restamps += reset.restamped.count
        for restamp in reset.restamped {
            let new = try #require(try store.item(restamp.key))
            var old = try #require(before[restamp.key])
            #expect(old.version == restamp.old)
            old.version = new.version
            #expect(old == new, "a reset changed more than the stamp:\n  \(transcript)")
            oracle.restamp(try #require(try store.mergeState(restamp.key)))
            // The reset made the item one whole record: every version of it stamped ahead is
            // gone from this node. Gone from the last node that held it, it is gone for good;
            // another node that holds one spreads it back (it is newer than the restamp). So is
            // a version no node held any more before the reset (a later edit dominated it, or a
            // live item forgot its deletion): with that later version restamped below it, it
            // must not count again. (A collected deletion stays: it is a node's horizon.)
            let versions =
                (oracle.edits[restamp.key] ?? []).map(\.version)
                + (oracle.deletions[restamp.key] ?? []).filter { !$0.collected }.map(\.version)
            for version in Set(versions) where version != new.version {
                var held = false
                for node in nodes.indices where try holds(node, restamp.key, version) { held = true }
                if !held { oracle.forget(restamp.key, version) }
            }
        }
        log.append("\(prefix) clock reset: \(reset.restamped.count) restamped")
    }

    /// Whether node `index` holds `version` of `key`: as a field's candidate or its deletion.
    func holds(_ index: Int, _ key: ItemKey, _ version: Version) throws -> Bool {
        guard let state = try nodes[index].store.mergeState(key) else { return false }
        return Self.versions(of: state).contains(version)
    }

    /// Every version a state holds: its fields' candidates and its deletion.
    static func versions(of state: ItemMergeState) -> Set<Version> {
        var versions = Set(state.name.candidates.map(\.version))
        versions.formUnion(state.serialNumber.candidates.map(\.version))
        versions.formUnion(state.valueInDollars.candidates.map(\.version))
        versions.formUnion(state.dateCreated.candidates.map(\.version))
        versions.formUnion(state.photo.candidates.map(\.version))
        if let deletion = state.deletion { versions.insert(deletion) }
        return versions
    }

    /// `hp-sync gc --older-than AGE [--force]` on node `index`, with the library calls the
    /// command makes: the cutoff `GCCutoff.decide` allows over the node's peers and their sync
    /// states, then `collectGarbage(before:)`. The safe rule refuses while a peer never synced.
    func collectGarbage(_ index: Int, olderThan: Int64, force: Bool, prefix: String) throws {
        let store = nodes[index].store
        let requested = Int64(store.nowMilliseconds()) - olderThan
        let cutoff = GCCutoff.decide(
            requested: requested, peers: try store.peers().map(\.name), states: try store.peerSyncStates(),
            force: force)
        let command = "gc --older-than \(olderThan) ms\(force ? " --force" : "")"
        guard let milliseconds = cutoff.cutoffMilliseconds else {
            gcRefused += 1
            log.append("\(prefix) \(command): refused, never synced: \(cutoff.neverSynced)")
            return
        }
        let limit = VersionStamp(milliseconds: UInt64(max(milliseconds, 0)))
        let going = try store.items(includeDeleted: true).filter { $0.deleted && $0.version.stamp < limit }
        if force {
            for tombstone in going {
                let state = try store.mergeState(tombstone.key)
                for other in nodes.indices where other != index {
                    if try nodes[other].store.mergeState(tombstone.key) != state { lostByForce.insert(tombstone.key) }
                }
            }
        }
        let outcome = try store.collectGarbage(before: limit)
        #expect(outcome.dropped == going.count)
        for tombstone in going { oracle.collect(tombstone.key, at: tombstone.version) }
        gcRuns += 1
        if force {
            forcedGCs += 1
            forcedHorizons[index] = max(forcedHorizons[index], outcome.horizon.stamp)
        }
        tombstonesDropped += outcome.dropped
        if outcome.horizon.isSet { horizons[index].insert(outcome.horizon.stamp) }
        log.append(
            "\(prefix) \(command): cutoff \(milliseconds - Int64(Self.start)), dropped \(outcome.dropped), "
                + "kept \(outcome.kept), horizon \(outcome.horizon.stamp.milliseconds) seq \(outcome.horizon.seq)"
                + (cutoff.heldBackBy.map { ", held back by \($0.peer)" } ?? ""))
    }

    /// The live items of node `index`, by key.
    func live(_ index: Int) throws -> [ItemKey: Item] {
        Dictionary(uniqueKeysWithValues: try nodes[index].store.items().map { ($0.key, $0) })
    }

    /// After a session with `sink` applying what `source` sent: a tombstone no deletion of the
    /// model explains must be a full reconciliation's (Protocol.md 6.1): stamped with a horizon
    /// of the source, at the source's node ID, for a key the source has no row for and the sink
    /// held live below that horizon. It is a new deletion, and the model takes it as one.
    func observeReconciliation(sink: Int, source: Int, before: [ItemKey: Item]) throws {
        let sourceHorizon = try nodes[source].store.gcHorizon()
        if sourceHorizon.isSet { horizons[source].insert(sourceHorizon.stamp) }
        let sinkHorizon = try nodes[sink].store.gcHorizon()
        if sinkHorizon.isSet { horizons[sink].insert(sinkHorizon.stamp) }
        for item in try nodes[sink].store.items(includeDeleted: true) where item.deleted {
            guard !oracle.deleted(item.key, at: item.version) else { continue }
            let held = before[item.key]
            let sourceHasNoRow = try nodes[source].store.item(item.key) == nil
            let explained =
                item.version.origin == nodes[source].nodeID && horizons[source].contains(item.version.stamp)
                && held.map { $0.version.stamp < item.version.stamp } == true && sourceHasNoRow
            let heldText = held.map { "\($0.version)" } ?? "nothing"
            #expect(
                explained,
                "n\(sink) holds a tombstone \(item.key) at \(item.version) that no deletion explains (held \(heldText)):\n  \(transcript)"
            )
            oracle.delete(item.key, at: item.version)
            reconciledDeletions += 1
            log.append("  n\(sink): the reconciliation deleted k\(keys.firstIndex(of: item.key) ?? -1)")
        }
    }

    /// Every clock is set right, and every node whose high-water mark was left ahead resets.
    func fixClocks() throws {
        jumps = Array(repeating: 0, count: nodes.count)
        // Every clock exactly right, the usual skew between machines included: a version stamped
        // within the skew of a clock ahead but beyond that of one behind is held by the first
        // and refused by the second until its clock catches up (Protocol.md 6 step 2: retried at every sync), so
        // nodes that stay skewed converge later than the final round looks.
        clocksRight = true
        tick(0)
        for index in nodes.indices { try resetClock(index, prefix: "end n\(index):") }
    }

    /// Every node pushes to n0, then every node pulls from n0: afterwards all must agree.
    ///
    /// A full reconciliation in the round's pulls deletes on its sink: a new change, which a
    /// second round spreads (as any change made during a round would need).
    func fullRound() throws {
        log.append("full round: every node pushes to n0, then pulls from n0")
        let deletions = try round()
        guard deletions > 0 else { return }
        log.append("second round: the first one's pulls reconciled (\(deletions) deleted)")
        let again = try round()
        #expect(again == 0, "a second round reconciled again:\n  \(transcript)")
    }

    /// One round; returns how many items the reconciliations of its pulls deleted.
    func round() throws -> Int {
        for index in 1..<nodes.count {
            let before = try live(0)
            let report = try Sync.push(nodes[index], to: nodes[0])
            if report.reconcileHorizon != nil { reconciliations += 1 }
            try observeReconciliation(sink: 0, source: index, before: before)
        }
        let deletions = reconciledDeletions
        for index in 1..<nodes.count {
            let before = try live(index)
            let report = try Sync.pull(nodes[index], from: nodes[0])
            if report.reconcileHorizon != nil { reconciliations += 1 }
            try observeReconciliation(sink: index, source: 0, before: before)
        }
        return reconciledDeletions - deletions
    }

    var transcript: String { log.joined(separator: "\n  ") }

    /// The merge rule's answer (`FieldMergeOracle`): per field the latest edit, its concurrent
    /// edits nobody saw as conflicts, except the edits stamped by a clock a day ahead. Once every
    /// clock is right, every node resets (`fixClocks`): each such version it holds comes back as
    /// a new version stamped now (checked in `resetClock`), and one that no node holds any more
    /// was replaced by a later version, stamped in the future too, and restamped in its turn.
    var expected: (items: [Item], conflicts: Set<FieldConflict>) {
        oracle.expected(stampedUpTo: now + Self.skew)
    }

    func check() throws {
        let (allExpected, expectedConflicts) = expected
        conflicts = expectedConflicts.count
        // A deletion at or below some node's GC horizon need not be held everywhere: that node
        // collected its tombstone (or refused it as older than a collected one, Protocol.md 6),
        // so it stops spreading there. A node that never received it holds no row, or the
        // tombstone of an earlier deletion of the key (one the model knows): deleted either way.
        // The export leaves out the keys where some node holds no row or that earlier tombstone.
        let highestHorizon = try nodes.map { try $0.store.gcHorizon().stamp }.max() ?? .zero
        var collected: Set<ItemKey> = []
        for (index, node) in nodes.enumerated() {
            let rows = Dictionary(uniqueKeysWithValues: try node.snapshot().map { ($0.key, $0) })
            var expected: [Item] = []
            var excused: Set<ItemKey> = []
            // `gc --force` is the user's word that no peer still holds a version below the
            // horizon (README, Protocol.md 6): a live item stamped below it that a node had no
            // row for is refused there for good, a full reconciliation from there deletes it on
            // its sinks, and a key re-added on the node after its tombstone went (its add
            // restamped below the horizon by a `clock reset`) is live where the model, which
            // still knows the deletion, has it deleted; and what a forced gc dropped with a
            // tombstone no other node held as it was is gone. The keys whose expected version
            // lies below a forced horizon, and those, are left out where they differ. Only forced runs: the safe
            // rule must lose nothing.
            let forcedHorizon = forcedHorizons.max() ?? .zero
            var refused: Set<ItemKey> = []
            for item in allExpected {
                if item.deleted, item.version.stamp <= highestHorizon, rows[item.key] != item,
                    rows[item.key].map({ $0.deleted && oracle.deleted(item.key, at: $0.version) }) ?? true
                {
                    excused.insert(item.key)
                } else if item.version.stamp < forcedHorizon || lostByForce.contains(item.key), rows[item.key] != item {
                    refused.insert(item.key)
                    refusedBelowForcedHorizon += 1
                } else {
                    expected.append(item)
                }
            }
            collected.formUnion(excused.union(refused))
            let snapshot = rows.values.filter { !excused.contains($0.key) && !refused.contains($0.key) }
                .sorted { $0.key < $1.key }
            // A key left out where it differs (a forced gc's loss) is left out of the clashes too.
            let nodeConflicts = Set(try node.store.conflicts().filter { !refused.contains($0.key) })
            // A clash whose losing value only a tombstone that `gc --force` dropped held is gone
            // with it: the key is in `lostByForce` and the losing version below the forced horizon.
            let expectedConflicts = expectedConflicts.filter { conflict in
                !refused.contains(conflict.key)
                    && !(lostByForce.contains(conflict.key) && conflict.losingVersion.stamp < forcedHorizon
                        && !nodeConflicts.contains(conflict))
            }
            if snapshot != expected || nodeConflicts != expectedConflicts { divergent += 1 }
            #expect(snapshot == expected, "n\(index) differs from the merge rule's winners:\n  \(transcript)")
            #expect(
                nodeConflicts == expectedConflicts,
                "n\(index) lists other conflicts than the merge rule's:\n  \(transcript)")
            #expect(try node.store.verify(repair: false).isClean, "n\(index) not clean:\n  \(transcript)")
            for item in allExpected where !refused.contains(item.key) {
                let bytes = node.imageBytes(item.key)
                let want = item.deleted ? nil : item.image.flatMap { imagesByDigest[$0.digest] }
                #expect(bytes == want, "n\(index) image of \(item.key) is wrong:\n  \(transcript)")
            }
        }
        // The export's items (not its store and node IDs, which differ by design) must be equal.
        let exports = try nodes.map { node in
            let document = try JSONSerialization.jsonObject(with: node.store.exportJSON()) as? [String: Any]
            let items = (document?["items"] as? [[String: Any]] ?? []).filter { item in
                !collected.contains { $0.rawValue == item["key"] as? String }
            }
            return try JSONSerialization.data(withJSONObject: items, options: .sortedKeys)
        }
        #expect(Set(exports).count == 1, "exported items differ:\n  \(transcript)")
    }
}

/// How many histories to check: `HP_SYNC_HISTORIES`, or 100,000 with `HP_SYNC_LONG=1`, else 1,000.
let historyCount: Int = {
    let environment = ProcessInfo.processInfo.environment
    if let text = environment["HP_SYNC_HISTORIES"], let count = Int(text) { return count }
    return environment["HP_SYNC_LONG"] == "1" ? 100_000 : 1_000
}()

/// A wall-clock budget for long runs: `HP_SYNC_HISTORY_SECONDS`. Histories generated after it
/// are skipped (and counted as such), so a run that cannot finish still reports an exact count.
let historyDeadline: Date? = {
    guard let text = ProcessInfo.processInfo.environment["HP_SYNC_HISTORY_SECONDS"], let seconds = Double(text)
    else { return nil }
    return Date(timeIntervalSinceNow: seconds)
}()

/// Long runs print a progress line every this many histories.
let progressInterval = historyCount >= 10_000 ? 5_000 : Int.max

/// Counts across the whole run, for RELIABILITY.md.
let convergenceStats = Locked<
    (
        histories: Int, steps: Int, cuts: Int, skipped: Int, jumps: Int, resets: Int, restamps: Int, divergent: Int,
        conflicts: Int, gcRuns: Int, forcedGCs: Int, gcRefused: Int, dropped: Int, reconciliations: Int,
        reconciled: Int, refusedBelowForcedHorizon: Int
    )
>((0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
let convergenceStarted = Date()
let convergenceShardsFinished = Locked(0)

@Suite struct ConvergencePropertyTests {
    /// Four shards run in parallel; together they check `historyCount` histories.
    @Test(.shrinking, arguments: 0..<4)
    func randomHistoriesConvergeToTheMergeRule(shard: Int) async throws {
        let started = Date()
        _ = (historyDeadline, convergenceStarted)  // globals start lazily: start the clocks now
        await propertyCheck(count: (historyCount + 3) / 4, input: History.generator) { history in
            if let historyDeadline, Date() >= historyDeadline {
                convergenceStats.withLock { $0.skipped += 1 }
                return
            }
            let run = try HistoryRun(history)
            do {
                try run.introduce()
                for step in history.steps { try run.perform(step) }
                try run.fixClocks()
                try run.fullRound()
                try run.check()
            } catch {
                Issue.record("\(error)\n  \(run.transcript)")
            }
            var checked = 0
            convergenceStats.withLock {
                $0.histories += 1
                $0.steps += history.steps.count
                $0.cuts += run.sessionsCut
                $0.jumps += run.clockJumps
                $0.resets += run.resets
                $0.restamps += run.restamps
                $0.divergent += run.divergent
                $0.conflicts += run.conflicts
                $0.gcRuns += run.gcRuns
                $0.forcedGCs += run.forcedGCs
                $0.gcRefused += run.gcRefused
                $0.dropped += run.tombstonesDropped
                $0.reconciliations += run.reconciliations
                $0.reconciled += run.reconciledDeletions
                $0.refusedBelowForcedHorizon += run.refusedBelowForcedHorizon
                checked = $0.histories
            }
            if checked % progressInterval == 0 { printConvergenceStats("progress") }
        }
        // A few stores outlive their history (their folders reappear as SQLite closes them).
        // Only once every shard is done: a shard that shrinks a failure runs more histories than
        // its share, so the history count would remove the folder under the others' feet.
        let finished = convergenceShardsFinished.withLock { count in
            count += 1
            return count
        }
        if let base = HistoryRun.base, finished == 4 {
            try? FileManager.default.removeItem(at: base)
        }
        printConvergenceStats(
            "after shard \(shard)", shardSeconds: Date().timeIntervalSince(started))
    }
}

/// One line of counts; long runs are recorded in RELIABILITY.md from these.
func printConvergenceStats(_ label: String, shardSeconds: Double? = nil) {
    let stats = convergenceStats.current
    let elapsed = Date().timeIntervalSince(convergenceStarted)
    var line =
        "convergence (\(label)): \(stats.histories) histories, \(stats.steps) steps, \(stats.cuts) sessions cut, "
        + "\(stats.jumps) clock jumps, \(stats.resets) clock resets (\(stats.restamps) versions restamped), "
        + "\(stats.gcRuns) gc runs (\(stats.forcedGCs) forced, \(stats.gcRefused) more refused), "
        + "\(stats.dropped) tombstones dropped, \(stats.reconciliations) full reconciliations "
        + "(\(stats.reconciled) items deleted), \(stats.refusedBelowForcedHorizon) items left out below "
        + "a forced gc's horizon, "
        + "\(stats.conflicts) open conflicts at the end, \(stats.divergent) divergent nodes"
    if stats.skipped > 0 { line += ", \(stats.skipped) skipped after the HP_SYNC_HISTORY_SECONDS budget" }
    if let shardSeconds { line += ", shard \(String(format: "%.1f", shardSeconds)) s" }
    print(line + ", \(String(format: "%.1f", elapsed)) s since the first shard started")
}
