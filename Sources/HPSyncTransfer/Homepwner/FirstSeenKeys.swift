/// The keys of a folder's items, each with the source it first appeared in and a hash of its
/// contents, for the check that a repeated key agrees with its first appearance.
///
/// Open addressing in one allocation sized once from the item count (24-byte slots, at most
/// three quarters full: 32 bytes a key): a `Dictionary` grew by doubling to 64 MB for 1,000,000
/// keys and held the old table beside the new one while it did.
struct FirstSeenKeys {
    /// An empty slot has `tag` 0; a used one has bit 63 set, the source in bits 60-62 and the
    /// low 60 bits of the content hash below.
    private struct Slot {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var tag: UInt64 = 0
    }

    private var slots: [Slot]
    private var used = 0
    private static let hashBits: UInt64 = (1 << 60) - 1

    /// A table for `count` keys (it grows if more come: a file that changed since it was counted).
    init(count: Int) {
        slots = Array(repeating: Slot(), count: max(8, count + count / 3 + 1))
    }

    /// Records `key` as first seen in `source` (0 to 7) with `content`; when it was seen before,
    /// records nothing and returns where it first was and whether the contents agree.
    mutating func insert(_ key: KeyBits, source: Int, content: Int) -> (source: Int, sameContent: Bool)? {
        precondition((0..<8).contains(source), "a folder has at most four data files")
        if used * 4 >= slots.count * 3 { grow() }
        let hash = UInt64(bitPattern: Int64(content)) & Self.hashBits
        // Keys are random UUIDs, but a test (or a hand-made archive) may count them up.
        var mixed = (key.high ^ (key.low &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        mixed ^= mixed >> 31
        var index = Int(mixed.multipliedFullWidth(by: UInt64(slots.count)).high)
        for _ in 0..<slots.count {
            let slot = slots[index]
            if slot.tag == 0 {
                slots[index] = Slot(high: key.high, low: key.low, tag: 1 << 63 | UInt64(source) << 60 | hash)
                used += 1
                return nil
            }
            if slot.high == key.high && slot.low == key.low {
                return (Int(slot.tag >> 60 & 7), slot.tag & Self.hashBits == hash)
            }
            index = index + 1 == slots.count ? 0 : index + 1
        }
        preconditionFailure("the table of \(slots.count) keys is full")
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        used = 0
        for slot in old where slot.tag != 0 {
            _ = insert(
                KeyBits(high: slot.high, low: slot.low), source: Int(slot.tag >> 60 & 7),
                content: Int(Int64(bitPattern: slot.tag & Self.hashBits)))
        }
    }
}
