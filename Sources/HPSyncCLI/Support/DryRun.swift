import HPSyncStore

/// The listing a local dry run prints (`rm -n`, `import -n`), in the shape of `pull --dry-run`'s.
enum DryRun {
    /// `insert KEY`, `update KEY`, `delete KEY` lines.
    static func listing(_ changes: ChangeSet) -> String {
        (changes.inserted.map { "insert \($0)\n" } + changes.updated.map { "update \($0)\n" }
            + changes.deleted.map { "delete \($0)\n" }).joined()
    }

    /// The listing, then `dry run, nothing written: would have inserted 0, updated 0, ...`.
    static func report(_ changes: ChangeSet) -> String {
        listing(changes) + "dry run, nothing written: would have " + Output.summary(changes) + "\n"
    }
}
