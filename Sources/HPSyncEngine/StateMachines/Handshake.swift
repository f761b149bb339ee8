import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The server's decision on a client's Hello, with no I/O: accept with the answer to send, or
/// refuse with the Error to send. Every refusal tells the person what to do about it.
///
/// Only peers the server lists may pull or push; a JOIN (version 2) is accepted from any node,
/// since the JoinRequest that follows is what authorizes it (or not).
public enum ServerHandshake {
    public enum Decision: Sendable, Equatable {
        case accept(reply: HelloMessage)
        case refuse(PeerErrorMessage)
    }

    /// - Parameters:
    ///   - hello: the client's validated Hello.
    ///   - certificateNodeID: the node ID of the client's TLS certificate.
    ///   - peer: the server's peer entry for that node ID, if any.
    ///   - clockMilliseconds: the server's wall clock, told in its Hello (nil: not told).
    ///   - blindHoldsPacks: the server's blind store keeps packs (Protocol.md 5.8.7), which only
    ///     version 6 reads.
    public static func decide(
        hello: HelloMessage, certificateNodeID: NodeID, peer: Peer?, serverNodeID: NodeID,
        serverStoreID: StoreID, software: String, clockMilliseconds: UInt64? = nil, serverIsBlind: Bool = false,
        blindHoldsPacks: Bool = false
    ) -> Decision {
        guard hello.nodeID == certificateNodeID else {
            return .refuse(
                PeerErrorMessage(
                    code: .nodeIDMismatch,
                    message: "Hello names node \(hello.nodeID) but the TLS certificate is node \(certificateNodeID)"))
        }
        // A join is how an unknown node becomes a peer: its JoinRequest is the authorization.
        if peer == nil && hello.intent != .join {
            return .refuse(
                PeerErrorMessage(
                    code: .notAuthorized,
                    message:
                        "this server does not know node \(certificateNodeID); to allow it, run on the server: hp-sync peer add NAME \(certificateNodeID)"
                ))
        }
        let minimum = max(hello.minVersion, hello.intent.minimumVersion)
        guard let version = negotiate(min: minimum, max: hello.maxVersion) else {
            let intentNote =
                hello.intent.minimumVersion > 1
                ? " (INTENT_\(hello.intent.rawValue.uppercased()) needs version \(hello.intent.minimumVersion))" : ""
            return .refuse(
                PeerErrorMessage(
                    code: .incompatibleVersion,
                    message:
                        "no common protocol version: client speaks \(hello.minVersion)...\(hello.maxVersion), server speaks \(ProtocolLimits.minVersion)...\(ProtocolLimits.maxVersion)\(intentNote); upgrade the older side"
                ))
        }
        // Version 1 has no dry_run: a session in it would apply the push the client only wants
        // to preview (Protocol.md 5.3). A preview never writes.
        if hello.intent == .push && hello.dryRun && version < 2 {
            return .refuse(
                PeerErrorMessage(
                    code: .incompatibleVersion,
                    message:
                        "a push preview (dry_run) needs protocol version 2 or later, the client offers \(hello.minVersion)...\(hello.maxVersion); version 1 would apply the push, so nothing was done"
                ))
        }
        if let refusal = blindMismatch(hello, serverIsBlind: serverIsBlind, peer: peer) { return .refuse(refusal) }
        if hello.intent == .blind && blindHoldsPacks && version < ProtocolLimits.blindPacksVersion {
            return .refuse(
                PeerErrorMessage(
                    code: .incompatibleVersion,
                    message:
                        "this blind store keeps its inventory in packs (protocol version \(ProtocolLimits.blindPacksVersion)), which this node's hp-sync (up to version \(hello.maxVersion)) cannot read; upgrade hp-sync on this node"
                ))
        }
        if hello.intent == .push, let peer, peer.permission != .readWrite {
            return .refuse(
                PeerErrorMessage(
                    code: .readOnly,
                    message:
                        "not authorized to push: peer '\(peer.name)' may only pull; to allow pushes, run on the server: hp-sync peer set \(peer.name) --allow read-write (it keeps the peer's history)"
                ))
        }
        var reply = HelloMessage(
            nodeID: serverNodeID, storeID: serverStoreID, intent: hello.intent, version: version, software: software,
            clockMilliseconds: clockMilliseconds)
        reply.blind = serverIsBlind && version >= ProtocolLimits.blindVersion
        return .accept(reply: reply)
    }

