import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncStore

/// `hp-sync init`: creates an empty store and this node's identity.
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

/// Creates this node's identity in `directory/identity` and returns its node ID.
///
/// Placeholder until the TLS identity lands: a random node ID. The crypto module replaces this
/// one function with key + self-signed certificate generation.
func makeNodeIdentity(in directory: URL) throws -> NodeID {
    var generator = SystemRandomNumberGenerator()
    let placeholder = (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return NodeID(certificateDER: placeholder)
}
