import Foundation
import HPSyncCrypto
import HPSyncModel

/// Everything the store refuses or fails at, each with a message that says what to do.
public enum StoreError: Error, CustomStringConvertible, Equatable {
    case noStore(path: String)
    /// The store's path names a file, not a directory: `init` cannot make a store there either.
    case storeIsAFile(path: String)
    case storeExists(path: String)
    case cannotCreate(path: String, reason: String)
    case io(path: String, reason: String)
    /// No space left on the file system mounted at `mountPoint`, which holds `path`.
    case diskFull(path: String, mountPoint: String)
    /// The store (or a file in it) cannot be written: permissions or a read-only mount.
    case notWritable(path: String, reason: String)
    case database(String)
    case busy(String)
    case newerSchema(String)
    case invalidKey(String)
    case unknownKey(String)
    case alreadyDeleted(ItemKey)
    case keyExists(ItemKey)
    case ambiguousPrefix(String, candidates: [ItemKey])
    case prefixTooShort(String)
    case invalidName(String)
    case invalidSerial(String)
    /// A value outside `ItemLimits.valueInDollars`.
    case invalidValue(Int64)
    case invalidPeerName(String)
    case peerExists(String)
    case unknownPeer(String)
    case notAnImage(path: String)
    case imageTooLarge(path: String, size: Int64, limit: Int64)
    case missingImageFile(path: String)
    case stagingOverflow(expected: Int64)
    case digestMismatch(expected: ImageRef, actual: ImageRef)
    case invalidRecord(ItemKey, reason: String)
    /// A blind store was sent an entry it cannot keep (its photo was not uploaded first).
    case invalidBlindEntry(String)
    /// The command needs a store of items, and this one is blind (or the other way round).
    case wrongKindOfStore(String)
    case invalidImport(String)
    case missingImportFile(path: String)
    case missingImportImage(ItemKey, directory: String, directoryExists: Bool)
    case notInTrash(String)
    case unknownInvitation(String)
    case ambiguousInvitation(String)

    public var description: String {
        switch self {
        case .noStore(let path):
            return "no hp-sync store at \(path); create one with `hp-sync init --store \(path)` or pass --store"
        case .storeIsAFile(let path):
            return "\(path) is a file, not an hp-sync store (a store is a directory); pass --store with the store's "
                + "directory, or with a new path for `hp-sync init`"
        case .storeExists(let path):
            return "a store already exists at \(path); use it as it is, or choose another directory with --store"
        case .cannotCreate(let path, let reason):
            return "cannot create \(path): \(reason); check the directory's permissions and free space"
        case .io(let path, let reason):
            return "I/O error on \(path): \(reason); check permissions and free space, then run `hp-sync verify`"
        case .diskFull(let path, let mountPoint):
            return "the disk is full: no space left on the file system mounted at \(mountPoint), which holds "
                + "\(path); free space there (`df \(mountPoint)`) and run the command again. Nothing half-done was "
                + "kept: a sync resumes from its last committed page"
        case .notWritable(let path, let reason):
            return "cannot write \(path): \(reason); hp-sync needs write access to its store: run it as the "
                + "store's owner, fix the permissions, or remount the file system read-write"
        case .database(let message):
            return "database error: \(message); if it persists run `hp-sync verify`"
        case .busy(let message):
            return "the store is busy (\(message)): another hp-sync process held it too long; try again shortly"
        case .newerSchema(let message):
            return "the store was written by a newer hp-sync (\(message)); upgrade hp-sync to use it"
        case .invalidKey(let text):
            return "'\(Self.clip(text))' is not an item key: expected a UUID such as "
                + "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04 or a unique prefix of at least 4 hex digits"
        case .unknownKey(let text):
            return "no item with key \(Self.clip(text)); list keys with `hp-sync list`"
        case .alreadyDeleted(let key):
            return "item \(key) is already deleted; nothing was changed"
        case .keyExists(let key):
            return "an item with key \(key) already exists; edit it with `hp-sync edit \(key)` or choose another key"
        case .ambiguousPrefix(let prefix, let candidates):
            let shown = candidates.prefix(10).map(\.rawValue).joined(separator: ", ")
            return "prefix '\(prefix)' matches several items (\(shown)\(candidates.count > 10 ? ", ..." : "")); "
                + "type more characters of the key"
        case .prefixTooShort(let prefix):
            return "key prefix '\(Self.clip(prefix))' is too short; give at least 4 characters of the key"
        case .invalidName(let reason):
            return "invalid item name: \(reason)"
        case .invalidSerial(let reason):
            return "invalid serial number: \(reason)"
        case .invalidValue(let value):
            return "invalid value \(value) dollars: values are whole dollars in \(ItemLimits.valueRangeText)"
        case .invalidPeerName(let name):
            return "invalid peer name '\(Self.clip(name))': use 1-64 characters from A-Z a-z 0-9 . _ - "
                + "starting with a letter or digit"
        case .peerExists(let name):
            return "a peer named \(name) or with that node ID already exists; remove it first with "
                + "`hp-sync peer rm \(name)`"
        case .unknownPeer(let name):
            return "no peer named \(Self.clip(name)); list peers with `hp-sync peer list`"
        case .notAnImage(let path):
            return "\(path) is not a JPEG, PNG, HEIC or GIF image; give an image file"
        case .imageTooLarge(let path, let size, let limit):
            return "\(path) is \(size) bytes, more than the limit of \(limit) bytes; shrink the image first"
        case .missingImageFile(let path):
            return "image file \(path) does not exist or cannot be read; check the path"
        case .stagingOverflow(let expected):
            return "more image bytes arrived than the \(expected) announced; the transfer was discarded, retry it"
        case .digestMismatch(let expected, let actual):
            return "image bytes do not match: expected \(expected.size) bytes with SHA-256 \(expected.digest), "
                + "got \(actual.size) bytes with \(actual.digest); the image was discarded, retry the transfer"
        case .invalidRecord(let key, let reason):
            return "record \(key) is invalid: \(reason); nothing from this batch was applied"
        case .invalidBlindEntry(let reason):
            return "\(reason); nothing from this BlindPut was stored"
        case .wrongKindOfStore(let reason):
            return reason
        case .invalidImport(let reason):
            return "cannot import: \(reason); check that the file was written by `hp-sync export`"
        case .missingImportFile(let path):
            return "cannot read \(path); check the path of the file to import"
        case .notInTrash(let what):
            return "nothing in the trash for \(Self.clip(what)); see `hp-sync trash list`"
        case .unknownInvitation(let id):
            return "no invitation with ID \(Self.clip(id)); list them with `hp-sync invite list`"
        case .ambiguousInvitation(let id):
            return "invitation ID \(id) matches several invitations; give more of the ID shown by `hp-sync invite list`"
        case .missingImportImage(let key, let directory, let exists):
            guard exists else {
                return "--images \(directory) does not exist; pass the directory `hp-sync export --images` wrote, "
                    + "or leave --images out to import the records with their images recorded as missing"
            }
            return "--images \(directory) has no file \(key), the first image the import needs "
                + "(expected \(directory)/\(key)); pass the directory `hp-sync export --images` wrote, "
                + "or leave --images out to import the records with their images recorded as missing"
        }
    }

    static func clip(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(60)) + "..." : text
    }
}
