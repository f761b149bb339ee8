import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Serves one authenticated connection: checks the client's Hello against the peer list,
/// then acts as source (the client pulls) or sink (the client pushes). Never throws: every
/// failure is reported to the client as an Error message and logged.
public final class ServerSession {
    let store: Store
    private let logger: Logger
    private let shouldStop: @Sendable () -> Bool
    private let software: String
    private let preAuthorizationDeadline: ContinuousClock.Instant?
    /// Set by the handshake when the client's clock and ours differ by more than the skew.
    private var clockSkew: ClockSkew?
    private let testHooks: EngineTestHooks
    private let admit: (NodeID) -> Admission.Refusal?
    /// How long the versions a received push deletes or overwrites stay in the trash
    /// (milliseconds; 0 keeps none). Older trash is purged after each push.
    private let keepDeletedMilliseconds: Int64

    /// - Parameters:
    ///   - preAuthorizationDeadline: when every frame the client sends before it is authorized
    ///     (its Hello, and a join's JoinRequest) must have arrived; nil for no limit.
    ///   - admit: asked once the Hello is accepted, for a session slot of the client's node ID;
    ///     a refusal (every slot, or that node's share, taken) means the client is told
    ///     ERROR_BUSY instead of the server's Hello.
    ///   - keepDeletedMilliseconds: the trash retention for what received pushes replace.
    public convenience init(
        store: Store, logger: Logger, software: String = "hp-sync \(HPSyncVersion.current)",
        preAuthorizationDeadline: ContinuousClock.Instant? = nil,
        admit: @escaping (NodeID) -> Admission.Refusal? = { _ in nil },
        shouldStop: @escaping @Sendable () -> Bool = { false }, keepDeletedMilliseconds: Int64 = 0
    ) {
        self.init(
            store: store, logger: logger, software: software, preAuthorizationDeadline: preAuthorizationDeadline,
            admit: admit, shouldStop: shouldStop, keepDeletedMilliseconds: keepDeletedMilliseconds,
            testHooks: EngineTestHooks())
    }

    /// The same, with `testHooks` making the session a faulty peer (tests only).
    init(
        store: Store, logger: Logger, software: String = "hp-sync \(HPSyncVersion.current)",
        preAuthorizationDeadline: ContinuousClock.Instant? = nil,
        admit: @escaping (NodeID) -> Admission.Refusal? = { _ in nil },
        shouldStop: @escaping @Sendable () -> Bool = { false }, keepDeletedMilliseconds: Int64 = 0,
        testHooks: EngineTestHooks
    ) {
        self.testHooks = testHooks
        self.admit = admit
        self.keepDeletedMilliseconds = keepDeletedMilliseconds
        self.store = store
        self.logger = logger
        self.software = software
        self.preAuthorizationDeadline = preAuthorizationDeadline
        self.shouldStop = shouldStop
    }

