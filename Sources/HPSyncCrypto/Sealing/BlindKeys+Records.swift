extension BlindKeys {
    /// Plaintexts are padded to a multiple of this, so the host learns a record's size only to
    /// the nearest 256 bytes.
    static let recordPaddingBlock = 256
    private static let recordLabel = Array("hp-sync record v1".utf8)
    private static let headLabel = Array("hp-sync head v1".utf8)
    private static let sealOverhead = ChaChaPoly.nonceByteCount + ChaChaPoly.tagByteCount

    /// The size of a sealed record (or head) whose plaintext is `plainSize` bytes: nonce, padded
    /// plaintext, tag. A blind host can check a record's size against this shape without any key.
    public static func sealedRecordSize(plainSize: Int) -> Int {
        sealOverhead + paddedRecordSize(plainSize)
    }

    /// Seals one record: 12-byte nonce ‖ ChaCha20-Poly1305 ciphertext ‖ 16-byte tag.
    ///
    /// The plaintext is padded ISO/IEC 7816-4 style (0x80, then zeros) to the next multiple of 256
    /// bytes, always with at least one byte of padding. The nonce is random: 96 random bits make a
    /// repeat negligible for the billions of seals one key may see, and no counter has to be kept
    /// in step between nodes. The associated data is `"hp-sync record v1"` ‖ `context`, where the
    /// caller binds what the record must not be moved to (its record ID, stamp, origin): the same
    /// sealed bytes offered under another context do not open.
    public func sealRecord(_ plaintext: [UInt8], context: [UInt8]) -> [UInt8] {
        Self.seal(plaintext, key: recordKey, associatedData: Self.recordLabel + context)
    }

    /// Verifies and opens a record sealed by `sealRecord(_:context:)` with the same `context`.
    ///
    /// Throws `authenticationFailed` if it was altered, truncated, sealed under another key or
    /// for another context, and `malformed` if its length cannot be a sealed record's.
    public func openRecord(_ sealed: [UInt8], context: [UInt8]) throws(SealingError) -> [UInt8] {
        try Self.open(sealed, key: recordKey, associatedData: Self.recordLabel + context, what: "sealed record")
    }

    /// Seals the head (the signed summary of what a blind peer holds) under its own key.
    ///
    /// The same construction as `sealRecord(_:context:)`, padding included (one code path, and the
    /// head's size then says as little as a record's), under the head subkey with the associated
    /// data `"hp-sync head v1"` ‖ `context`.
    public func sealHead(_ plaintext: [UInt8], context: [UInt8]) -> [UInt8] {
        Self.seal(plaintext, key: headKey, associatedData: Self.headLabel + context)
    }

    /// Verifies and opens a head sealed by `sealHead(_:context:)` with the same `context`.
    public func openHead(_ sealed: [UInt8], context: [UInt8]) throws(SealingError) -> [UInt8] {
        try Self.open(sealed, key: headKey, associatedData: Self.headLabel + context, what: "sealed head")
    }

    /// The construction of records and heads: a fresh random nonce unless one is given
    /// (known-answer tests fix it).
    static func seal(
        _ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8],
        nonce: [UInt8] = SecureRandom.bytesOrTrap(ChaChaPoly.nonceByteCount)
    ) -> [UInt8] {
        // Zeros first, then the plaintext copied in: appending a repeated zero element by element
        // cost ~45 µs a record in a debug build, ten times the sealing itself.
        var padded = [UInt8](repeating: 0, count: paddedRecordSize(plaintext.count))
        padded.withUnsafeMutableBytes { $0.copyBytes(from: plaintext) }
        padded[plaintext.count] = 0x80
        return nonce + ChaChaPoly.seal(key: key, nonce: nonce, plaintext: padded, aad: associatedData)
    }

    private static func open(
        _ sealed: [UInt8], key: [UInt8], associatedData: [UInt8], what: String
    ) throws(SealingError) -> [UInt8] {
        let body = sealed.count - sealOverhead
        guard body >= recordPaddingBlock, body % recordPaddingBlock == 0 else {
            throw .malformed(
                "a \(what) is 28 bytes more than a multiple of \(recordPaddingBlock) (at least 284); this one is "
                    + "\(sealed.count) bytes")
        }
        let nonce = Array(sealed[..<ChaChaPoly.nonceByteCount])
        let opened = sealed.withUnsafeBytes { raw in
            ChaChaPoly.open(
                key: key, nonce: nonce, sealed: UnsafeRawBufferPointer(rebasing: raw[ChaChaPoly.nonceByteCount...]),
                aad: associatedData)
        }
        guard var padded = opened else { throw .authenticationFailed(what: what) }
        // The padding was sealed with the rest, so only a holder of the key could have got it
        // wrong: not damage in transit, but data no hp-sync sealer made. Refused as unauthentic.
        var marker = padded.count - 1
        while marker >= 0 && padded[marker] == 0 { marker -= 1 }
        guard marker >= 0, padded[marker] == 0x80, padded.count - marker <= recordPaddingBlock else {
            throw .authenticationFailed(what: "\(what) (its padding)")
        }
        padded.removeLast(padded.count - marker)
        return padded
    }

    private static func paddedRecordSize(_ plainSize: Int) -> Int {
        (plainSize / recordPaddingBlock + 1) * recordPaddingBlock
    }
}
