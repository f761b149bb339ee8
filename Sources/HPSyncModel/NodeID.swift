/// A node's identity: the SHA-256 of its DER-encoded TLS certificate (HPSyncCrypto computes it).
///
/// The text form follows Syncthing's device IDs so people can read it aloud and spot typos:
/// base32 (RFC 4648, no padding) of the 32 bytes, split into four 13-character chunks, each
/// followed by a Luhn mod 32 check character, shown as eight groups of seven separated by `-`.
/// Parsing ignores case, spaces and hyphens, reads `0`/`1`/`8` as `O`/`I`/`B`, and
/// verifies the check characters.
public struct NodeID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public static let byteCount = 32

    /// The raw 32 bytes; nodes are ordered by these bytes (the merge rule's tie-break).
    public let bytes: [UInt8]

    /// Wraps 32 raw bytes; nil for any other length.
    public init?(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        guard array.count == Self.byteCount else { return nil }
        self.bytes = array
    }

    /// Wraps bytes known to be 32 long: a digest HPSyncCrypto computed (`init(certificateDER:)`).
    package init(validatedBytes: [UInt8]) {
        self.bytes = validatedBytes
    }

    /// Parses the text form; see `NodeIDError` for what is rejected.
    public init(parsing text: String) throws(NodeIDError) {
        var cleaned: [UInt8] = []
        for scalar in text.unicodeScalars {
            switch scalar {
            case "-", " ", "\t": continue
            case "0": cleaned.append(UInt8(ascii: "O"))
            case "1": cleaned.append(UInt8(ascii: "I"))
            case "8": cleaned.append(UInt8(ascii: "B"))
            case "a"..."z": cleaned.append(UInt8(scalar.value) - 32)
            case "A"..."Z", "2"..."7": cleaned.append(UInt8(scalar.value))
            default: throw .invalidCharacter(Character(scalar))
            }
        }
        guard cleaned.count == 56 else { throw .wrongLength(cleaned.count) }
        var base32: [UInt8] = []
        for chunk in 0..<4 {
            let start = chunk * 14
            let body = Array(cleaned[start..<start + 13])
            guard Base32.luhnCheck(body) == cleaned[start + 13] else { throw .checkFailed }
            base32 += body
        }
        guard let decoded = Base32.decode(base32), decoded.count == Self.byteCount else {
            throw .checkFailed
        }
        self.bytes = decoded
    }

    /// The canonical text: eight groups of seven uppercase characters joined by `-`.
    public var description: String {
        let encoded = Base32.encode(bytes)
        var withChecks: [UInt8] = []
        for chunk in 0..<4 {
            let body = Array(encoded[chunk * 13..<chunk * 13 + 13])
            withChecks += body
            withChecks.append(Base32.luhnCheck(body))
        }
        var groups: [String] = []
        for group in 0..<8 {
            groups.append(String(decoding: withChecks[group * 7..<group * 7 + 7], as: UTF8.self))
        }
        return groups.joined(separator: "-")
    }

    /// The first group, enough to tell nodes apart in logs.
    public var short: String { String(description.prefix(7)) }

    public static func < (lhs: NodeID, rhs: NodeID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try NodeID(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Why a node ID's text was rejected.
public enum NodeIDError: Error, Equatable, CustomStringConvertible {
    case invalidCharacter(Character)
    case wrongLength(Int)
    case checkFailed

    public var description: String {
        switch self {
        case .invalidCharacter(let c):
            return
                "node ID contains '\(c)', which is not a base32 character; copy it again from `hp-sync id` on that node"
        case .wrongLength(let n):
            return
                "node ID has \(n) characters without separators, expected 56; copy it again from `hp-sync id` on that node"
        case .checkFailed:
            return "node ID check characters do not match (a typo?); copy it again from `hp-sync id` on that node"
        }
    }
}

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
