import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension InviteCommand {
    /// `hp-sync invite [create]`: makes an invitation and prints it.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Make an invitation and print it (the default).")

        /// The longest an invitation may stay valid: it is a standing credential until used.
        static let maxLifetimeSeconds: Int64 = 30 * 86_400
        /// On a blind store, ten years: the invitation kept with the recovery key for the day
        /// after the fire. Whoever holds it can list a node there, which can read only sealed
        /// data and write nothing a trusted node would accept (Protocol.md 5.8).
        static let maxBlindLifetimeSeconds: Int64 = 3650 * 86_400

        @OptionGroup var options: StoreOptions
        @Option(help: "What the joiner may do here: read (pull) or read-write (pull and push).")
        var allow = PeerPermission.read
        @Option(
            help: ArgumentHelp(
                "How long the invitation stays valid: 90s, 30m, 1h, 2d (at most 30d; 3650d on a blind store).",
                valueName: "duration"))
        var expires = Age(argument: "1h")!
        @Option(help: "The name to list the joiner under (default: the name it suggests, e.g. its host name).")
        var name: String?
        @Option(help: "Where the joiner reaches this server: HOST[:PORT] (default: this host's name, port 7717).")
        var address: String?

        func validate() throws {
            guard expires.seconds > 0 else {
                throw ValidationError("--expires '\(expires)' is no time at all; give 10m, 1h or 1d")
            }
            guard expires.seconds <= Self.maxBlindLifetimeSeconds else {
                throw ValidationError("--expires '\(expires)' is longer than 3650d")
            }
            if let name, !Peer.isValidName(name) {
                throw ValidationError(
                    "invalid --name '\(name)': use 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
            }
            if let address, PeerAddress(parsing: address) == nil {
                throw ValidationError("--address '\(address)' is not HOST or HOST:PORT ([IPv6]:PORT)")
            }
        }

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            guard expires.seconds <= Self.maxLifetimeSeconds || store.isBlind else {
                throw CommandFailure(
                    status: .usage,
                    description:
                        "--expires '\(expires)' is longer than 30d (only a blind store's invitations may last longer)")
            }
            let identity = try options.loadIdentity()
            if let name, try store.peer(named: name) != nil { throw StoreError.peerExists(name) }
            let advertised = address.flatMap { PeerAddress(parsing: $0) } ?? PeerAddress(host: Self.hostName())
            // Parse what we print, so an address the joiner could not read fails here, not there.
            let probe = InvitationToken(address: advertised, nodeID: identity.nodeID, secret: .random())
            guard (try? InvitationToken(parsing: probe.description)) != nil else {
                throw ValidationError(
                    "this host's name '\(advertised.host)' cannot go in an invitation; pass --address HOST[:PORT]")
            }
            let (secret, invitation) = try store.createInvitation(
                permission: allow, name: name, lifetimeMilliseconds: expires.milliseconds)
            let token = InvitationToken(address: advertised, nodeID: identity.nodeID, secret: secret)
            Output.write("\(token)\n")
            let may = allow == .readWrite ? "pull and push" : "pull"
            Output.note(
                """
                Invitation \(invitation.shortID): the joiner may \(may); valid for \(AgeText.describe(seconds: expires.seconds)) \
                (until \(DateText.iso8601(milliseconds: invitation.expiresAtMilliseconds))), once.
                On the other host run:  hp-sync peer join '\(token)'
                `hp-sync serve` must be running here, reachable at \(advertised) from there (else use --address).
                The string is a password until it is used or expires: send it privately.
                """)
        }

        /// This machine's host name, as `hostname` prints it.
        static func hostName() -> String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return name.isEmpty ? "localhost" : name
        }
    }
}
