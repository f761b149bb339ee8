extension InventoryKey {
    /// Characters of a recovery key after its prefix: 34 bytes in 5-bit symbols.
    static let recoverySymbolCount = 55
    private static let recoveryPrefix = Array("hpk1".utf8)
    private static let checksumByteCount = 2

    /// The key as text to print and keep on paper: `hpk1-` then 11 groups of 5 characters.
    ///
    /// The 32 key bytes and a 2-byte checksum (the first bytes of their SHA-256), in Crockford's
    /// base32, lowercase. The checksum catches a mistyped key (each single-character typo but one in
    /// 65,536) before it is used to open anything.
    public var recoveryText: String {
        let symbols = CrockfordBase32.encode(bytes + Self.checksum(of: bytes))
        var text = Self.recoveryPrefix
        for start in stride(from: 0, to: symbols.count, by: 5) {
            text.append(UInt8(ascii: "-"))
            text.append(contentsOf: symbols[start..<min(start + 5, symbols.count)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Reads a key from its recovery text as a person would type it back.
    ///
    /// Case does not matter; spaces, dashes and line breaks are ignored; the `hpk1` prefix may be
    /// left out; o is read as 0, and i and l as 1. Anything else, a wrong length or a wrong checksum
    /// throws `badRecoveryKey` naming the problem.
    public init(recoveryText: String) throws(SealingError) {
        var characters: [UInt8] = []
        for scalar in recoveryText.unicodeScalars {
            switch scalar {
            case " ", "-", "\n", "\r", "\t": continue
            default:
                guard scalar.isASCII else {
                    throw .badRecoveryKey("'\(scalar)' is not a character of recovery keys")
                }
                characters.append(UInt8(scalar.value))
            }
        }
        // A key whose own text starts with hpk1 keeps it when it is exactly 55 characters long.
        if Self.startsWithPrefix(characters) && characters.count != Self.recoverySymbolCount {
            characters.removeFirst(Self.recoveryPrefix.count)
        }
        var values: [UInt8] = []
        values.reserveCapacity(characters.count)
        for (index, character) in characters.enumerated() {
            guard let value = CrockfordBase32.value(of: character) else {
                let shown = String(decoding: [character], as: UTF8.self)
                throw .badRecoveryKey("'\(shown)' (character \(index + 1) after hpk1-) is not used in recovery keys")
            }
            values.append(value)
        }
        guard values.count == Self.recoverySymbolCount else {
            throw .badRecoveryKey(
                "it has \(values.count) characters after hpk1-, not \(Self.recoverySymbolCount) "
                    + "(a character missing or one too many)")
        }
        guard let decoded = CrockfordBase32.decode(values: values) else {
            throw .badRecoveryKey("its last character cannot end a recovery key")
        }
        let key = Array(decoded.prefix(Self.byteCount))
        guard Array(decoded.suffix(Self.checksumByteCount)) == Self.checksum(of: key) else {
            throw .badRecoveryKey("its checksum does not match")
        }
        self.init(validatedBytes: key)
    }

    /// Whether `characters` start with hpk1 in either case, its 1 read as Crockford reads it (a
    /// person who copies o, i and l for 0 and 1 in the key does it in the prefix too).
    private static func startsWithPrefix(_ characters: [UInt8]) -> Bool {
        guard characters.count >= recoveryPrefix.count else { return false }
        let letters = characters.prefix(3).map { $0 | 0x20 }  // ASCII lowercase
        return letters == Array(recoveryPrefix.prefix(3)) && CrockfordBase32.value(of: characters[3]) == 1
    }

    private static func checksum(of key: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(key).bytes.prefix(checksumByteCount))
    }
}
