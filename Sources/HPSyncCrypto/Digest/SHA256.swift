internal import CHPSyncOpenSSL
import HPSyncModel

/// A streaming SHA-256 hasher backed by OpenSSL's EVP interface.
///
/// Feed it with `update(_:)` as bytes arrive and call `finalize()` once; images are
/// hashed this way while they stream, so no image is ever held whole in memory.
public struct SHA256: ~Copyable {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new() else {
            fatalError("EVP_MD_CTX_new failed: out of memory")
        }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("EVP_DigestInit_ex(SHA-256) failed: \(OpenSSLErrorQueue.drain())")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds bytes to the running digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Adds the bytes of any contiguous collection to the running digest.
    public mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if handled == nil {
            let array = Array(bytes)
            array.withUnsafeBytes { update($0) }
        }
    }

    /// Returns the digest; the hasher cannot be used afterwards.
    public consuming func finalize() -> SHA256Digest {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return SHA256Digest(validatedBytes: output)
    }

    /// Hashes a whole buffer at once.
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
