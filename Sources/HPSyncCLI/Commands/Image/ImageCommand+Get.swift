import ArgumentParser
import Foundation
import HPSyncModel
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ImageCommand {
    /// `hp-sync image get KEY [-o FILE]`: the raw bytes, to a file or stdout.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Write an item's image to a file, or its raw bytes to stdout.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The item's key or a unique prefix.") var key: String
        @Option(name: .shortAndLong, help: "Output file (default: stdout, which must not be a terminal).")
        var output: String?
        @Flag(help: "Overwrite the output file if it exists.") var force = false

        func run() throws {
            // As curl does: image bytes on a terminal are garbage at best and escape sequences at worst.
            if output == nil, isatty(STDOUT_FILENO) == 1 {
                throw CommandFailure(
                    status: .usage, description: "stdout is a terminal; use -o FILE or redirect (> FILE)")
            }
            if let output { try Output.checkOverwrite(output, force: force, fileName: "photo.jpg") }
            let store = try options.openStore()
            let resolved = try store.resolve(prefix: key)
            guard let item = try store.item(resolved), !item.deleted, item.image != nil else {
                throw CommandFailure(
                    status: .noInput,
                    description: "item \(resolved) has no image; set one with `hp-sync image set \(resolved) FILE`")
            }
            let data = try Self.intactBytes(of: item, in: store)
            if let output {
                try Output.save(data, to: output)
            } else {
                Output.writeData(data)
            }
        }

        /// The image's bytes, checked against the record (any file with its digest will do): a
        /// missing or damaged image is missing input (66), with the command that fetches it again.
        static func intactBytes(of item: Item, in store: Store) throws -> Data {
            guard let image = item.image else { return Data() }
            let (reader, _) = try store.openIntactImage(withDigest: image.digest)
            guard let reader else {
                let problem = store.imageFileProblem(item) ?? "the file is damaged (its SHA-256 is not the record's)"
                throw CommandFailure(
                    status: .noInput,
                    description: "the image of \(item.key) is not in this store: \(problem) "
                        + "(\(store.imageFileURL(for: item.key).path)); fetch it again with `\(Store.repairCommand)`")
            }
            defer { reader.close() }
            var data = Data(count: Int(reader.size))
            var filled = 0
            try data.withUnsafeMutableBytes { bytes in
                while filled < bytes.count {
                    let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                    if count == 0 { throw reader.shortFileError() }
                    filled += count
                }
            }
            return data
        }
    }
}
