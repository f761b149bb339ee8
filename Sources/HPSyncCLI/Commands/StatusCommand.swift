import ArgumentParser
import HPSyncStore

/// `hp-sync status`: where the store is, who this node is, and counts.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the store's identity and counts.")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let store = try options.openStore()
        let status = try store.status()
        Output.write(
            """
            store:      \(store.directory.path)
            node ID:    \(store.nodeID)
            store ID:   \(store.storeID)
            items:      \(status.items)
            tombstones: \(status.tombstones)
            images:     \(status.images) (\(status.imageBytes) bytes)
            peers:      \(status.peers)
            last seq:   \(status.lastSeq)

            """)
    }
}
