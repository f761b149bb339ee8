internal import CHPSyncOpenSSL

/// ChaCha20-Poly1305 (RFC 8439) through OpenSSL's EVP cipher interface: the one AEAD of sealing.
///
/// Stateless: each call makes, uses and frees its own `EVP_CIPHER_CTX`, so values that seal can be
/// shared between threads and copied freely.
enum ChaChaPoly {
    static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// The cipher, fetched once: `EVP_chacha20_poly1305()` would be fetched again under the
    /// provider store's lock at every initialisation (OpenSSL 3's implicit fetch), once per record.
    nonisolated(unsafe) private static let cipher: OpaquePointer = {
        guard let cipher = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil) else {
            fatalError("EVP_CIPHER_fetch(ChaCha20-Poly1305) failed: \(OpenSSLErrorQueue.drain())")
        }
        return cipher
    }()

    /// Encrypts `plaintext` and returns ciphertext ‖ 16-byte tag.
    static func seal(key: [UInt8], nonce: [UInt8], plaintext: UnsafeRawBufferPointer, aad: [UInt8]) -> [UInt8] {
        let context = makeContext(key: key, nonce: nonce, encrypt: true)
        defer { EVP_CIPHER_CTX_free(context) }
        addAssociatedData(aad, to: context)
        let count = plaintext.count
        return [UInt8](unsafeUninitializedCapacity: count + tagByteCount) { output, initialized in
            let buffer = UnsafeMutableRawBufferPointer(output)
            let base = buffer.baseAddress!
            transform(context, from: plaintext, to: buffer)
            var finalLength: Int32 = 0
            guard EVP_CipherFinal_ex(context, base.assumingMemoryBound(to: UInt8.self) + count, &finalLength) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), base + count) == 1
            else {
                fatalError("ChaCha20-Poly1305 seal failed: \(OpenSSLErrorQueue.drain())")
            }
            initialized = count + tagByteCount
        }
    }

    /// Encrypts `plaintext` and returns ciphertext ‖ 16-byte tag.
    static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], aad: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { seal(key: key, nonce: nonce, plaintext: $0, aad: aad) }
    }

    /// Verifies and decrypts ciphertext ‖ tag; nil if the tag does not verify (or `sealed` is
    /// shorter than a tag). No byte of an unverified plaintext is returned.
    static func open(key: [UInt8], nonce: [UInt8], sealed: UnsafeRawBufferPointer, aad: [UInt8]) -> [UInt8]? {
        guard sealed.count >= tagByteCount else { return nil }
        let count = sealed.count - tagByteCount
        let context = makeContext(key: key, nonce: nonce, encrypt: false)
        defer { EVP_CIPHER_CTX_free(context) }
        var tag = Array(sealed[count...])
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), &tag) == 1 else {
            fatalError("ChaCha20-Poly1305 set tag failed: \(OpenSSLErrorQueue.drain())")
        }
        addAssociatedData(aad, to: context)
        var verified = false
        let plaintext = [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            let buffer = UnsafeMutableRawBufferPointer(output)
            transform(context, from: UnsafeRawBufferPointer(rebasing: sealed[..<count]), to: buffer)
            var finalLength: Int32 = 0
            var scratch = [UInt8](repeating: 0, count: 16)
            verified = EVP_CipherFinal_ex(context, &scratch, &finalLength) == 1
            if !verified {
                // The plaintext was written before the tag was checked: wipe it rather than leave it.
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
            }
            initialized = count
        }
        guard verified else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return plaintext
    }

    /// Verifies and decrypts ciphertext ‖ tag; nil if the tag does not verify.
    static func open(key: [UInt8], nonce: [UInt8], sealed: [UInt8], aad: [UInt8]) -> [UInt8]? {
        sealed.withUnsafeBytes { open(key: key, nonce: nonce, sealed: $0, aad: aad) }
    }

    private static func makeContext(key: [UInt8], nonce: [UInt8], encrypt: Bool) -> OpaquePointer {
        precondition(key.count == keyByteCount, "ChaCha20-Poly1305 key must be 32 bytes")
        precondition(nonce.count == nonceByteCount, "ChaCha20-Poly1305 nonce must be 12 bytes")
        guard let context = EVP_CIPHER_CTX_new() else {
            fatalError("EVP_CIPHER_CTX_new failed: out of memory")
        }
        guard EVP_CipherInit_ex2(context, cipher, nil, nil, encrypt ? 1 : 0, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceByteCount), nil) == 1,
            EVP_CipherInit_ex2(context, nil, key, nonce, -1, nil) == 1
        else {
            EVP_CIPHER_CTX_free(context)
            fatalError("ChaCha20-Poly1305 initialisation failed: \(OpenSSLErrorQueue.drain())")
        }
        return context
    }

    private static func addAssociatedData(_ aad: [UInt8], to context: OpaquePointer) {
        guard !aad.isEmpty else { return }
        var length: Int32 = 0
        guard EVP_CipherUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else {
            fatalError("ChaCha20-Poly1305 associated data failed: \(OpenSSLErrorQueue.drain())")
        }
    }

    /// Runs the cipher over `input` into `output` (at least as long), in slices an `int` can count.
    private static func transform(
        _ context: OpaquePointer, from input: UnsafeRawBufferPointer, to output: UnsafeMutableRawBufferPointer
    ) {
        let sliceLimit = 1 << 30
        var offset = 0
        while offset < input.count {
            let length = min(sliceLimit, input.count - offset)
            var written: Int32 = 0
            guard
                EVP_CipherUpdate(
                    context, (output.baseAddress! + offset).assumingMemoryBound(to: UInt8.self), &written,
                    (input.baseAddress! + offset).assumingMemoryBound(to: UInt8.self), Int32(length)) == 1,
                Int(written) == length
            else {
                fatalError("ChaCha20-Poly1305 update failed: \(OpenSSLErrorQueue.drain())")
            }
            offset += length
        }
    }
}