    /// Runs the session to its end and returns what happened (also logged as one line).
    @discardableResult
    public func serve(_ channel: any MessageChannel, certificateNodeID: NodeID) -> SyncReport? {
        let started = ContinuousClock.now
        var log = logger
        log[metadataKey: "peer"] = "\(certificateNodeID.short)"
        defer { channel.close() }
        var report: SyncReport?
        do {
            let (hello, known, version) = try accept(channel, certificateNodeID: certificateNodeID)
            if hello.intent == .blind, let peer = known {
                log[metadataKey: "peer"] = "\(peer.name)"
                try serveBlind(channel, peer: peer, started: started, logger: log)
                return nil
            }
            guard let direction = hello.intent.direction, let peer = known else {
                try serveJoin(channel, joiner: certificateNodeID, logger: log)
                return nil
            }
            log[metadataKey: "peer"] = "\(peer.name)"
            var current = SyncReport(direction: direction, peer: peer.name)
            defer { report = current }
            var synced = true
            switch direction {
            case .pull: synced = try servePull(channel, version: version, report: &current, logger: log)
            case .push:
                let source = (store: hello.storeID, node: certificateNodeID)
                current.dryRun = hello.dryRun
                try servePush(channel, source: source, version: version, report: &current, logger: log)
            }
            // What `status` shows and what bounds `gc`: when each peer last synced with us (a
            // preview is not a sync, nor is a session that only fetched images by digest).
            do {
                if !current.dryRun && synced {
                    try store.recordServed(
                        peer: peer.name, direction: direction, peerClock: clockSkew?.peerMilliseconds)
                }
            } catch {
                log.warning("could not record the session for status", metadata: ["error": "\(error)"])
            }
            current.bytesSent = channel.bytesSent
            current.bytesReceived = channel.bytesReceived
            current.seconds = (ContinuousClock.now - started).seconds
            // For a pull the client applied the changes; its PageDone counts say what happened.
            let applied = current.direction == .pull ? current.peerCounts : current.counts
            log.info(
                "session done",
                metadata: [
                    "direction": "\(current.direction.rawValue)", "entries": "\(current.manifestEntries)",
                    "records": "\(current.recordsTransferred)", "images": "\(current.imagesTransferred)",
                    "inserted": "\(applied.inserted)", "updated": "\(applied.updated)", "deleted": "\(applied.deleted)",
                    "refused": "\(applied.refused)",
                    "bytes_sent": "\(current.bytesSent)", "bytes_received": "\(current.bytesReceived)",
                    "seconds": "\(String(format: "%.3f", current.seconds))",
                ])
        } catch {
            reportFailure(error, on: channel, logger: log)
        }
        return report
    }

    /// Reads and answers the Hello; the peer entry is nil only for a join by an unknown node.
    private func accept(_ channel: any MessageChannel, certificateNodeID: NodeID) throws -> (
        HelloMessage, Peer?, version: UInt32
    ) {
        // An unauthenticated peer must not hold a slot by trickling bytes, nor make us reserve
        // a full message buffer.
        channel.limitNextFrame(maxBytes: ProtocolLimits.maxHelloBytes, deadline: preAuthorizationDeadline)
        let first = try channel.receiveMessage(expecting: "Hello")
        guard case .hello(let hello) = first else {
            throw SyncError.protocolViolation(.unexpectedMessage(got: first.name, expected: "Hello"))
        }
        let peer = try store.peer(nodeID: certificateNodeID)
        let decision = ServerHandshake.decide(
            hello: hello, certificateNodeID: certificateNodeID, peer: peer, serverNodeID: store.nodeID,
            serverStoreID: store.storeID, software: software, clockMilliseconds: store.nowMilliseconds(),
            serverIsBlind: isBlind,
            // Only a node too old to read packs needs the answer: the packs folder is not listed
            // for every other session.
            blindHoldsPacks: isBlind && hello.intent == .blind
                && hello.maxVersion < ProtocolLimits.blindPacksVersion && store.holdsSealedPacks)
        switch decision {
        case .accept(var reply):
            if let refusal = admit(certificateNodeID) {
                let busy = ServerRefusal.busy(refusal)
                try? channel.send(.error(busy))
                throw ServerRefusal(error: busy)
            }
            if let peer, !isBlind {
                reply.inventoryKey = InventoryKeyExchange(store: store, logger: logger).answer(
                    hello, version: reply.version, peer: peer)
            }
            try channel.send(.hello(reply))
            clockSkew = ClockSkew(
                peer: peer.map { "peer \($0.name)" } ?? "node \(certificateNodeID.short)",
                localMilliseconds: reply.clockMilliseconds ?? store.nowMilliseconds(),
                peerMilliseconds: hello.clockMilliseconds, skewMilliseconds: store.maxClockSkewMilliseconds)
            if let clockSkew { logger.warning("\(clockSkew.warning(me: "this server"))") }
            return (hello, peer, reply.version)
        case .refuse(let error):
            try? channel.send(.error(error))
            throw ServerRefusal(error: error)
        }
    }

