import ArgumentParser

/// `hp-sync trash list|restore|purge`: the versions pulls deleted or overwrote.
struct TrashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash", abstract: "Versions that pulls deleted or overwrote, kept for --keep-deleted.",
        discussion: """
            Each pull keeps the local versions it deletes or overwrites (with their images) for \
            `pull --keep-deleted` (default 30 days), and `serve` those a received push deletes or \
            overwrites, for `serve --keep-deleted`. `trash restore KEY` brings one back as a new \
            local edit, which the next sync sends on like any other change.
            """,
        subcommands: [List.self, Restore.self, Purge.self])
}
