import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore

extension PeerCommand {
    /// `hp-sync peer add NAME NODE-ID [--address HOST[:PORT]] [--allow read|read-write] [--blind]`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Trust a peer by its node ID.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "A short name: letters, digits, . _ - (up to 64).") var name: String
        @Argument(help: "The peer's node ID, as `hp-sync status` prints it there.") var nodeID: String
        @Option(help: "Where to reach it: HOST or HOST:PORT.") var address: String?
        @Option(help: "What it may do here: read or read-write.") var allow = PeerPermission.read
        @Flag(
            help: ArgumentHelp(
                "It is a blind store (`init --blind`): seal everything sent there, never tell it the key.",
                discussion: "Makes this inventory's key if this node has none yet (`hp-sync key show`)."))
        var blind = false

        func validate() throws {
            guard Peer.isValidName(name) else {
                throw ValidationError(
                    "invalid peer name '\(name)': use 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
            }
            do {
                _ = try NodeID(parsing: nodeID)
            } catch {
                throw ValidationError(error.description)
            }
            try Self.checkAddress(address)
        }

        static func checkAddress(_ address: String?) throws {
            if let address, address.isEmpty || address.contains(where: { $0 == " " || $0 == "/" }) {
                throw ValidationError("--address must be HOST or HOST:PORT")
            }
        }

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            let peer = Peer(
                name: name, nodeID: try NodeID(parsing: nodeID), address: address,
                permission: allow, blind: blind)
            if blind { _ = try InventoryKeyFile.loadOrCreate(store, logger: options.makeLogger()) }
            try store.addPeer(peer)
            let kind = blind ? ", blind" : ""
            Output.write("added peer \(peer.name) (\(peer.nodeID), \(peer.permission.rawValue)\(kind))\n")
            if blind {
                Output.write(
                    "everything sent to \(peer.name) is sealed with this inventory's key; print the recovery key with `hp-sync key show` and keep it off this machine\n"
                )
            }
        }
    }
}
