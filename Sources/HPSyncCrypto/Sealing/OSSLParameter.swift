internal import CHPSyncOpenSSL

/// `OSSL_PARAM` entries for the EVP_MAC and EVP_KDF calls of sealing.
///
/// An `OSSL_PARAM` keeps the pointers it is given, so names and text values come from
/// `StaticString` (static, NUL-terminated storage), never from a bridged Swift `String` whose
/// temporary C string would be gone before OpenSSL reads it.
enum OSSLParameter {
    /// A UTF-8 string parameter, such as `digest` = `SHA256`.
    static func text(_ name: StaticString, _ value: StaticString) -> OSSL_PARAM {
        OSSL_PARAM_construct_utf8_string(cString(name), UnsafeMutablePointer(mutating: cString(value)), 0)
    }

    /// An octet string parameter over `bytes`, which must outlive the call that reads it.
    static func octets(_ name: StaticString, _ bytes: UnsafeRawBufferPointer) -> OSSL_PARAM {
        OSSL_PARAM_construct_octet_string(
            cString(name), UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
    }

    /// The entry that ends a parameter list.
    static func end() -> OSSL_PARAM {
        OSSL_PARAM_construct_end()
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
