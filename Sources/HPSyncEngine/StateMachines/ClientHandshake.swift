import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

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
