/// Why a Homepwner folder could not be imported or written, naming the file at fault.
public enum HomepwnerError: Error, CustomStringConvertible, Equatable {
    /// The folder does not exist or is not a directory.
    case missingFolder(path: String)
    /// The folder holds none of the files any edition of the app writes.
    case nothingToImport(path: String)
    /// A file is truncated, corrupted or not what its name says.
    case malformed(file: String, reason: String)
    /// Two files (or two entries of one file) give one key different contents.
    case conflict(key: String, reason: String)
    /// An item cannot be written in the requested format.
    case cannotExport(reason: String)
    /// Writing the exported folder failed.
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .missingFolder(let path):
            return "no folder at \(path); pass the app's Documents folder (see Docs/homepwner.md)"
        case .nothingToImport(let path):
            return "\(path) holds no Homepwner data (looked for items.archive, items.plist, store.data and "
                + "items.data); pass the app's Documents folder"
        case .malformed(let file, let reason):
            return "\(file): \(reason); nothing was imported"
        case .conflict(let key, let reason):
            return "item \(key): \(reason); nothing was imported"
        case .cannotExport(let reason):
            return "cannot export: \(reason)"
        case .cannotWrite(let path, let reason):
            return "cannot write \(path): \(reason); check the folder's permissions and free space"
        }
    }
}
