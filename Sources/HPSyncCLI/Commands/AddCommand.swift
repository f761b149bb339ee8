import ArgumentParser
import Foundation
import HPSyncModel
import HPSyncStore

/// `hp-sync add`: adds an item and prints its key.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an item; prints its key.")

    @OptionGroup var options: StoreOptions
    @Option(help: "The item's name.") var name: String
    @Option(help: "Serial number.") var serial: String?
    @Option(parsing: .unconditional, help: "Value in whole dollars.", transform: ItemArguments.dollars)
    var value: Int64 = 0
    @Option(help: "An image file (JPEG, PNG, HEIC or GIF).") var image: String?
    @Option(help: "Creation date: ISO 8601 (2024-05-01T10:00:00Z) or YYYY-MM-DD; default now.") var created: String?

    func validate() throws {
        if name.isEmpty { throw ValidationError("--name must not be empty") }
        try ItemArguments.checkNotBlank(name)
        if let created, DateText.parse(created) == nil {
            throw ValidationError("--created '\(created)' is not a date; use YYYY-MM-DD or 2024-05-01T10:00:00Z")
        }
    }

    func run() throws {
        try ItemArguments.checkPrintable(name, option: "--name")
        try ItemArguments.checkPrintable(serial, option: "--serial")
        let store = try options.openStore()
        let item = try store.add(
            ItemDraft(
                name: name, serialNumber: serial, valueInDollars: value,
                dateCreatedMilliseconds: created.flatMap(DateText.parse),
                imageFile: image.map { URL(fileURLWithPath: $0) }))
        Output.write("\(item.key)\n")
    }
}
