import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// A blind peer seen through the inventory key: a `MessageChannel` that a `SyncClient` pulls
/// from or pushes to exactly as it would a trusted server, while this side speaks INTENT_BLIND
/// to the blind store over `remote` and seals or opens everything on the way (Protocol.md 5.8).
///
/// The client's Hello is answered as a version-5 server would, without the inventory key (the
/// blind store's node ID and store ID, so checkpoints count in its sequence; version 5 so the
/// local sink joins what it opens field by field, Protocol.md 5.9); before that, the mirror of the blind store
/// is brought up to date and checked against the head, so a rollback or a withheld entry stops
/// the session before anything is applied or sent.
public final class BlindPeerChannel: MessageChannel {
    private let remote: BlindRemote
    private let store: Store
    private let seal: BlindRecordSeal
    private let peer: Peer
    private let logger: Logger
    private let software: String
    private let testHooks: EngineTestHooks
    private let out = BlindOutbox()
    /// The local session's other side, once the Hello has said which.
    private var side: Side?

    private enum Side {
        case source(BlindSource)
        case sink(BlindSink)
        case packSource(BlindPackSource)
        case packSink(BlindPackSink)
    }

    /// What failed checks or was not served before the session's side was chosen (a push's
    /// indexing of the packs the head names).
    private var earlyFindings: [String] = []

    /// - Parameters:
    ///   - remote: the connection to the blind store (TLS, its node ID pinned).
    ///   - key: this inventory's key.
    ///   - peer: the blind peer as this store lists it.
    public convenience init(
        remote channel: any MessageChannel, store: Store, key: InventoryKey, peer: Peer, logger: Logger,
        software: String = "hp-sync \(HPSyncVersion.current)"
    ) {
        self.init(
            remote: channel, store: store, key: key, peer: peer, logger: logger, software: software, testHooks: .init())
    }

    /// The same, with `testHooks.maxVersion` the highest version offered to the blind store
    /// (tests talk to it as a version-4 node would).
    init(
        remote channel: any MessageChannel, store: Store, key: InventoryKey, peer: Peer, logger: Logger,
        software: String = "hp-sync \(HPSyncVersion.current)", testHooks: EngineTestHooks
    ) {
        self.testHooks = testHooks
        self.remote = BlindRemote(channel: channel, peerName: peer.name)
        self.store = store
        self.seal = BlindRecordSeal(keys: BlindKeys(key))
        self.peer = peer
        self.logger = logger
        self.software = software
    }

    /// What failed authentication during the session (the rest was applied): a pull's caller
    /// turns it into `BlindError.tampered` once the report is out.
    public var findings: [String] {
        switch side {
        case .source(let source): source.findings
        case .packSource(let source): source.findings
        case .sink, .packSink, nil: earlyFindings
        }
    }

    /// The blind peer's name here.
    public var peerName: String { peer.name }

