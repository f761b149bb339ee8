import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging

/// Serves one authenticated connection: checks the client's Hello against the peer list,
/// then acts as source (the client pulls) or sink (the client pushes). Never throws: every
/// failure is reported to the client as an Error message and logged.
public final class ServerSession {
    private let store: Store
    private let logger: Logger
    private let shouldStop: @Sendable () -> Bool
    private let software: String

    public init(
        store: Store, logger: Logger, software: String = "hp-sync \(HPSyncVersion.current)",
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.store = store
        self.logger = logger
        self.software = software
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
            let (hello, peer, version) = try accept(channel, certificateNodeID: certificateNodeID)
            log[metadataKey: "peer"] = "\(peer.name)"
            var current = SyncReport(direction: hello.intent, peer: peer.name)
            defer { report = current }
            switch hello.intent {
            case .pull: try servePull(channel, version: version, report: &current, logger: log)
            case .push: try servePush(channel, version: version, report: &current, logger: log)
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
                    "bytes_sent": "\(current.bytesSent)", "bytes_received": "\(current.bytesReceived)",
                    "seconds": "\(String(format: "%.3f", current.seconds))",
                ])
        } catch {
            reportFailure(error, on: channel, logger: log)
        }
        return report
    }

    private func accept(_ channel: any MessageChannel, certificateNodeID: NodeID) throws -> (
        HelloMessage, Peer, version: UInt32
    ) {
        let first = try channel.receiveMessage(expecting: "Hello")
        guard case .hello(let hello) = first else {
            throw SyncError.protocolViolation(.unexpectedMessage(got: first.name, expected: "Hello"))
        }
        let peer = try store.peer(nodeID: certificateNodeID)
        let decision = ServerHandshake.decide(
            hello: hello, certificateNodeID: certificateNodeID, peer: peer, serverNodeID: store.nodeID,
            serverStoreID: store.storeID, software: software)
        switch decision {
        case .accept(let reply):
            try channel.send(.hello(reply))
            return (hello, peer!, reply.version)
        case .refuse(let error):
            try? channel.send(.error(error))
            throw ServerRefusal(error: error)
        }
    }

    private func servePull(_ channel: any MessageChannel, version: UInt32, report: inout SyncReport, logger: Logger)
        throws
    {
        let request = try channel.receiveMessage(expecting: "PullRequest")
        guard case .pullRequest(let checkpointStore, let since) = request else {
            throw SyncError.protocolViolation(.unexpectedMessage(got: request.name, expected: "PullRequest"))
        }
        // A checkpoint beyond our highest seq means this store lost history (restored from an
        // older copy): its seqs will be reused, so the client must read everything again.
        let highest = try store.lastSeq
        let start = checkpointStore == store.storeID && since <= highest ? since : 0
        let source = SourceSession(
            channel: channel, store: store, version: version, logger: logger, shouldStop: shouldStop)
        var sinkCounts = ChangeCounts()
        try source.run(since: start, into: &report) { _, counts in sinkCounts = counts }
        report.peerCounts = sinkCounts
        var done = ChangeCounts()
        done.entries = report.manifestEntries
        done.records = report.recordsTransferred
        done.images = report.imagesTransferred
        done.imageBytes = report.imageBytes
        try channel.send(.done(done))
    }

    private func servePush(_ channel: any MessageChannel, version: UInt32, report: inout SyncReport, logger: Logger)
        throws
    {
        let sink = SinkSession(channel: channel, store: store, options: .init(version: version), logger: logger)
        try sink.run(into: &report)
        try channel.send(.done(report.counts))
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
            let code: WireErrorCode
            switch error {
            case let syncError as SyncError: code = syncError.wireCode
            case let protocolError as ProtocolError: code = protocolError.code
            case let storeError as StoreError: code = storeError.wireCode
            default: code = .internalError
            }
            let message = code == .internalError && !(error is StoreError) ? "server error: \(error)" : "\(error)"
            try? channel.send(.error(PeerErrorMessage(code: code, message: message)))
            logger.warning("session failed", metadata: ["error": "\(error)"])
        }
    }
}

/// The server ended the session (refused the Hello, or stopped for shutdown); the client was
/// already told.
struct ServerRefusal: Error {
    let error: PeerErrorMessage
}
