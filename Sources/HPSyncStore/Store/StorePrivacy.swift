import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps a store private to its owner, as ssh keeps `~/.ssh`: every folder 0700, every file
/// 0600. The store holds serial numbers, values and photos of valuables.
enum StorePrivacy {
    static let directoryMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600
    /// What hp-sync keeps in a store folder. Only these are tightened or reported: `init
    /// --store` may name a folder that holds other things, which are not ours to change.
    static let storeFolders: Set<String> = ["images", "identity", "trash"]
    static func isStoreFile(_ name: String) -> Bool {
        name.hasPrefix(Store.databaseName) || name == SyncLock.fileName || name == ".last-sweep"
    }

    /// Makes `directory` and everything in it private when this process's user owns it; returns
    /// the paths it tightened. Cheap once the store is private: unless `always` is set, only a
    /// store folder that group or others can enter (a store made before this rule) is walked file
    /// by file; files made later inherit privacy (0600 temporaries, SQLite's `-wal` and `-shm`
    /// take the database file's mode).
    @discardableResult
    static func tighten(_ directory: URL, always: Bool = false) -> [String] {
        var info = stat()
        guard stat(directory.path, &info) == 0, info.st_uid == geteuid() else { return [] }
        guard always || info.st_mode & 0o077 != 0 else { return [] }
        var tightened: [String] = []
        if chmod(directory.path, directoryMode) == 0 { tightened.append(directory.path) }
        for entry in exposed(directory, onlyOwned: true) {
            let mode = entry.isDirectory ? directoryMode : fileMode
            if chmod(entry.path, mode) == 0 { tightened.append(entry.path) }
        }
        return tightened
    }

    /// Folders and files of the store that group or others may read (or enter), with their modes.
    static func exposed(_ directory: URL, onlyOwned: Bool = false) -> [(path: String, mode: mode_t, isDirectory: Bool)]
    {
        var found: [(String, mode_t, Bool)] = []
        var info = stat()
        if lstat(directory.path, &info) == 0, info.st_mode & 0o077 != 0 {
            found.append((directory.path, info.st_mode & 0o7777, true))
        }
        var pending = [directory.path]
        while let folder = pending.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            let top = folder == directory.path
            for name in names where !top || storeFolders.contains(name) || isStoreFile(name) {
                let path = folder + "/" + name
                guard lstat(path, &info) == 0 else { continue }  // removed meanwhile
                let type = info.st_mode & S_IFMT
                guard type == S_IFDIR || type == S_IFREG else { continue }  // symlinks, sockets: leave alone
                if type == S_IFDIR { pending.append(path) }
                if onlyOwned && info.st_uid != geteuid() { continue }
                if info.st_mode & 0o077 != 0 { found.append((path, info.st_mode & 0o7777, type == S_IFDIR)) }
            }
        }
        return found
    }

    /// Creates `url` as a private folder if missing (with its parents).
    static func makeDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(directoryMode)])
    }
}

extension Store {
    /// Makes an existing store private to its owner, as `open` does, for commands that read
    /// only the identity beside the database (`id`) and so never open the store.
    package static func makePrivate(at directory: URL) {
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent(databaseName).path) else {
            return
        }
        StorePrivacy.tighten(directory)
    }
}
