import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// How the inventory key travels between trusted nodes (Protocol.md 5.8): each side of a
/// version-4 pull or push between trusted peers tells its key in its Hello, inside their mutual
/// TLS, and a node that has none adopts the other's. A blind peer is never told, and a blind
/// store never tells. Two nodes holding different keys keep their own and say so: blind copies
/// sealed under one key cannot be opened with the other.
struct InventoryKeyExchange {
    let store: Store
    let logger: Logger

    /// Server: the key to tell the client in the Hello reply, after adopting the client's if
    /// this node has none; nil unless the session is a version-4 pull or push of a trusted peer.
    func answer(_ hello: HelloMessage, version: UInt32, peer: Peer) -> [UInt8]? {
        guard version >= ProtocolLimits.blindVersion, !peer.blind, !hello.blind,
            hello.intent == .pull || hello.intent == .push
        else { return nil }
        return adopt(hello.inventoryKey, from: peer.name, own: ownKey())?.bytes
    }

    /// Client: whether `peerName` is a listed peer that is not blind (one to tell the key).
    func trustedPeer(named peerName: String) -> Bool {
        guard let peer = (try? store.peer(named: peerName)) ?? nil else { return false }
        return !peer.blind
    }

    /// This node's key, if it has one (read once per session; nil too when the file cannot be
    /// read, and `adopt` then says why it cannot keep another).
    func ownKey() -> InventoryKey? { try? InventoryKeyFile.load(store) }

    /// Takes `bytes` as this node's key if it has none (`own`, as read for this session); a
    /// different one is kept apart, with a warning, never replacing the key this node's blind
    /// copies are sealed with. Returns the key this node holds afterwards.
    @discardableResult
    func adopt(_ bytes: [UInt8]?, from peerName: String, own: InventoryKey?) -> InventoryKey? {
        guard let bytes, let offered = try? InventoryKey(bytes: bytes) else { return own }
        if let own {
            if own != offered {
                logger.warning(
                    "this node and peer \(peerName) hold different inventory keys (\(own.fingerprint) here, \(offered.fingerprint) there): blind copies sealed by one cannot be opened by the other; see README, \"Off-site backup\""
                )
            }
            return own
        }
        do {
            try offered.write(to: InventoryKeyFile.url(for: store.directory))
            logger.notice(
                "adopted the inventory key of peer \(peerName)", metadata: ["fingerprint": "\(offered.fingerprint)"])
            return offered
        } catch {
            logger.warning("could not keep the inventory key peer \(peerName) told", metadata: ["error": "\(error)"])
            return nil
        }
    }
}

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
