/// RFC 4648 base32 without padding, plus Syncthing's Luhn mod 32 check character.
package enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        fiveBitValues(bytes).map { alphabet[Int($0)] }
    }

    static func decode(_ chars: [UInt8]) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(chars.count)
        for c in chars {
            guard let value = codepoint(c) else { return nil }
            values.append(UInt8(value))
        }
        return bytes(fromFiveBitValues: values)
    }

    /// `bytes` as 5-bit values, most significant bit first; the last is padded with zero bits.
    ///
    /// Shared with HPSyncCrypto's recovery keys, which spell the same bits with Crockford's
    /// alphabet.
    package static func fiveBitValues(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(UInt8((buffer >> UInt32(bits - 5)) & 31))
                bits -= 5
            }
        }
        if bits > 0 {
            out.append(UInt8((buffer << UInt32(5 - bits)) & 31))
        }
        return out
    }

    /// The bytes spelled by 5-bit values; nil if the bits past the last whole byte are not zero.
    package static func bytes(fromFiveBitValues values: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = buffer << 5 | UInt32(value & 31)
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        // Leftover bits must be zero padding, or two texts would decode to one value.
        if bits > 0 && (buffer & ((1 << UInt32(bits)) - 1)) != 0 { return nil }
        return out
    }

    static func codepoint(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(c - UInt8(ascii: "A"))
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return Int(c - UInt8(ascii: "2")) + 26
        default: return nil
        }
    }

    static func luhnCheck(_ chars: [UInt8]) -> UInt8 {
        var factor = 1
        var sum = 0
        for c in chars {
            let addend = factor * (codepoint(c) ?? 0)
            factor = factor == 2 ? 1 : 2
            sum += addend / 32 + addend % 32
        }
        return alphabet[(32 - sum % 32) % 32]
    }
}
