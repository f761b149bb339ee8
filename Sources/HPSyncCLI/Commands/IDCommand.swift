import ArgumentParser
import HPSyncCrypto

/// `hp-sync id`: prints this node's ID, the value peers pin.
struct IDCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id", abstract: "Print this node's ID (give it to peers that should trust this node).")

    @OptionGroup var options: StoreOptions

    func run() throws {
        Output.write("\(try options.loadIdentity().nodeID)\n")
    }
}
