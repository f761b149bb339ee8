import ArgumentParser
import Foundation
import HPSyncStore

extension ImageCommand {
    /// `hp-sync image set KEY FILE`.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set an item's image from a file.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The item's key or a unique prefix.") var key: String
        @Argument(help: "A JPEG, PNG, HEIC or GIF file.") var file: String

        func run() throws {
            let store = try options.openStore()
            let item = try store.setImage(try store.resolve(prefix: key), from: URL(fileURLWithPath: file))
            Output.write("\(item.key): image \(item.image?.size ?? 0) bytes, sha256 \(item.image?.digest.hex ?? "-")\n")
        }
    }
}