    public func send(_ message: Message) throws {
        switch message {
        case .hello(let hello): try start(hello)
        case .error(let error):
            try? remote.channel.send(.error(error))
            remote.channel.close()
        default:
            switch side {
            case .source(let source): try source.handle(message)
            case .sink(let sink): try sink.handle(message)
            case .packSource(let source): try source.handle(message)
            case .packSink(let sink): try sink.handle(message)
            case nil: throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "Hello"))
            }
        }
    }

    public func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws {
        switch side {
        case .sink(let sink): try sink.chunk(bytes)
        case .packSink(let sink): try sink.chunk(bytes)
        case .source, .packSource, nil:
            throw SyncError.protocolViolation(.unexpectedMessage(got: "IMAGE_CHUNK", expected: "a pull's request"))
        }
    }

    public func receive(expecting: String) throws -> IncomingFrame {
        guard let frame = try out.next() else {
            // The local session waits for an answer nobody queued: a bug on this side.
            throw SyncError.protocolViolation(
                .violation("the blind peer's local side has nothing to say (\(expecting))"))
        }
        if case .message(.done) = frame { remote.end() }
        return frame
    }

    public var bytesSent: Int64 { remote.channel.bytesSent }
    public var bytesReceived: Int64 { remote.channel.bytesReceived }

    public func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {}

    public func close() {
        out.close()
        remote.channel.close()
    }

    /// Says Hello to the blind store, checks its head (and the mirror of a version-4 store), and
    /// answers the local Hello.
    private func start(_ hello: HelloMessage) throws {
        guard hello.intent == .pull || hello.intent == .push else {
            throw SyncError.protocolViolation(.violation("a blind peer is only pulled from or pushed to"))
        }
        let host = try remote.handshake(
            store: store, serverNodeID: peer.nodeID, software: software, maxVersion: testHooks.maxVersion)
        if try holdsPacks(host) {
            try startPacks(hello, host: host)
        } else if host.version >= ProtocolLimits.blindPacksVersion && hello.intent == .push && !hello.dryRun {
            // A store of entries behind a host that keeps packs: this push converts it.
            let lost = try BlindMirrorSync(context: context(host)).convertToPacks()
            try startPacks(hello, host: host, findings: lost)
        } else {
            try startEntries(hello, host: host)
        }
        let version = min(hello.maxVersion, ProtocolLimits.fieldMergeVersion)
        out.message(
            .hello(
                HelloMessage(
                    nodeID: host.nodeID, storeID: host.storeID, intent: hello.intent, version: version,
                    software: host.software, clockMilliseconds: host.clockMilliseconds)))
    }

    /// Whether the blind store keeps (or will keep) this inventory in packs: a host of version 6
    /// whose head is empty or of format 2. A version-4 store (a head of format 1, or an older
    /// host) is read as entries, and written as entries behind an older host (Protocol.md 5.8);
    /// a push converts it behind a version-6 host.
    private func holdsPacks(_ host: HelloMessage) throws -> Bool {
        guard host.version >= ProtocolLimits.blindPacksVersion else { return false }
        let served = try remote.head()
        guard served.epoch > 0 else { return true }
        do {
            return try BlindHead.plaintext(of: served, keys: seal.keys, store: host.storeID).first != 1
        } catch {
            throw BlindError.tampered(peer: peer.name, details: ["\(error)"])
        }
    }

    /// - Parameter earlier: what a conversion just now could not carry over.
    private func startPacks(_ hello: HelloMessage, host: HelloMessage, findings earlier: [String] = []) throws {
        let context = context(host)
        let sync = BlindPackSync(context: context)
        let pushing = hello.intent == .push
        var (catalog, findings) = try sync.run(indexing: pushing)
        findings = earlier + findings
        if pushing {
            earlyFindings = findings
            let lost = catalog.unreadable.count + catalog.dropped + earlier.count
            if lost > 0 && !hello.dryRun {
                // What those packs held is stored again: everything is offered, and what the
                // other packs hold is skipped.
                logger.warning(
                    "blind peer \(peer.name) holds \(lost) packs (or entries being converted) that cannot be read, or name a photo found damaged, or were left out by a node that could not read them; this push stores again what they could have held"
                )
                try store.setCheckpoint(CheckpointUpdate(peerStore: host.storeID, direction: .push, seq: 0))
            }
            side = .packSink(
                BlindPackSink(
                    context: context, catalog: catalog, dryRun: hello.dryRun, out: out,
                    packsPerHead: testHooks.blindPacksPerHead))
        } else {
            side = .packSource(
                BlindPackSource(context: context, catalog: catalog, findings: findings, out: out))
        }
    }

    private func startEntries(_ hello: HelloMessage, host: HelloMessage) throws {
        let context = context(host)
        let checked = try BlindMirrorSync(context: context).run()
        if hello.intent == .pull {
            side = .source(try BlindSource(context: context, out: out))
        } else {
            side = .sink(BlindSink(context: context, epoch: checked.epoch, dryRun: hello.dryRun, out: out))
        }
    }

    /// The session's context once the blind store's Hello said which store it keeps.
    private func context(_ host: HelloMessage) -> BlindPeerContext {
        BlindPeerContext(
            store: store, remote: remote, seal: seal, peer: peer, hostStore: host.storeID, logger: logger)
    }
}
