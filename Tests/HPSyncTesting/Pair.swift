import Foundation

/// Two stores made by the built `hp-sync` (`init`): `primary` serves, `backup` pulls. `serve()`
/// makes them peers of each other and starts `hp-sync serve` on the primary; `cleanUp()` stops
/// every server started through the pair, unmounts the test file systems, and removes both
/// stores.
///
/// Tests that need the two nodes to know each other only in part (an unknown client, an
/// unknown server) do the `peer add` they need themselves and start the server with `start`.
public final class Pair {
    public let primary: BinaryRunner
    public let backup: BinaryRunner
    public let primaryID: String
    public let backupID: String

    /// Store directories on a test file system (`SmallDisk`), unmounted by `cleanUp`.
    private let mounts: [URL]
    private var servers: [ServeProcess] = []

    public convenience init() throws {
        try self.init(primary: BinaryRunner(), backup: BinaryRunner())
    }

    /// Runs `init` on both runners; `mounts` are unmounted by `cleanUp`.
    public init(primary: BinaryRunner, backup: BinaryRunner, mounts: [URL] = []) throws {
        self.primary = primary
        self.backup = backup
        self.mounts = mounts
        do {
            try primary.succeed(["init"])
            try backup.succeed(["init"])
            primaryID = try primary.nodeID()
            backupID = try backup.nodeID()
        } catch {
            Self.remove(primary: primary, backup: backup, mounts: mounts)
            throw error
        }
    }

    /// Lists the backup on the primary (`peer add backup`, with `--allow allow` when given),
    /// starts `serve` on the primary with `extra` options, and lists the primary on the backup
    /// at the served address (`peer add primary --address`).
    @discardableResult
    public func serve(allow: String? = nil, extra: [String] = []) throws -> ServeProcess {
        try primary.succeed(["peer", "add", "backup", backupID] + (allow.map { ["--allow", $0] } ?? []))
        let server = try start(primary, extra: extra)
        try backup.succeed(["peer", "add", "primary", primaryID, "--address", server.address])
        return server
    }

    /// Starts `serve` on the primary again (after the last one stopped) with `extra` options,
    /// and points the backup at its new address (`peer set primary --address`).
    @discardableResult
    public func serveAgain(extra: [String] = []) throws -> ServeProcess {
        let server = try start(primary, extra: extra)
        try backup.succeed(["peer", "set", "primary", "--address", server.address])
        return server
    }

    /// Starts `serve` on `runner` (either node, or another), stopped by `cleanUp` unless
    /// stopped before.
    public func start(_ runner: BinaryRunner, extra: [String] = []) throws -> ServeProcess {
        let server = try ServeProcess(runner, extra: extra)
        servers.append(server)
        return server
    }

    public func cleanUp() {
        for server in servers { server.stop() }
        servers = []
        Self.remove(primary: primary, backup: backup, mounts: mounts)
    }

    private static func remove(primary: BinaryRunner, backup: BinaryRunner, mounts: [URL]) {
        mounts.forEach(SmallDisk.unmount)
        primary.cleanUp()
        backup.cleanUp()
    }
}
