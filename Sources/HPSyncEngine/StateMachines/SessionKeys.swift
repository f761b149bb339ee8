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
        var bits = Probes(key, mask: mask)
        for _ in 0..<Self.probes {
            let bit = bits.next()
            words[bit >> 6] |= 1 << (bit & 63)
        }
    }

    func mayContain(_ key: ItemKey) -> Bool {
        var bits = Probes(key, mask: mask)
        for _ in 0..<Self.probes {
            let bit = bits.next()
            if words[bit >> 6] & (1 << (bit & 63)) == 0 { return false }
        }
        return true
    }

    /// The filter's bits for a key, by double hashing of one hash value. (A value of its own, not
    /// a closure over the filter: writing `words` inside such a closure copies the whole array.)
    private struct Probes {
        private var bit: UInt64
        private let step: UInt64
        private let mask: UInt64

        init(_ key: ItemKey, mask: UInt64) {
            let hash = UInt64(bitPattern: Int64(key.hashValue))
            bit = hash
            step = (hash >> 32) | 1
            self.mask = mask
        }

        mutating func next() -> Int {
            defer { bit &+= step }
            return Int(truncatingIfNeeded: bit & mask)
        }
    }
}
