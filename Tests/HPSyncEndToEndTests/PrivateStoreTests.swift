import Foundation
import HPSyncTesting
import Testing

/// Issue 14 §4 and issue 12 §4: the store is private to its owner, and the node ID is always
/// the certificate's.
@Suite("a private store with one identity, run as a binary")
struct PrivateStoreTests {
    /// Every folder and file under `root` whose mode lets group or others in.
    static func exposed(_ root: URL) throws -> [String] {
        var found: [String] = []
        var pending = [root.path]
        while let folder = pending.popLast() {
            if try mode(folder) & 0o077 != 0 { found.append(folder) }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                let path = folder + "/" + name
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                if attributes[.type] as? FileAttributeType == .typeDirectory {
                    pending.append(path)
                } else if try mode(path) & 0o077 != 0 {
                    found.append(path)
                }
            }
        }
        return found
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
    }

    @Test func initMakesEveryFolderAndFilePrivate() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        #expect(try runner.run(["init"]).status == 0)
        let image = try runner.file("photo.jpg", Images.jpeg)
        #expect(try runner.run(["add", "--name", "Camera", "--image", image.path]).status == 0)
        #expect(try Self.mode(runner.store.path) == 0o700)
        #expect(try Self.mode(runner.store.appendingPathComponent("store.sqlite").path) == 0o600)
        #expect(try Self.exposed(runner.store) == [])
        let verify = try runner.run(["verify"])
        #expect(verify.status == 0)
        #expect(!verify.text.contains("warning"))
    }

    /// `init`, then one item with a photo; returns its key.
    static func storeWithPhoto(_ runner: BinaryRunner) throws -> String {
        #expect(try runner.run(["init"]).status == 0)
        let image = try runner.file("photo.jpg", Images.jpeg)
        return try runner.run(["add", "--name", "Camera", "--image", image.path]).text
            .trimmingCharacters(in: .newlines)
    }

    @Test func anExistingOpenStoreIsTightenedByItsOwner() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let key = try Self.storeWithPhoto(runner)
        // A store made before the rule: world-readable folders and files.
        for path in [runner.store.path, runner.store.appendingPathComponent("images").path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        for path in ["store.sqlite", "images/\(key)", "identity/cert.pem"] {
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o644], ofItemAtPath: runner.store.appendingPathComponent(path).path)
        }
        #expect(try Self.exposed(runner.store).count >= 5)
        #expect(try runner.run(["list"]).status == 0)
        #expect(try Self.exposed(runner.store) == [])
    }

    /// `id` reads only the identity, yet tightens the store as every command that opens it does.
    @Test func idTightensTheStoreToo() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        #expect(try runner.run(["init"]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: runner.store.path)
        let database = runner.store.appendingPathComponent("store.sqlite").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
        #expect(try runner.run(["id"]).status == 0)
        #expect(try Self.mode(runner.store.path) == 0o700)
        #expect(try Self.mode(database) == 0o600)
    }

    /// A readable file copied into a private store is not walked by `open`; the warning's own
    /// advice must make it go away, and so must `verify --repair`.
    @Test func theExposedFileWarningGivesAdviceThatWorks() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let key = try Self.storeWithPhoto(runner)
        let file = runner.store.appendingPathComponent("images/\(key)").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        #expect(try runner.run(["list"]).status == 0)
        let warned = try runner.run(["verify"]).text
        let line = try #require(warned.split(separator: "\n").first { $0.hasPrefix("warning:") && $0.contains(file) })
        let command = try #require(line.split(separator: "`").dropFirst().first.map(String.init))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", command]
        try shell.run()
        shell.waitUntilExit()
        #expect(try Self.mode(file) == 0o600)
        #expect(!(try runner.run(["verify"]).text.contains("warning:")))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let repaired = try runner.run(["verify", "--repair"])
        #expect(repaired.text.contains("repaired: made 1 store path private"), "\(repaired.text)")
        #expect(try Self.mode(file) == 0o600)
    }

    /// `init X; init Y; rm -r Y/identity; cp -r X/identity Y/`: `id`, `status` and the Hello all
    /// follow the certificate, and `verify` agrees.
    @Test func theNodeIDIsAlwaysTheCertificates() throws {
        let x = try BinaryRunner()
        let y = try BinaryRunner()
        defer {
            x.cleanUp()
            y.cleanUp()
        }
        #expect(try x.run(["init"]).status == 0)
        #expect(try y.run(["init"]).status == 0)
        let identity = y.store.appendingPathComponent("identity")
        try FileManager.default.removeItem(at: identity)
        try FileManager.default.copyItem(at: x.store.appendingPathComponent("identity"), to: identity)
        let id = try y.nodeID()
        #expect(id == (try x.nodeID()))
        let status = try y.run(["status"])
        #expect(status.text.contains("node ID:    \(id)"), "status: \(status.text)")
        #expect(status.stderr.contains("now follows identity/cert.pem"), "stderr: \(status.stderr)")
        let verify = try y.run(["verify"])
        #expect(verify.status == 0, "verify: \(verify.text)")
        // The Hello `serve` sends carries the certificate's node ID, so a client pinning it pulls.
        let client = try BinaryRunner()
        defer { client.cleanUp() }
        #expect(try client.run(["init"]).status == 0)
        let clientID = try client.nodeID()
        #expect(try y.run(["peer", "add", "client", clientID]).status == 0)
        let server = try ServeProcess(y)
        defer { _ = server.stop() }
        #expect(try client.run(["peer", "add", "y", id, "--address", server.address]).status == 0)
        let pulled = try client.run(["pull", "y"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
    }
}
