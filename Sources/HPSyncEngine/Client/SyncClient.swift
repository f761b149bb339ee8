import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// The client side of a session: says Hello, then pulls (acts as sink) or pushes (acts as
/// source), and waits for the server's Done.
public final class SyncClient {
    let store: Store
    private let logger: Logger
    private let testHooks: EngineTestHooks

    public convenience init(store: Store, logger: Logger) {
        self.init(store: store, logger: logger, testHooks: EngineTestHooks())
    }

    /// The same, with `testHooks` making the client an older or faulty peer (tests only).
    init(store: Store, logger: Logger, testHooks: EngineTestHooks) {
        self.store = store
        self.logger = logger
        self.testHooks = testHooks
    }

    /// Pulls the server's changes over a session `connect` opens. The pull's image check
    /// (`Store.findMissingImages`: a query and a `stat` per image file, no write) runs meanwhile
    /// on a thread of its own, from `plan.imageScan` when the caller started it earlier: the
    /// TCP connect, the TLS handshake and the Hellos overlap it instead of waiting behind it.
    public func pull(
        connecting connect: () throws -> any MessageChannel, serverNodeID: NodeID, peerName: String,
        plan: SyncPlan = .init()
    ) throws -> SyncReport {
        try pull(connecting: connect, serverNodeID: serverNodeID, peerName: peerName, plan: plan, asksFirst: false)
    }

    /// The same; with `asksFirst`, the session applies only if the plan's mass-deletion guard
    /// lets the tombstones the server announces through, else it only previews (`SyncRun`).
    func pull(
        connecting connect: () throws -> any MessageChannel, serverNodeID: NodeID, peerName: String,
        plan: SyncPlan, asksFirst: Bool
    ) throws -> SyncReport {
        let store = store
        let scan = plan.dryRun ? nil : (plan.imageScan?.take() ?? BackgroundResult { try store.findMissingImages() })
        return try pull(
            over: connect(), serverNodeID: serverNodeID, peerName: peerName, plan: plan, scan: scan,
            asksFirst: asksFirst)
    }

    /// Pulls the server's changes over `channel`; `serverNodeID` is what TLS authenticated.
    public func pull(
        over channel: any MessageChannel, serverNodeID: NodeID, peerName: String, plan: SyncPlan = .init()
    ) throws -> SyncReport {
        try pull(over: channel, serverNodeID: serverNodeID, peerName: peerName, plan: plan, scan: nil, asksFirst: false)
    }

    private func pull(
        over channel: any MessageChannel, serverNodeID: NodeID, peerName: String, plan: SyncPlan,
        scan: BackgroundResult<[ItemKey]>?, asksFirst: Bool
    ) throws -> SyncReport {
        let started = ContinuousClock.now
        var report = SyncReport(direction: .pull, peer: peerName)
        let server = try begin(
            &report, channel, intent: .pull, serverNodeID: serverNodeID, peerName: peerName, plan: plan)
        // Images this store lost or found damaged come first, by digest, from a version-3 server
        // (Protocol.md §5.7): a pull heals what the manifest would never resend. Files gone or
        // of the wrong size since are found here cheaply (no hashing; rot is `verify`'s).
        if !plan.dryRun, server.version >= ProtocolLimits.imagesByDigestVersion {
            try store.rememberMissingImages(try scan.map { try $0.wait() } ?? store.findMissingImages())
            let wanted = try store.imagesToHeal()
            if !wanted.isEmpty {
                try ImageHealer(channel: channel, store: store, logger: logger).run(wanted, into: &report)
            }
        }
        let since = try store.checkpoint(peerStore: server.storeID, direction: .pull)
        try channel.send(.pullRequest(checkpointStore: server.storeID, sinceSeq: since))
        let peer = SinkSession.Peer(
            source: (server.storeID, server.nodeID), version: server.version, name: peerName,
            clockSkew: report.clockSkew)
        let sink = SinkSession(
            channel: channel, store: store, plan: plan, peer: peer, checkpoint: (server.storeID, .pull),
            asksBeforeApplying: asksFirst, logger: logger)
        try telling(channel) { try sink.run(into: &report) }
        report.peerCounts = try receiveDone(channel)
        finish(&report, channel: channel, started: started)
        return report
    }

