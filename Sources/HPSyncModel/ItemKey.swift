/// An item's persistent name: a UUID in canonical text, uppercase with hyphens as NSUUID
/// prints it (`4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04`).
///
/// Input in any case is accepted and normalised; anything else is rejected. Because only this
/// shape can exist, a key is safe to use as a file name (no `/`, no `..`).
///
/// Equality, hashing and order use the key's 128 bits, read from the text once when the key is
/// made: a sync puts every key in sets and dictionaries and sorts batches by key, and hashing,
/// comparing and parsing 36 bytes of text each time took ~14% of a million-item pull's session
/// thread. The canonical text and the bits determine each other, so both agree.
public struct ItemKey: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    /// The canonical uppercase text.
    public let rawValue: String
    /// The key's 128 bits, most significant first.
    private let high: UInt64
    private let low: UInt64

    /// Validates and normalises `text`; throws `ItemKeyError.malformed` for anything but a UUID.
    public init(_ text: String) throws(ItemKeyError) {
        // Peers and files send keys canonical already: those are kept as they are, no copy made.
        if let bits = Self.canonicalBits(text) {
            self.rawValue = text
            (high, low) = bits
            return
        }
        guard let canonical = Self.canonicalize(text), let bits = Self.canonicalBits(canonical) else {
            throw .malformed(text)
        }
        self.rawValue = canonical
        (high, low) = bits
    }

    public static func == (lhs: ItemKey, rhs: ItemKey) -> Bool { lhs.high == rhs.high && lhs.low == rhs.low }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
    }

    /// A new random key.
    public static func random() -> ItemKey {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new random (version 4) key drawn from `generator`, for reproducible tests.
    public static func random(using generator: inout some RandomNumberGenerator) -> ItemKey {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return ItemKey(bytes: bytes)!
    }

    /// The key whose 128 bits are `bytes` (16 of them, most significant first); nil for another
    /// count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let digits = Array("0123456789ABCDEF")
        var chars: [Character] = []
        chars.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { chars.append("-") }
            chars.append(digits[Int(byte >> 4)])
            chars.append(digits[Int(byte & 0x0F)])
        }
        guard let key = try? ItemKey(String(chars)) else { return nil }
        self = key
    }

    /// The key's 128 bits, as two halves: what a compact table of keys keeps instead of the text.
    public var bits: (high: UInt64, low: UInt64) { (high, low) }

    /// The key's 128 bits as 16 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    public var description: String { rawValue }

    /// The order of the texts (fixed width, uppercase hex, hyphens in the same places).
    public static func < (lhs: ItemKey, rhs: ItemKey) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try ItemKey(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Whether `text` is exactly the canonical form: what `canonicalize` would return unchanged.
    static func isCanonical(_ text: String) -> Bool { canonicalBits(text) != nil }

    /// The 128 bits of `text` when it is exactly the canonical form, else nil: one pass checks
    /// the shape and reads the digits.
    static func canonicalBits(_ text: String) -> (high: UInt64, low: UInt64)? {
        let bits = text.utf8.withContiguousStorageIfAvailable { bytes -> (high: UInt64, low: UInt64)? in
            let dash = UInt8(ascii: "-")
            guard bytes.count == 36, bytes[8] == dash, bytes[13] == dash, bytes[18] == dash, bytes[23] == dash
            else { return nil }
            return hexNibbles.withUnsafeBufferPointer { table -> (high: UInt64, low: UInt64)? in
                // No branch per digit (hex digits are letters or not at random, which a branch
                // mispredicts): every byte's table entry is ORed into `invalid`, checked once.
                var high: UInt64 = 0
                var low: UInt64 = 0
                var invalid: UInt8 = 0
                // Digits 0-7, 9-12 and 14-17 are the high half, 19-22 and 24-35 the low one.
                for index in 0..<36 where index != 8 && index != 13 && index != 18 && index != 23 {
                    let nibble = table[Int(bytes[index])]
                    invalid |= nibble
                    if index < 18 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
                }
                return invalid & 0xF0 == 0 ? (high, low) : nil
            }
        }
        return bits ?? nil
    }

    /// Each byte's value as an uppercase hex digit, 0xFF for any other byte.
    private static let hexNibbles: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }

    /// Uppercase 8-4-4-4-12 hex text, or nil when `text` is not exactly that shape.
    static func canonicalize(_ text: String) -> String? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (index, c) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                out.append(c)
                continue
            }
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"):
                out.append(c)
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                out.append(c - 32)
            default:
                return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a text was not accepted as an item key.
public enum ItemKeyError: Error, Equatable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let text):
            let shown = text.count > 60 ? String(text.prefix(60)) + "..." : text
            return "'\(shown)' is not an item key: expected a UUID such as 4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04"
        }
    }
}

extension ItemKey {
    /// The key's 128 bits, most significant first: two keys compare as their texts do (fixed
    /// width, uppercase hex), without comparing strings.
    package var orderValue: (high: UInt64, low: UInt64) { (high, low) }

    /// Wraps text read back from this store's own database, which only ever stores canonical
    /// keys (every write goes through `init(_:)`): no error to handle on hot read paths (the
    /// change feed reads 100,000 keys in well under 100 ms).
    package init(storedCanonical text: String) {
        let bits = Self.canonicalBits(text)
        assert(bits != nil, "non-canonical key in the database: \(text)")
        self.rawValue = text
        // A damaged row's text still makes a key (reading never stops over it; `verify` reports
        // the row): the bits of its normalised text, else a 64-bit hash of the text over a low
        // half of all ones, which equals another key's bits only by a collision of that hash.
        (high, low) =
            bits ?? Self.canonicalize(text).flatMap(Self.canonicalBits)
            ?? (UInt64(bitPattern: Int64(text.hashValue)), UInt64.max)
    }
}
