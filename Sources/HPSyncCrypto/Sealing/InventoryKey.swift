/// The secret shared by the trusted nodes of one inventory: 32 random bytes.
///
/// Everything sent to a blind peer is sealed under keys derived from it (see `BlindKeys`), so it
/// travels only between trusted nodes, over their mutual TLS, and on paper as the recovery text.
/// Its `description` shows the fingerprint, never the key, so a key in a log line leaks nothing.
public struct InventoryKey: Sendable, Equatable, CustomStringConvertible {
    public static let byteCount = 32

    /// The raw key.
    public let bytes: [UInt8]

    /// Wraps 32 key bytes; throws `badRecoveryKey` for any other length.
    public init(bytes: [UInt8]) throws(SealingError) {
        guard bytes.count == Self.byteCount else {
            throw .badRecoveryKey("an inventory key is \(Self.byteCount) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A new key from OpenSSL's CSPRNG.
    public static func random() -> InventoryKey {
        InventoryKey(validatedBytes: SecureRandom.bytesOrTrap(byteCount))
    }

    init(validatedBytes: [UInt8]) {
        self.bytes = validatedBytes
    }

    /// 16 hex digits that two nodes can compare to see they hold the same key, without showing it.
    ///
    /// The first 8 bytes of HMAC-SHA256(key, "hp-sync fingerprint"): a MAC under the key rather than
    /// a hash of it, so it is a value no other use of the key produces.
    public var fingerprint: String {
        let code = HMACSHA256.authenticationCode(for: Array("hp-sync fingerprint".utf8), key: bytes)
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in code.prefix(8) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public var description: String { "InventoryKey(fingerprint \(fingerprint))" }

    /// Compares in time independent of where the keys differ.
    ///
    /// Why: a key compared against one an attacker supplies should not tell how many leading bytes
    /// matched.
    public static func == (lhs: InventoryKey, rhs: InventoryKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.bytes.indices {
            difference |= lhs.bytes[index] ^ rhs.bytes[index]
        }
        return difference == 0
    }
}
