import ArgumentParser
import HPSyncModel
import HPSyncStore

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
        subcommands: [TrashListCommand.self, TrashRestoreCommand.self, TrashPurgeCommand.self])
}

/// `hp-sync trash list [KEY]`.
struct TrashListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the trash, newest first.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "Only this item's versions (a key or a unique prefix of 4+ characters).") var key: String?
    @Flag(help: "Print JSON, one object per entry, newest first.") var json = false

    struct Document: Encodable {
        var id: Int64
        var key: String
        var reason: String
        var trashedAt: String
        var name: String
        var serialNumber: String?
        var valueInDollars: Int64
        var dateCreated: String
        var imageSize: Int64?
        var imageSHA256: String?
    }

    func run() throws {
        let store = try options.openStore()
        let itemKey = try key.map { try Self.key($0, in: store) }
        let entries = try store.trashEntries(key: itemKey)
        if json {
            return try Output.json(
                entries.map {
                    Document(
                        id: $0.id, key: $0.key.rawValue, reason: $0.reason.rawValue,
                        trashedAt: DateText.iso8601(milliseconds: $0.trashedAt), name: $0.name,
                        serialNumber: $0.serialNumber, valueInDollars: $0.valueInDollars,
                        dateCreated: DateText.iso8601(milliseconds: $0.dateCreatedMilliseconds),
                        imageSize: $0.image?.size, imageSHA256: $0.image?.digest.hex)
                })
        }
        guard !entries.isEmpty else { return }
        var rows = [["ID", "KEY", "REASON", "TRASHED", "NAME", "VALUE", "IMAGE"]]
        for entry in entries {
            rows.append([
                "\(entry.id)", entry.key.rawValue, entry.reason.rawValue,
                DateText.iso8601(milliseconds: entry.trashedAt), entry.name, "\(entry.valueInDollars)",
                entry.image.map { "\($0.size) bytes" } ?? "-",
            ])
        }
        Output.write(Output.table(rows))
    }

    /// A full key (the item may be deleted), else a unique prefix of a live item.
    static func key(_ text: String, in store: Store) throws -> ItemKey {
        if let key = try? ItemKey(text) { return key }
        return try store.resolve(prefix: text)
    }
}

/// `hp-sync trash restore KEY [--id N]`.
struct TrashRestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a trashed version as a new local edit (the newest, or --id).")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The item's key (or a unique prefix of 4+ characters).") var key: String
    @Option(help: "The trash entry to restore (see `hp-sync trash list KEY`).") var id: Int64?

    func run() throws {
        let store = try options.openStore()
        let itemKey = try TrashListCommand.key(key, in: store)
        let item = try store.restoreFromTrash(key: itemKey, id: id)
        Output.write("restored \(item.key) (\(TerminalText.escaped(item.name))) as version \(item.version)\n")
    }
}

/// `hp-sync trash purge --older-than D | --all`.
struct TrashPurgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Delete trash entries for good (those older than --older-than, or --all).")

    @OptionGroup var options: StoreOptions
    @Option(help: ArgumentHelp("Only entries trashed longer ago than this (30d, 12h).", valueName: "duration"))
    var olderThan: Age?
    @Flag(help: "Every entry, however recent.") var all = false
    @Flag(name: [.customShort("n"), .long], help: "Show how many entries would go and delete nothing.")
    var dryRun = false

    func validate() throws {
        // The trash is the undo of a bad pull: emptying it takes saying so.
        if olderThan == nil && !all { throw ValidationError("say what to purge: --older-than DURATION or --all") }
        if olderThan != nil && all { throw ValidationError("give either --older-than or --all, not both") }
    }

    func run() throws {
        let store = try options.openStore()
        let age = olderThan?.milliseconds ?? -1
        if dryRun {
            let cutoff = Int64(store.nowMilliseconds()) - age
            let count = try store.trashEntries(key: nil).filter { $0.trashedAt <= cutoff }.count
            Output.write("dry run, nothing deleted: would purge \(count) trash entr\(count == 1 ? "y" : "ies")\n")
            return
        }
        let removed = try store.purgeTrash(olderThanMilliseconds: age)
        Output.write("purged \(removed) trash entr\(removed == 1 ? "y" : "ies")\n")
    }
}