    /// Whether this server's store is blind (read once: it never changes after `init`).
    private lazy var isBlind = store.isBlind

    /// Serves a blind store's session and logs what it did.
    private func serveBlind(_ channel: any MessageChannel, peer: Peer, started: ContinuousClock.Instant, logger: Logger)
        throws
    {
        let session = BlindServerSession(
            channel: channel, store: store, peer: peer, logger: logger, shouldStop: shouldStop,
            writerWait: testHooks.blindWriterWait)
        try session.run()
        let counts = session.counts
        do {
            let direction: SyncDirection = counts.stored + counts.photosStored > 0 ? .push : .pull
            try store.recordServed(peer: peer.name, direction: direction, peerClock: clockSkew?.peerMilliseconds)
        } catch {
            logger.warning("could not record the session for status", metadata: ["error": "\(error)"])
        }
        logger.info(
            "blind session done",
            metadata: [
                "listed": "\(counts.listed)", "sent": "\(counts.sent)", "photos_sent": "\(counts.photosSent)",
                "stored": "\(counts.stored)", "stale": "\(counts.stale)", "photos_stored": "\(counts.photosStored)",
                "photo_bytes": "\(counts.bytes)",
                "bytes_sent": "\(channel.bytesSent)", "bytes_received": "\(channel.bytesReceived)",
                "seconds": "\(String(format: "%.3f", (ContinuousClock.now - started).seconds))",
            ])
    }

