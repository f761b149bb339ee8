internal import CHPSyncOpenSSL

/// Random bytes from OpenSSL's CSPRNG, for keys, nonces and salts.
enum SecureRandom {
    /// Returns `count` random bytes, or throws `randomFailed`.
    static func bytes(_ count: Int) throws(SealingError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            OpenSSLErrorQueue.clear()
            throw .randomFailed
        }
        return bytes
    }

    /// Returns `count` random bytes; stops the process if the generator fails.
    ///
    /// Why stop rather than throw: a nonce or key that is not random breaks the seal for good, and
    /// a CSPRNG that fails means a broken system (Swift's own `SystemRandomNumberGenerator` traps
    /// too). Sealing stays non-throwing for its callers.
    static func bytesOrTrap(_ count: Int) -> [UInt8] {
        do {
            return try bytes(count)
        } catch {
            fatalError("\(error)")
        }
    }
}