    /// A blind store serves only INTENT_BLIND, and only a blind store serves it; a blind store
    /// never pulls or pushes as a client (Protocol.md 5.8).
    private static func blindMismatch(_ hello: HelloMessage, serverIsBlind: Bool, peer: Peer?) -> PeerErrorMessage? {
        let name = peer?.name ?? "NAME"
        // A join is how a new trusted node gets listed, also on a blind store (an invitation made
        // beforehand lets a restore after the fire need no shell on the host).
        if serverIsBlind && hello.intent != .blind && hello.intent != .join {
            return PeerErrorMessage(
                code: .protocolViolation,
                message:
                    "this server's store is blind: it holds only sealed data, and trusted nodes reach it as a blind peer; on the client run: hp-sync peer set SERVER --blind"
            )
        }
        if !serverIsBlind && hello.intent == .blind {
            return PeerErrorMessage(
                code: .protocolViolation,
                message:
                    "this server's store is not blind; on the client, drop the peer's --blind mark (hp-sync peer set SERVER --no-blind) to pull or push it as a trusted peer"
            )
        }
        if hello.blind && !serverIsBlind {
            return PeerErrorMessage(
                code: .notAuthorized,
                message:
                    "node \(name) is a blind store: it never pulls from or pushes to a trusted node; remove it from this server's peers (hp-sync peer rm \(name))"
            )
        }
        return nil
    }

    /// The highest version both sides speak, or nil.
    public static func negotiate(min: UInt32, max: UInt32) -> UInt32? {
        let high = Swift.min(max, ProtocolLimits.maxVersion)
        let low = Swift.max(min, ProtocolLimits.minVersion)
        return high >= low ? high : nil
    }
}

/// The client's side of the Hello exchange, with no I/O: the Hello to send, and the decision on
/// the server's answer (its Hello, or an Error). The mirror of `ServerHandshake`.
public enum ClientHandshake {
    public enum Decision: Sendable {
        /// The server chose a version and intent the client offered: the session goes on.
        case accept(server: HelloMessage)
        case refuse(SyncError)
    }

    /// The client's Hello for `intent`, offering versions `minVersion...maxVersion` (as far
    /// as the intent allows).
    ///
    /// A push preview needs the server's cooperation (Hello.dry_run, version 2): a version-1
    /// server would apply it, so the client does not offer version 1 for one.
    public static func hello(
        intent: SyncIntent, dryRun: Bool, nodeID: NodeID, storeID: StoreID, software: String,
        clockMilliseconds: UInt64, minVersion: UInt32 = ProtocolLimits.minVersion,
        maxVersion: UInt32 = ProtocolLimits.maxVersion
    ) -> HelloMessage {
        let previewPush = intent == .push && dryRun
        return HelloMessage(
            minVersion: max(minVersion, intent.minimumVersion, previewPush ? 2 : 1), maxVersion: maxVersion,
            nodeID: nodeID, storeID: storeID, intent: intent, software: software, dryRun: previewPush,
            clockMilliseconds: clockMilliseconds)
    }

    /// - Parameters:
    ///   - reply: the server's first message.
    ///   - hello: the Hello the client sent.
    ///   - serverNodeID: the node ID TLS authenticated.
    public static func decide(reply: Message, to hello: HelloMessage, serverNodeID: NodeID) -> Decision {
        switch reply {
        case .hello(let server):
            guard server.nodeID == serverNodeID else {
                return .refuse(.nodeIDMismatch(expected: serverNodeID, actual: server.nodeID))
            }
            guard server.version >= hello.minVersion, server.version <= hello.maxVersion,
                server.intent == hello.intent
            else {
                return .refuse(
                    .protocolViolation(
                        .violation(
                            "server chose version \(server.version) / intent \(server.intent), which the client did not offer"
                        )))
            }
            return .accept(server: server)
        case .error(let error):
            return .refuse(.refusedByPeer(error))
        default:
            return .refuse(.protocolViolation(.unexpectedMessage(got: reply.name, expected: "Hello")))
        }
    }

    /// The clocks, when the server's (told in its Hello) and ours differ by more than the skew.
    public static func clockSkew(
        server: HelloMessage, peerName: String, localMilliseconds: UInt64, skewMilliseconds: UInt64
    ) -> ClockSkew? {
        ClockSkew(
            peer: peerName, localMilliseconds: localMilliseconds, peerMilliseconds: server.clockMilliseconds,
            skewMilliseconds: skewMilliseconds)
    }
}
