import Foundation

/// A size-limited tmpfs mounted on a directory (a store's, for the disk-full tests). Needs root
/// and mount(8), as in CI; `canMount` says whether this machine allows it.
public enum SmallDisk {
    public static let canMount: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-mount-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? mount(probe, size: "64k")) != nil else { return false }
        unmount(probe)
        return true
    }()

    public static func mount(_ directory: URL, size: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try run(["mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", directory.path])
    }

    public static func resize(_ directory: URL, to size: String) throws {
        try remount(directory, options: "size=\(size)")
    }

    public static func remount(_ directory: URL, options: String) throws {
        try run(["mount", "-o", "remount,\(options)", directory.path])
    }

    public static func unmount(_ directory: URL) {
        try? run(["umount", directory.path])
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw MountFailed(arguments: arguments) }
    }

    struct MountFailed: Error {
        var arguments: [String]
    }
}
