internal import CHPSyncOpenSSL

/// How OpenSSL's global state ends with the process.
public enum OpenSSLProcess {
    /// Leaves OpenSSL's global state to the end of the process instead of freeing it from an
    /// exit handler. A thread still in OpenSSL when the process exits (a `serve` whose grace ran
    /// out with sessions hashing and encrypting, a pull that failed while its identity was being
    /// read) otherwise crashes the exit: SIGSEGV, or a fatal "EVP_DigestInit_ex(SHA-256) failed"
    /// (3 of 14 `serve --grace 0` stopped with two full pulls in flight). Takes effect only as
    /// the process's first OpenSSL call.
    public static func keepStateAtExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