    /// Redeems the client's invitation and answers JoinAccepted, its last message (Protocol.md §5.5).
    private func serveJoin(_ channel: any MessageChannel, joiner: NodeID, logger: Logger) throws {
        channel.limitNextFrame(maxBytes: ProtocolLimits.maxHelloBytes, deadline: preAuthorizationDeadline)
        let message = try channel.receiveMessage(expecting: "JoinRequest")
        let request: JoinRequestMessage
        switch message {
        case .joinRequest(let received): request = received
        case .error(let error): throw SyncError.refusedByPeer(error)
        default: throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "JoinRequest"))
        }
        let peer: Peer
        do {
            peer = try store.redeemInvitation(request.secret, joiner: joiner, suggestedName: request.name)
        } catch let refusal as InvitationRefusal {
            let error = PeerErrorMessage(code: .invitation, message: refusal.description)
            try? channel.send(.error(error))
            throw ServerRefusal(error: error)
        }
        try channel.send(.joinAccepted(allow: peer.permission, name: peer.name))
        logger.notice(
            "peer joined with an invitation",
            metadata: ["name": "\(peer.name)", "allow": "\(peer.permission.rawValue)", "node": "\(joiner)"])
    }

    /// Serves a pull; false when the client only asked for images by digest (EndSession).
    private func servePull(_ channel: any MessageChannel, version: UInt32, report: inout SyncReport, logger: Logger)
        throws -> Bool
    {
        let first = try channel.receiveMessage(expecting: "PullRequest")
        guard
            let request = try serveImagesByDigest(
                first, channel: channel, version: version, report: &report, logger: logger)
        else {
            try channel.send(.done(Self.sourceCounts(report)))
            return false
        }
        guard case .pullRequest(let checkpointStore, let since) = request else {
            throw SyncError.protocolViolation(.unexpectedMessage(got: request.name, expected: "PullRequest"))
        }
        try SourceSession.restampJoinedItems(forSinkOf: version, store: store, dryRun: report.dryRun, logger: logger)
        let start = try ListingStart.decide(
            for: store, checkpoint: checkpointStore == store.storeID ? since : nil, version: version)
        if case .needsReconciliation(let horizon) = start {
            let refusal = PeerErrorMessage(
                code: .incompatibleVersion,
                message: ListingStart.refusal(
                    horizon: horizon, source: "this server", sink: "this client", upgrade: "a client"))
            try? channel.send(.error(refusal))
            throw ServerRefusal(error: refusal)
        }
        let source = SourceSession(
            channel: channel, store: store, version: version, logger: logger, shouldStop: shouldStop,
            testHooks: testHooks)
        var sinkCounts = ChangeCounts()
        var refusals: [PageRefusal] = []
        try source.run(from: start, into: &report) { acknowledgement in
            sinkCounts = acknowledgement.counts
            refusals += acknowledgement.refusals
        }
        report.refused += refusals.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
        // The operator sees why a client did not take some records (a clock on either side).
        for refusal in report.refused.kept.prefix(10) {
            logger.notice(
                "client refused a record", metadata: ["key": "\(refusal.key)", "reason": "\(refusal.reason)"])
        }
        report.peerCounts = sinkCounts
        try channel.send(.done(Self.sourceCounts(report)))
        return true
    }

    /// A source's Done: what it sent.
    private static func sourceCounts(_ report: SyncReport) -> ChangeCounts {
        var done = ChangeCounts()
        done.entries = report.manifestEntries
        done.records = report.recordsTransferred
        done.images = report.imagesTransferred
        done.imageBytes = report.imageBytes
        return done
    }

    private func servePush(
        _ channel: any MessageChannel, source: (store: StoreID, node: NodeID), version: UInt32,
        report: inout SyncReport, logger: Logger
    ) throws {
        // The server makes the push's plan from the client's Hello and its own trash policy.
        var plan = SyncPlan()
        plan.dryRun = report.dryRun
        plan.keepDeletedMilliseconds = keepDeletedMilliseconds
        // The reasons go to the pushing client: "the server" is who refused.
        let skew = clockSkew.map {
            var skew = $0
            skew.peer = "the client"
            return skew
        }
        let peer = SinkSession.Peer(source: source, version: version, clockSkew: skew, me: "the server")
        // What a push replaces is kept as a pull keeps it: a version never vanishes silently
        // from the node that made it.
        let keep = plan.keepsReplaced
        let sink = SinkSession(channel: channel, store: store, plan: plan, peer: peer, checkpoint: nil, logger: logger)
        try sink.run(into: &report)
        try channel.send(.done(report.counts))
        if keep {
            do {
                try store.purgeTrash(olderThanMilliseconds: keepDeletedMilliseconds)
            } catch {
                logger.warning("could not purge the trash", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Tells the client why the session ends (unless the client ended it) and logs it.
    private func reportFailure(_ error: any Error, on channel: any MessageChannel, logger: Logger) {
        switch error {
        case let refusal as ServerRefusal:
            logger.notice("session refused", metadata: ["reason": "\(refusal.error.message)"])
        case ProtocolError.prematureEOF(expected: "Hello"):
            // First contact (`pull HOST` learning our node ID) hangs up right after the handshake.
            logger.info("client closed before Hello (first contact or probe)")
        case SyncError.refusedByPeer(let peerError):
            logger.notice("client ended the session", metadata: ["reason": "\(peerError.message)"])
        default:
            var code = WireErrorCode.internalError
            if var message = PeerErrorMessage(endingSessionFor: error) {
                code = message.code
                switch error {
                case StoreError.diskFull:
                    // The client's user cannot free the space, and our paths are none of its business.
                    message.message =
                        "the server's disk is full (no space left where its store is); nothing half-done was kept, "
                        + "and the next run resumes from the last committed page once the server's administrator "
                        + "frees space"
                case is StoreError: break
                default: if code == .internalError { message.message = "server error: \(error)" }
                }
                try? channel.send(.error(message))
                // A client in the middle of a push may have megabytes in flight (image chunks, the
                // rest of an oversized frame); closing with them unread makes the kernel answer
                // with a reset, which can overtake the Error, and the client would say "connection
                // reset" instead of (say) "disk full" or "chunk over the limit" (Protocol.md §8).
                channel.closeAfterDraining(for: .seconds(2))
            }
            logger.warning("session failed", metadata: ["error": "\(error)", "code": "\(code)"])
        }
    }
}
