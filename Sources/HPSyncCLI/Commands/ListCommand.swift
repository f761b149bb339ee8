import ArgumentParser
import Foundation
import HPSyncStore

/// `hp-sync list`: all items as an aligned table or JSON.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List items.")

    @OptionGroup var options: StoreOptions
    @Flag(help: "Print JSON (the export's item format) instead of a table.") var json = false
    @Flag(help: "Include deleted items (tombstones).") var deleted = false

    func run() throws {
        let store = try options.openStore()
        let items = try store.items(includeDeleted: deleted)
        if json {
            Output.writeData(store.itemsJSON(items))
            return
        }
        var rows = [["KEY", "NAME", "SERIAL", "VALUE", "CREATED", "IMAGE"]]
        rows.reserveCapacity(items.count + 1)
        for item in items {
            if item.deleted {
                rows.append([item.key.rawValue, "(deleted)", "", "", "", ""])
                continue
            }
            rows.append([
                item.key.rawValue, item.name, item.serialNumber ?? "-",
                String(item.valueInDollars),
                String(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds).prefix(10)),
                item.image.map { "yes (\($0.size) B)" } ?? "no",
            ])
        }
        Output.write(Output.table(rows))
    }
}
