import HPSyncCrypto
import HPSyncEngine
import HPSyncProtocol
import HPSyncStore

/// What `hp-sync --version` prints: enough to answer "which build is this?" in a bug report.
enum VersionText {
    static var full: String {
        """
        hp-sync \(HPSyncVersion.current)
        protocol versions: \(ProtocolLimits.minVersion) to \(ProtocolLimits.maxVersion)
        commit: \(BuildCommit.hash ?? "unknown (not built by Scripts/install)")
        OpenSSL: \(OpenSSLVersion.runtime)
        SQLite: \(SQLiteVersion.runtime)
        Swift: \(swiftVersion)
        """
    }

    /// The language mode's compiler, to the minor version.
    static var swiftVersion: String {
        #if compiler(>=6.4)
            return "6.4 or later"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }
}
