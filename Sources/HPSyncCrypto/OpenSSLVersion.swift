internal import CHPSyncOpenSSL

/// The OpenSSL library this process runs with (for `hp-sync --version` and bug reports).
public enum OpenSSLVersion {
    /// "OpenSSL 3.0.15 3 Sep 2024": the library loaded at run time, not the headers built against.
    public static var runtime: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
