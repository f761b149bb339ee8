/// A 32-byte SHA-256 digest; its text form is 64 lowercase hex digits.
public struct SHA256Digest: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public static let byteCount = 32

    /// The raw 32 bytes.
    public let bytes: [UInt8]

    /// Wraps bytes known to be 32 long: what HPSyncCrypto's `SHA256` computed.
    package init(validatedBytes: [UInt8]) {
        self.bytes = validatedBytes
    }

    /// Wraps raw bytes; nil unless there are exactly 32 of them.
    public init?(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        guard array.count == Self.byteCount else { return nil }
        self.bytes = array
    }

    /// Parses 64 hex digits in either case; nil for anything else.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else {
                return nil
            }
            out.append(high << 4 | low)
            index += 2
        }
        self.bytes = out
    }

    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = SHA256Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a SHA-256 hex digest: \(text.prefix(80))")
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
