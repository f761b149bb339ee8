import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// `hp-sync init`: creates an empty store and this node's identity. The private key is
/// written with mode 0600 and never printed.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a new store (refuses if one exists).")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let directory = options.storeURL
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path) {
            throw StoreError.storeExists(path: directory.path)
        }
        let nodeID = try makeNodeIdentity(in: directory)
        let store = try Store.create(at: directory, nodeID: nodeID, logger: options.makeLogger())
        Output.write(
            "initialized store at \(store.directory.path)\nnode ID:  \(store.nodeID)\nstore ID: \(store.storeID)\n")
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