    /// Fetches `wanted` (images this store names but does not hold intact) from the server by
    /// digest and ends the session without pulling (`verify --repair --from`). Needs a
    /// version-3 server: it offers only version 3, so an older one refuses the Hello.
    package func repairImages(
        _ wanted: [ImageToHeal], over channel: any MessageChannel, serverNodeID: NodeID, peerName: String
    ) throws -> SyncReport {
        let started = ContinuousClock.now
        var report = SyncReport(direction: .pull, peer: peerName)
        _ = try handshake(
            channel, intent: .pull, serverNodeID: serverNodeID, plan: SyncPlan(),
            minVersion: ProtocolLimits.imagesByDigestVersion)
        try ImageHealer(channel: channel, store: store, logger: logger).run(wanted, into: &report)
        try channel.send(.endSession)
        report.peerCounts = try receiveDone(channel)
        finish(&report, channel: channel, started: started)
        return report
    }

    /// Pushes local changes the server has not confirmed yet.
    public func push(
        over channel: any MessageChannel, serverNodeID: NodeID, peerName: String, plan: SyncPlan = .init()
    )
        throws -> SyncReport
    {
        let started = ContinuousClock.now
        var report = SyncReport(direction: .push, peer: peerName)
        let server = try begin(
            &report, channel, intent: .push, serverNodeID: serverNodeID, peerName: peerName, plan: plan)
        // What was offered before counts only if this store still has that history; the server
        // skips what it has when everything is offered again.
        try SourceSession.restampJoinedItems(
            forSinkOf: server.version, store: store, dryRun: plan.dryRun, logger: logger)
        let recorded = try store.checkpoint(peerStore: server.storeID, direction: .push)
        let start = try ListingStart.decide(for: store, checkpoint: recorded, version: server.version)
        if case .needsReconciliation(let horizon) = start {
            let message = ListingStart.refusal(
                horizon: horizon, source: "this store", sink: "server \(peerName)", upgrade: "a server")
            try? channel.send(.error(PeerErrorMessage(code: .incompatibleVersion, message: message)))
            channel.close()
            throw SyncError.needsReconciliation(peer: peerName, detail: message)
        }
        let source = SourceSession(
            channel: channel, store: store, version: server.version, logger: logger, testHooks: testHooks)
        // Every key changed after `since` is one manifest entry, and the live ones' images are
        // what may cross: the totals behind the ETA.
        let total = plan.progress == nil ? nil : try store.feedCounts(after: start.since)
        var serverCounts = ChangeCounts()
        var refusals: [PageRefusal] = []
        var checkpoint = PushCheckpoint(version: server.version)
        try telling(channel) {
            try source.run(from: start, into: &report) { acknowledgement in
                serverCounts = acknowledgement.counts
                refusals += acknowledgement.refusals
                plan.progress?(
                    SyncProgress(
                        pushed: acknowledgement.counts, bytes: channel.bytesSent + channel.bytesReceived,
                        totalEntries: total.map { Int($0.entries) }, totalImageBytes: total?.imageBytes))
                if !plan.dryRun, let seq = checkpoint.advance(acknowledgement) {
                    try store.setCheckpoint(CheckpointUpdate(peerStore: server.storeID, direction: .push, seq: seq))
                }
            }
        }
        _ = try receiveDone(channel)
        report.peerCounts = serverCounts
        if plan.dryRun {
            // Nothing crossed: what would is the images the server would have fetched.
            (report.imagesTransferred, report.imageBytes) = (serverCounts.images, serverCounts.imageBytes)
        }
        let wording = PushRefusalText(
            peer: peerName, localNode: store.nodeID, clockSkew: report.clockSkew,
            serverMilliseconds: server.clockMilliseconds ?? store.nowMilliseconds(),
            maxSkewMilliseconds: store.maxClockSkewMilliseconds)
        refusals = try wording.reword(refusals, store: store)
        report.refused += refusals.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
        // An older server counts what it refused without naming it.
        report.refused.countUnlisted(serverCounts.refused - report.refused.count)
        finish(&report, channel: channel, started: started)
        return report
    }

    /// Redeems an invitation: says Hello with INTENT_JOIN (version 2), proves the secret, and
    /// returns what the server granted. `serverNodeID` is what TLS authenticated, so the secret
    /// only ever goes to the server the invitation names. Ends the session (Protocol.md §5.5).
    public func join(
        over channel: any MessageChannel, serverNodeID: NodeID, secret: InvitationSecret, suggestedName: String,
        software: String = SyncPlan().software
    ) throws -> JoinResult {
        defer { channel.close() }
        var plan = SyncPlan()
        plan.software = software
        let server = try handshake(channel, intent: .join, serverNodeID: serverNodeID, plan: plan)
        try channel.send(.joinRequest(JoinRequestMessage(secret: secret, name: suggestedName)))
        let reply = try channel.receiveMessage(expecting: "JoinAccepted")
        switch reply {
        case .joinAccepted(let allow, let name):
            return JoinResult(allow: allow, name: name, serverIsBlind: server.blind)
        case .error(let error): throw SyncError.refusedByPeer(error)
        default: throw SyncError.protocolViolation(.unexpectedMessage(got: reply.name, expected: "JoinAccepted"))
        }
    }

