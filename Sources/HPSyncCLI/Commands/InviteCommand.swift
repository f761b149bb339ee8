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

/// `hp-sync invite [--allow read|read-write] [--expires 1h] [--name N] [--address HOST[:PORT]]`,
/// plus `invite list` and `invite revoke ID`.
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Invite another host to become a peer (one-time, expiring).",
        discussion: """
            Prints one string holding this server's address, its node ID and a one-time secret. \
            On the other host, `hp-sync peer join STRING` checks that it reaches this node, proves \
            the secret, and this node adds it as a peer with the invited permission (the other host \
            adds this node too). `hp-sync serve` must be running here when it joins. Each \
            invitation works once and expires; only a hash of the secret is stored.
            """,
        subcommands: [InviteCreateCommand.self, InviteListCommand.self, InviteRevokeCommand.self],
        defaultSubcommand: InviteCreateCommand.self)
}

/// `hp-sync invite [create]`: makes an invitation and prints it.
struct InviteCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Make an invitation and print it (the default).")

    /// The longest an invitation may stay valid: it is a standing credential until used.
    static let maxLifetimeSeconds: Int64 = 30 * 86_400

    @OptionGroup var options: StoreOptions
    @Option(help: "What the joiner may do here: read (pull) or read-write (pull and push).")
    var allow = PeerPermission.read
    @Option(
        help: ArgumentHelp(
            "How long the invitation stays valid: 90s, 30m, 1h, 2d (at most 30d).", valueName: "duration"))
    var expires = Age(argument: "1h")!
    @Option(help: "The name to list the joiner under (default: the name it suggests, e.g. its host name).")
    var name: String?
    @Option(help: "Where the joiner reaches this server: HOST[:PORT] (default: this host's name, port 7717).")
    var address: String?

    func validate() throws {
        guard expires.seconds > 0 else {
            throw ValidationError("--expires '\(expires)' is no time at all; give 10m, 1h or 1d")
        }
        guard expires.seconds <= Self.maxLifetimeSeconds else {
            throw ValidationError("--expires '\(expires)' is longer than 30d")
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
        let store = try options.openStore()
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

/// `hp-sync invite list`.
struct InviteListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List invitations, newest first.")

    @OptionGroup var options: StoreOptions
    @Flag(help: "Print JSON, one object per invitation.") var json = false

    struct Document: Encodable {
        var id: String
        var allow: String
        var name: String?
        var createdAt: String
        var expiresAt: String
        /// pending, expired or used.
        var status: String
        var usedAt: String?
        var usedBy: String?
    }

    func run() throws {
        let store = try options.openStore()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let peers = try store.peers()
        var rows = [["ID", "ALLOW", "NAME", "CREATED", "EXPIRES", "STATUS"]]
        var documents: [Document] = []
        for invitation in try store.invitations() {
            let status: String
            if let used = invitation.usedAtMilliseconds {
                let by = invitation.usedBy.map { node in peers.first { $0.nodeID == node }?.name ?? node.short } ?? "?"
                status = "used by \(by) at \(DateText.iso8601(milliseconds: used))"
            } else {
                status = invitation.expiresAtMilliseconds <= now ? "expired" : "pending"
            }
            documents.append(
                Document(
                    id: invitation.shortID, allow: invitation.permission.rawValue, name: invitation.name,
                    createdAt: DateText.iso8601(milliseconds: invitation.createdAtMilliseconds),
                    expiresAt: DateText.iso8601(milliseconds: invitation.expiresAtMilliseconds),
                    status: invitation.usedAtMilliseconds != nil ? "used" : status,
                    usedAt: Output.isoDate(invitation.usedAtMilliseconds), usedBy: invitation.usedBy.map { "\($0)" }))
            rows.append([
                invitation.shortID, invitation.permission.rawValue, invitation.name ?? "-",
                DateText.iso8601(milliseconds: invitation.createdAtMilliseconds),
                DateText.iso8601(milliseconds: invitation.expiresAtMilliseconds), status,
            ])
        }
        if json { return try Output.json(documents) }
        Output.write(Output.table(rows))
    }
}

/// `hp-sync invite revoke ID`.
struct InviteRevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Delete an invitation so it can no longer be used.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The invitation's ID from `hp-sync invite list` (at least 4 characters).") var id: String

    func run() throws {
        let invitation = try options.openStore().revokeInvitation(prefix: id)
        var text = "revoked invitation \(invitation.shortID)"
        if invitation.usedAtMilliseconds != nil {
            text += " (it was used already: remove the peer it added with `hp-sync peer rm` if needed)"
        }
        Output.write(text + "\n")
    }
}
