internal import CHPSyncOpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's EVP_MAC interface.
enum HMACSHA256 {
    static let byteCount = 32

    /// The HMAC implementation, fetched once: a fetch looks the algorithm up under the provider
    /// store's lock, and record IDs are computed for every item of a sync. Never freed: it lives as
    /// long as the process, and OpenSSL's algorithm objects may be shared between threads.
    nonisolated(unsafe) private static let algorithm: OpaquePointer = {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
            fatalError("EVP_MAC_fetch(HMAC) failed: \(OpenSSLErrorQueue.drain())")
        }
        return mac
    }()

    /// Returns the 32-byte HMAC-SHA256 of `message` under `key`.
    static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        guard let context = EVP_MAC_CTX_new(algorithm) else {
            fatalError("EVP_MAC_CTX_new failed: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_MAC_CTX_free(context) }
        var parameters = [OSSLParameter.text("digest", "SHA256"), OSSLParameter.end()]
        // A NULL key asks OpenSSL to reuse the previous one, so an empty key gets a valid pointer.
        let keyStorage = key.isEmpty ? [0] : key
        let initialized = keyStorage.withUnsafeBufferPointer { keyBuffer in
            EVP_MAC_init(context, keyBuffer.baseAddress, key.count, &parameters)
        }
        guard initialized == 1 else { fatalError("EVP_MAC_init(HMAC-SHA256) failed: \(OpenSSLErrorQueue.drain())") }
        if !message.isEmpty {
            guard EVP_MAC_update(context, message, message.count) == 1 else {
                fatalError("EVP_MAC_update failed: \(OpenSSLErrorQueue.drain())")
            }
        }
        var output = [UInt8](repeating: 0, count: byteCount)
        var length = 0
        guard EVP_MAC_final(context, &output, &length, output.count) == 1, length == byteCount else {
            fatalError("EVP_MAC_final failed: \(OpenSSLErrorQueue.drain())")
        }
        return output
    }
}
