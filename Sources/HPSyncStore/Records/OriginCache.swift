import Foundation
import HPSyncCrypto
import HPSyncModel

/// Node IDs decoded from `origin` blobs, memoised: a store has few origins and many rows.
struct OriginCache {
    private var nodes: [Data: NodeID] = [:]

    mutating func node(_ bytes: Data, key: String) throws -> NodeID {
        if let node = nodes[bytes] { return node }
        guard let node = NodeID(bytes: bytes) else {
            throw StoreError.database("row \(key) has a malformed origin; run `hp-sync verify`")
        }
        nodes[bytes] = node
        return node
    }
}
