internal import CHPSyncOpenSSL

/// The OpenSSL library this process runs with (for `hp-sync --version` and bug reports).
public enum OpenSSLVersion {
    /// "OpenSSL 3.0.15 3 Sep 2024": the library loaded at run time, not the headers built against.
    public static var runtime: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}

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

/// Reads and clears OpenSSL's thread-local error queue, so errors carry its text.
enum OpenSSLErrorQueue {
    /// Drains the queue into one line: "error:0A000086:SSL routines::certificate verify failed; ...".
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error reported" : messages.joined(separator: "; ")
    }

    /// Empties the queue so a later failure does not report stale errors.
    static func clear() {
        ERR_clear_error()
    }
}
