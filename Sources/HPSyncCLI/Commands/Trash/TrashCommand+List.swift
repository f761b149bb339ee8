import ArgumentParser
import HPSyncModel
import HPSyncStore

extension TrashCommand {
    /// `hp-sync trash list [KEY]`.
    struct List: ParsableCommand {
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
}
