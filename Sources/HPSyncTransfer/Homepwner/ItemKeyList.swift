import HPSyncModel

/// Item keys held as their 16 bytes rather than as 36-character strings (about 80 bytes each on
/// the heap): an import of a 1,000,000-item folder with a few photos lists nearly every key as
/// without an image.
public struct ItemKeyList: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    private var keys: [KeyBits] = []

    public init() {}

    public init(arrayLiteral keys: ItemKey...) {
        self.keys = keys.map(KeyBits.init)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }
    public subscript(position: Int) -> ItemKey { keys[position].key }

    public mutating func append(_ key: ItemKey) { keys.append(KeyBits(key)) }

    public mutating func append(contentsOf keys: some Sequence<ItemKey>) {
        self.keys.append(contentsOf: keys.map(KeyBits.init))
    }
}

/// The 128 bits of an item key (its canonical text is 32 upper-case hex digits and four
/// hyphens), for sets and lists of many keys.
struct KeyBits: Hashable, Sendable {
    private(set) var high: UInt64 = 0
    private(set) var low: UInt64 = 0

    init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }

    init(_ key: ItemKey) {
        var count = 0
        for character in key.rawValue.utf8 where character != UInt8(ascii: "-") {
            let nibble = UInt64(
                character <= UInt8(ascii: "9") ? character - UInt8(ascii: "0") : character - UInt8(ascii: "A") + 10)
            if count < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            count += 1
        }
    }

    /// The key again, from its canonical text.
    var key: ItemKey {
        let hex = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, half) in [high, low].enumerated() {
            for nibble in 0..<16 {
                let position = index * 16 + nibble
                if position == 8 || position == 12 || position == 16 || position == 20 {
                    text.append(UInt8(ascii: "-"))
                }
                text.append(hex[Int(half >> UInt64(60 - nibble * 4) & 0x0F)])
            }
        }
        // The text of a valid key, so it is a key again.
        return try! ItemKey(String(decoding: text, as: UTF8.self))
    }
}
