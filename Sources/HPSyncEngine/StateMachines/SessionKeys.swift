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

    /// The most bits a filter takes (8 MiB): `capacity` comes from the source's `entries_ahead`,
    /// which a hostile or broken source may set to anything. Beyond about 6 million keys the
    /// false positives grow, which costs lookups, never correctness.
    static let maxBits = 1 << 26

    /// Sized for `capacity` keys at about 10 bits each (at least 64 Ki bits, at most `maxBits`).
    init(capacity: Int) {
        let wanted = min(max(capacity, 0), Self.maxBits / 10) * 10
        var bits = 1 << 16
        while bits < wanted, bits < Self.maxBits { bits <<= 1 }
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

    /// The filter's size in bits.
    var bitCount: Int { words.count * 64 }

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
