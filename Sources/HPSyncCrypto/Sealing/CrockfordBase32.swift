import HPSyncModel

/// Crockford's base32 (https://www.crockford.com/base32.html): digits and lowercase letters without
/// i, l, o and u, so a key read off paper survives the usual misreadings.
///
/// The bits are grouped as the node IDs' RFC 4648 base32 groups them (`Base32`); only the alphabet
/// and the reading of look-alike letters differ.
enum CrockfordBase32 {
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// Encodes `bytes` as 5-bit groups, most significant bit first; the last group is padded with
    /// zero bits.
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        Base32.fiveBitValues(bytes).map { alphabet[Int($0)] }
    }

    /// The value of one symbol, in either case, with o read as 0 and i and l as 1; nil for u and
    /// anything outside the alphabet.
    static func value(of symbol: UInt8) -> UInt8? {
        let lower = symbol | 0x20  // ASCII letters only; digits are unchanged by this bit
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return symbol - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            switch lower {
            case UInt8(ascii: "o"): return 0
            case UInt8(ascii: "i"), UInt8(ascii: "l"): return 1
            default: return alphabet.firstIndex(of: lower).map { UInt8($0) }
            }
        default:
            return nil
        }
    }

    /// Decodes 5-bit values into bytes; nil if the bits past the last whole byte are not zero.
    ///
    /// Why refuse them: a typo in the last symbol that changed only those bits would decode to the
    /// same bytes and pass the checksum, so the paper copy would differ from what hp-sync printed
    /// without anyone being told.
    static func decode(values: [UInt8]) -> [UInt8]? {
        Base32.bytes(fromFiveBitValues: values)
    }
}
