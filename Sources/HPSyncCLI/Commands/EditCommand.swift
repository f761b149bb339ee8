import ArgumentParser
import HPSyncStore

/// `hp-sync edit KEY`: changes fields of one item.
struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change an item's fields.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The item's key, or a unique prefix of at least 4 characters.") var key: String
    @Option(help: "New name.") var name: String?
    @Option(help: "New serial number.") var serial: String?
    @Flag(help: "Remove the serial number.") var clearSerial = false
    @Option(parsing: .unconditional, help: "New value in whole dollars.", transform: ItemArguments.dollars)
    var value: Int64?

    func validate() throws {
        if serial != nil && clearSerial { throw ValidationError("give either --serial or --clear-serial, not both") }
        if name == nil && serial == nil && !clearSerial && value == nil {
            throw ValidationError("nothing to change; give --name, --serial, --clear-serial or --value")
        }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
        if let name { try ItemArguments.checkNotBlank(name) }
    }

    func run() throws {
        try ItemArguments.checkPrintable(name, option: "--name")
        try ItemArguments.checkPrintable(serial, option: "--serial")
        let store = try options.openStore()
        let resolved = try store.resolve(prefix: key)
        let serialChange: SerialChange = clearSerial ? .clear : serial.map { .set($0) } ?? .keep
        let item = try store.edit(resolved, ItemEdit(name: name, serialNumber: serialChange, valueInDollars: value))
        Output.write(Output.describe(item, imagePath: store.imageFileURL(for: resolved).path))
    }
}