    /// Says, before any record is judged, when the server's clock and ours differ by more than
    /// the skew: which is ahead of which (the report carries it to the user).
    /// What a pull and a push start with: the handshake, and the report told the dry run and
    /// how the clocks compare.
    private func begin(
        _ report: inout SyncReport, _ channel: any MessageChannel, intent: SyncIntent, serverNodeID: NodeID,
        peerName: String, plan: SyncPlan
    ) throws -> HelloMessage {
        report.dryRun = plan.dryRun
        let exchange = InventoryKeyExchange(store: store, logger: logger)
        let trusted = exchange.trustedPeer(named: peerName)
        let own = trusted ? exchange.ownKey() : nil
        let server = try handshake(
            channel, intent: intent, serverNodeID: serverNodeID, plan: plan, inventoryKey: own?.bytes)
        report.clockSkew = compareClocks(server, peerName: peerName)
        if trusted, server.version >= ProtocolLimits.blindVersion {
            exchange.adopt(server.inventoryKey, from: peerName, own: own)
        }
        return server
    }

    private func compareClocks(_ server: HelloMessage, peerName: String) -> ClockSkew? {
        let skew = ClientHandshake.clockSkew(
            server: server, peerName: peerName, localMilliseconds: store.nowMilliseconds(),
            skewMilliseconds: store.maxClockSkewMilliseconds)
        // The command prints it with the session's outcome; the log keeps it for --log-level info.
        if let skew { logger.info("\(skew.warning())") }
        return skew
    }

    /// Runs one side of the transfer; when it fails on this side (the peer broke the protocol,
    /// sent bad data, or a guard stopped the session), tells the peer why with an Error before
    /// the connection closes, so its log says what happened (Protocol.md 8).
    private func telling(_ channel: any MessageChannel, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            if let message = PeerErrorMessage(endingSessionFor: error) {
                try? channel.send(.error(message))
                // The server may still be sending (the rest of an oversized frame, chunks): a
                // close with them unread could reset the connection before it reads the Error.
                channel.closeAfterDraining(for: .seconds(2))
            }
            throw error
        }
    }

    private func handshake(
        _ channel: any MessageChannel, intent: SyncIntent, serverNodeID: NodeID, plan: SyncPlan,
        minVersion: UInt32 = ProtocolLimits.minVersion, inventoryKey: [UInt8]? = nil
    ) throws -> HelloMessage {
        var hello = ClientHandshake.hello(
            intent: intent, dryRun: plan.dryRun, nodeID: store.nodeID, storeID: store.storeID,
            software: plan.software, clockMilliseconds: store.nowMilliseconds(), minVersion: minVersion,
            maxVersion: testHooks.maxVersion)
        hello.inventoryKey = inventoryKey
        try channel.send(.hello(hello))
        let reply = try channel.receiveMessage(expecting: "Hello")
        switch ClientHandshake.decide(reply: reply, to: hello, serverNodeID: serverNodeID) {
        case .accept(let server): return server
        case .refuse(let error): throw error
        }
    }

    private func receiveDone(_ channel: any MessageChannel) throws -> ChangeCounts {
        let message = try channel.receiveMessage(expecting: "Done")
        switch message {
        case .done(let counts): return counts
        case .error(let error): throw SyncError.refusedByPeer(error)
        default: throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "Done"))
        }
    }

    private func finish(_ report: inout SyncReport, channel: any MessageChannel, started: ContinuousClock.Instant) {
        report.bytesSent = channel.bytesSent
        report.bytesReceived = channel.bytesReceived
        report.seconds = (ContinuousClock.now - started).seconds
        channel.close()
    }
}

/// What a server granted a joiner: its permission there and the name it is listed under.
public struct JoinResult: Sendable, Equatable {
    public var allow: PeerPermission
    public var name: String
    /// The server said (version 4) that its store is blind.
    public var serverIsBlind = false
}

/// The version this build reports in Hello and `--version`.
public enum HPSyncVersion {
    public static let current = "0.1.0"
}
