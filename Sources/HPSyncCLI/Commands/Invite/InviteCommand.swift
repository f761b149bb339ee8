import ArgumentParser

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
        subcommands: [Create.self, List.self, Revoke.self],
        defaultSubcommand: Create.self)
}
