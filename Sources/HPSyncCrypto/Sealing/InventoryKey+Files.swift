import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension InventoryKey {
    /// Reads the key file at `url`: nil if there is none.
    ///
    /// The file holds the recovery text. A file that group or others may read is refused with
    /// `TLSError.insecureKeyPermissions`, as the node's private key is; one that does not hold a
    /// recovery key throws `SealingError.invalidKeyFile`.
    public static func read(from url: URL) throws -> InventoryKey? {
        guard IdentityFiles.exists(url) else { return nil }
        let contents = try IdentityFiles.readPrivate(url)
        guard let text = String(bytes: contents, encoding: .utf8) else {
            throw SealingError.invalidKeyFile(path: url.path, reason: "it is not UTF-8 text")
        }
        do {
            return try InventoryKey(recoveryText: text)
        } catch {
            guard case .badRecoveryKey(let reason) = error else { throw error }
            throw SealingError.invalidKeyFile(path: url.path, reason: reason)
        }
    }

    /// Writes the key's recovery text (and a newline) to a new file at `url`, mode 0600.
    ///
    /// Atomic and durable: a temporary file in the same folder is written and fsynced, then given
    /// the final name, then the folder is fsynced, so a crash leaves either no key file or a whole
    /// one. The final name is made with link(2), not rename(2): rename would silently replace a
    /// key file made meanwhile by another process, and link fails instead. An existing file is
    /// never replaced: `SealingError.keyFileExists`. The folder must exist.
    public func write(to url: URL) throws {
        guard !IdentityFiles.exists(url) else { throw SealingError.keyFileExists(path: url.path) }
        let directory = url.deletingLastPathComponent()
        let suffix = SecureRandom.bytesOrTrap(8).map { String($0, radix: 16) }.joined()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(suffix).tmp")
        try IdentityFiles.writeExclusive(Array((recoveryText + "\n").utf8), to: temporary, mode: 0o600)
        guard link(temporary.path, url.path) == 0 else {
            let code = errno
            IdentityFiles.remove(temporary)
            if code == EEXIST { throw SealingError.keyFileExists(path: url.path) }
            throw TLSError.fileSystem(
                path: url.path, operation: "linking the new key file", reason: POSIX.describe(code))
        }
        // Unlinked before the folder's fsync, so no second copy of the key outlives a crash after it.
        IdentityFiles.remove(temporary)
        try IdentityFiles.syncDirectory(directory)
    }
}
