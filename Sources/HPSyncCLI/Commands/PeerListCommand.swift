import ArgumentParser
import HPSyncStore

/// `hp-sync peer list`.
struct PeerListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List trusted peers.")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let store = try options.openStore()
        let rows = try store.peers().map {
            [$0.name, $0.permission.rawValue, $0.address ?? "-", $0.nodeID.description]
        }
        Output.write(Output.table([["NAME", "ALLOW", "ADDRESS", "NODE ID"]] + rows))
    }
}
