import Foundation
import HPSyncCrypto
import HPSyncStore
import Logging

/// Where a node keeps this inventory's key: `identity/inventory.key`, beside its TLS identity,
/// mode 0600, as the recovery text (`hp-sync key show` prints it).
public enum InventoryKeyFile {
    public static func url(for storeDirectory: URL) -> URL {
        storeDirectory.appendingPathComponent("identity", isDirectory: true).appendingPathComponent("inventory.key")
    }

    /// This node's key, if it has one.
    public static func load(_ store: Store) throws -> InventoryKey? {
        try InventoryKey.read(from: url(for: store.directory))
    }

    /// This node's key, made now if it has none (the first blind peer, or `key show`).
    public static func loadOrCreate(_ store: Store, logger: Logger) throws -> InventoryKey {
        if let key = try load(store) { return key }
        let key = InventoryKey.random()
        do {
            try key.write(to: url(for: store.directory))
        } catch SealingError.keyFileExists {
            // Another process (a second push, a sync that adopted a peer's key) made one first.
            if let theirs = try load(store) { return theirs }
            throw SealingError.keyFileExists(path: url(for: store.directory).path)
        }
        logger.notice("made this inventory's key", metadata: ["fingerprint": "\(key.fingerprint)"])
        return key
    }
}
