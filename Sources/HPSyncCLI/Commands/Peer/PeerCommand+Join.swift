import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore
import Logging

extension PeerCommand {
    /// `hp-sync peer join INVITATION [--name N] [--allow read|read-write]`: redeems an invitation
    /// from `hp-sync invite`, then trusts the server here.
    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join", abstract: "Join a server with an invitation from `hp-sync invite` there.",
            discussion: """
                Connects to the address in the invitation and checks that the server is the node the \
                invitation names before sending anything (else exits 77 and the invitation stays \
                unused). The server then adds this node as a peer with the invited permission, and \
                this node adds the server as a peer, so `hp-sync pull NAME` works at once.
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The invitation: hpsync://HOST:PORT/NODE-ID#SECRET (quote it).") var invitation: String
        @Option(help: "What to call the server here (default: its host name from the invitation).") var name: String?
        @Option(help: "What the server may do here, if this node serves too: read or read-write.")
        var allow = PeerPermission.read
        @Flag(
            help: ArgumentHelp(
                "The server is a blind store: seal everything sent there, never tell it the inventory key.",
                discussion: "A server that says it is blind is marked so anyway; give it to be sure."))
        var blind = false
        @Option(
            help: ArgumentHelp(
                "How long to wait for the connection and TLS handshake (10s, 1m).", valueName: "duration"))
        var connectTimeout = Age(argument: "10s")!

        func validate() throws {
            do {
                _ = try InvitationToken(parsing: invitation)
            } catch {
                throw ValidationError(error.description)
            }
            if let name, !Peer.isValidName(name) {
                throw ValidationError(
                    "invalid --name '\(name)': use 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
            }
            try connectTimeout.requirePositive("--connect-timeout")
        }

        func run() throws {
            let token = try InvitationToken(parsing: invitation)
            let logger = options.makeLogger()
            let store = try options.openStore()
            let identity = try options.loadIdentity()
            guard token.nodeID != identity.nodeID else {
                throw CommandFailure(
                    status: .usage, description: "this invitation was made by this node; use it on another host")
            }
            // Check the name before the secret is spent, so the join cannot succeed there and fail here.
            let known = try store.peer(nodeID: token.nodeID)
            let localName = known?.name ?? name ?? Peer.sanitizedName(token.address.host)
            if known == nil, try store.peer(named: localName) != nil {
                throw CommandFailure(
                    status: .dataError,
                    description: "a peer named \(localName) already exists here; choose another name with --name")
            }
            var timeouts = TLSTimeouts()
            timeouts.connect = connectTimeout.duration
            timeouts.handshake = connectTimeout.duration
            let connection = try connect(token, identity: identity, timeouts: timeouts, logger: logger)
            let granted = try SyncClient(store: store, logger: logger).join(
                over: FramedChannel(stream: connection), serverNodeID: token.nodeID, secret: token.secret,
                suggestedName: Peer.sanitizedName(InviteCommand.Create.hostName()))
            let may = granted.allow == .readWrite ? "pull from and push to" : "pull from"
            // Only ever toward blind: a server that says it is not blind is trusted only if the
            // person did not say otherwise.
            let isBlind = blind || granted.serverIsBlind
            var text = "joined \(token.address) as '\(granted.name)': this node may \(may) it\n"
            if let known {
                text += "the server was already a peer here, as \(known.name); left unchanged\n"
            } else {
                try store.addPeer(
                    Peer(
                        name: localName, nodeID: token.nodeID, address: token.address.description,
                        permission: allow, blind: isBlind))
                text += "added peer \(localName) (\(token.nodeID), \(allow.rawValue)\(isBlind ? ", blind" : ""))\n"
            }
            text += "next: hp-sync pull \(known?.name ?? localName)\n"
            Output.write(text)
        }

        /// Dials the server and pins the invitation's node ID before anything is sent.
        private func connect(_ token: InvitationToken, identity: NodeIdentity, timeouts: TLSTimeouts, logger: Logger)
            throws -> TLSConnection
        {
            do {
                return try TLSConnection.connect(
                    host: token.address.host, port: token.address.port, identity: identity,
                    expected: .node(token.nodeID),
                    timeouts: timeouts, logger: logger)
            } catch {
                guard case .peerMismatch(let expected, let actual) = error else { throw error }
                throw CommandFailure(
                    status: .permissionDenied,
                    description: """
                        the server at \(token.address) is node \(actual), not \(expected) as the invitation says; \
                        the secret was not sent and the invitation is still unused. Check the address, or ask \
                        for a new invitation made on the server you mean
                        """)
            }
        }
    }
}
