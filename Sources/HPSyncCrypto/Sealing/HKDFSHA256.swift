internal import CHPSyncOpenSSL

/// HKDF-SHA256 (RFC 5869), extract then expand, through OpenSSL's EVP_KDF interface.
enum HKDFSHA256 {
    /// The HKDF implementation, fetched once (see `HMACSHA256.algorithm` for why).
    nonisolated(unsafe) private static let algorithm: OpaquePointer = {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else {
            fatalError("EVP_KDF_fetch(HKDF) failed: \(OpenSSLErrorQueue.drain())")
        }
        return kdf
    }()

    /// Derives `byteCount` bytes (at most 255 × 32) from `inputKeyMaterial`.
    ///
    /// An empty salt is left out, which RFC 5869 defines as a salt of zeros: HMAC pads both to the
    /// same block.
    static func deriveKey(inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], byteCount: Int) -> [UInt8] {
        precondition(byteCount > 0 && byteCount <= 255 * HMACSHA256.byteCount, "HKDF output length out of range")
        guard let context = EVP_KDF_CTX_new(algorithm) else {
            fatalError("EVP_KDF_CTX_new failed: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: byteCount)
        // Empty buffers still get a valid pointer: OpenSSL treats a NULL key as "no key set".
        let key = inputKeyMaterial.isEmpty ? [0] : inputKeyMaterial
        let derived = key.withUnsafeBytes { keyBytes in
            salt.withUnsafeBytes { saltBytes in
                info.withUnsafeBytes { infoBytes in
                    var parameters = [
                        OSSLParameter.text("digest", "SHA256"),
                        OSSLParameter.octets(
                            "key", UnsafeRawBufferPointer(rebasing: keyBytes[..<inputKeyMaterial.count])),
                    ]
                    if !salt.isEmpty { parameters.append(OSSLParameter.octets("salt", saltBytes)) }
                    if !info.isEmpty { parameters.append(OSSLParameter.octets("info", infoBytes)) }
                    parameters.append(OSSLParameter.end())
                    return EVP_KDF_derive(context, &output, byteCount, &parameters)
                }
            }
        }
        guard derived == 1 else { fatalError("EVP_KDF_derive(HKDF-SHA256) failed: \(OpenSSLErrorQueue.drain())") }
        return output
    }
}
