import HPSyncModel

/// The keys a sink session has handed to its committer, as a Bloom filter: when the store had
/// no rows when the session began, a key has a row only if this session committed it (or
/// another writer added it meanwhile, which the apply's own lookup inside its transaction
/// sees), so the merge rule needs to read only the keys this filter may contain.
///
/// No false negatives: a key it says is absent was never inserted. False positives (about 1%
/// at the capacity it was sized for, more beyond it) only cost a lookup that finds nothing.
struct SessionKeys {
    private var words: [UInt64]
    private let mask: UInt64
    private static let probes = 7

    /// Sized for `capacity` keys at about 10 bits each (at least 64 Ki bits).
    init(capacity: Int) {
        var bits = 1 << 16
        while bits < capacity * 10, bits < 1 << 34 { bits <<= 1 }
        words = Array(repeating: 0, count: bits / 64)
        mask = UInt64(bits - 1)
    }

    mutating func insert(_ key: ItemKey) {
        forEachBit(of: key) { words[$0 >> 6] |= 1 << ($0 & 63) }
    }

    func mayContain(_ key: ItemKey) -> Bool {
        var all = true
        forEachBit(of: key) { if words[$0 >> 6] & (1 << ($0 & 63)) == 0 { all = false } }
        return all
    }

    /// The filter's bits for `key`, by double hashing of one hash value.
    private func forEachBit(of key: ItemKey, _ body: (Int) -> Void) {
        let hash = UInt64(bitPattern: Int64(key.hashValue))
        let step = (hash >> 32) | 1
        var bit = hash
        for _ in 0..<Self.probes {
            body(Int(truncatingIfNeeded: bit & mask))
            bit &+= step
        }
    }
}
