import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore

/// `hp-sync init`: creates an empty store and this node's identity. The private key is
/// written with mode 0600 and never printed.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a new store (refuses if one exists).")

    @OptionGroup var options: StoreOptions

    @Flag(
        help: ArgumentHelp(
            "Make a blind store: an off-site copy that holds only sealed data.",
            discussion: """
                A blind store keeps what trusted nodes seal for it (records, photos) and can read none \
                of it; it only serves them (`hp-sync serve`). See README, "Off-site backup".
                """))
    var blind = false

    @Option(
        help: ArgumentHelp(
            "Start with this inventory's recovery key (from `hp-sync key show`), to restore from a blind peer.",
            valueName: "key"))
    var recoveryKey: String?

    @Option(help: ArgumentHelp("Read the recovery key from a file.", valueName: "file"))
    var recoveryKeyFile: String?

    func validate() throws {
        if recoveryKey != nil && recoveryKeyFile != nil {
            throw ValidationError("give the recovery key once: --recovery-key or --recovery-key-file")
        }
        if blind && (recoveryKey != nil || recoveryKeyFile != nil) {
            throw ValidationError("a blind store never holds the inventory key; drop --recovery-key")
        }
    }

    func run() throws {
        let directory = options.storeURL
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path) {
            throw StoreError.storeExists(path: directory.path)
        }
        // Checked before anything is made: a typo leaves no half-made store.
        let key = try givenRecoveryKey()
        let nodeID = try makeNodeIdentity(in: directory)
        if let key {
            let url = InventoryKeyFile.url(for: directory)
            if try InventoryKey.read(from: url) != key { try key.write(to: url) }
        }
        let store = try Store.create(at: directory, nodeID: nodeID, logger: options.makeLogger())
        if blind { try store.makeBlind() }
        var text = "initialized \(blind ? "blind " : "")store at \(store.directory.path)\n"
        text += "node ID:  \(store.nodeID)\nstore ID: \(store.storeID)\n"
        if let key { text += "inventory key: \(key.fingerprint) (from the recovery key)\n" }
        Output.write(text)
    }

    private func givenRecoveryKey() throws -> InventoryKey? {
        var text = recoveryKey
        if let file = recoveryKeyFile {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw StoreError.missingImportFile(path: file)
            }
            text = String(decoding: contents, as: UTF8.self)
        }
        guard let text else { return nil }
        do {
            return try InventoryKey(recoveryText: text)
        } catch {
            throw CommandFailure(status: .dataError, description: "\(error)")
        }
    }
}

/// Creates this node's TLS identity (ECDSA P-256 key and self-signed certificate) in
/// `directory/identity` and returns its node ID. An identity left by an interrupted `init`
/// (key and certificate present, no database yet) is reused, so re-running finishes the job.
func makeNodeIdentity(in directory: URL) throws -> NodeID {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
        throw StoreError.cannotCreate(
            path: directory.path, reason: "it is a file, not a directory; choose another --store")
    }
    do {
        // Private from the start: the store holds serial numbers, values and photos of valuables.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
        // Foundation's own text ("Error Domain=NSCocoaErrorDomain Code=642 ...") means nothing
        // to a person; the POSIX reason underneath does.
        throw StoreError.cannotCreate(path: directory.path, reason: Output.plainReason(error))
    }
    if let existing = try? NodeIdentity.load(from: directory) { return existing.nodeID }
    return try NodeIdentity.create(in: directory).nodeID
}
