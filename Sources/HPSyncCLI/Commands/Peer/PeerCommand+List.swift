import ArgumentParser
import HPSyncStore

extension PeerCommand {
    /// `hp-sync peer list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List trusted peers.")

        @OptionGroup var options: StoreOptions
        @Flag(help: "Print JSON: name, allow, address (or null), nodeID, blind.") var json = false

        struct Document: Encodable {
            var name: String
            var allow: String
            var address: String?
            var nodeID: String
            var blind: Bool
        }

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            if json {
                return try Output.json(
                    try store.peers().map {
                        Document(
                            name: $0.name, allow: $0.permission.rawValue, address: $0.address, nodeID: "\($0.nodeID)",
                            blind: $0.blind)
                    })
            }
            let rows = try store.peers().map {
                [
                    $0.name, $0.permission.rawValue + ($0.blind ? " (blind)" : ""), $0.address ?? "-",
                    $0.nodeID.description,
                ]
            }
            Output.write(Output.table([["NAME", "ALLOW", "ADDRESS", "NODE ID"]] + rows))
        }
    }
}
