import ArgumentParser
import HPSyncEngine
import HPSyncModel
import HPSyncStore

extension PeerCommand {
    /// `hp-sync peer set NAME [--address HOST[:PORT] | --clear-address] [--allow read|read-write]`.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a peer's address or permission (keeps its sync history).",
            discussion: """
                Unlike `peer rm` then `peer add`, the peer keeps its node ID, its checkpoints (the next \
                pull resumes where the last one stopped) and its sync history for `status` and `gc`.
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The peer's name.", completion: PeerCompletion.kind) var name: String
        @Option(help: "Where to reach it now: HOST or HOST:PORT.") var address: String?
        @Flag(help: "Forget its address (it still may connect to us).") var clearAddress = false
        @Option(help: "What it may do here now: read or read-write.") var allow: PeerPermission?
        @Flag(
            inversion: .prefixedNo,
            help: "Whether it is a blind store (seal everything sent there; never tell it the inventory key).")
        var blind: Bool?

        func validate() throws {
            try PeerCommand.Add.checkAddress(address)
            if address != nil && clearAddress {
                throw ValidationError("give either --address or --clear-address, not both")
            }
            if address == nil && !clearAddress && allow == nil && blind == nil {
                throw ValidationError("nothing to change; give --address, --clear-address, --allow or --[no-]blind")
            }
        }

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            let change: String?? = clearAddress ? .some(nil) : address.map { .some($0) }
            if blind == true { _ = try InventoryKeyFile.loadOrCreate(store, logger: options.makeLogger()) }
            let peer = try store.updatePeer(named: name, address: change, permission: allow, blind: blind)
            Output.write(
                "peer \(peer.name): \(peer.address ?? "no address"), \(peer.permission.rawValue)\(peer.blind ? ", blind" : "") (\(peer.nodeID))\n"
            )
        }
    }
}
