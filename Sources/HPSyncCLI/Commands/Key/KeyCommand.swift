import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncStore

/// `hp-sync key show`: this inventory's recovery key, the one thing besides a blind peer's
/// address and node ID that a new machine needs to restore from it.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "This inventory's key, which seals what blind peers hold.",
        subcommands: [Show.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Print the recovery key (makes the inventory key if there is none).",
            discussion: """
                Trusted nodes of one inventory share its key: pairing hands it over. Print the recovery \
                key, keep it on paper away from the house: after a fire, `hp-sync init --recovery-key KEY` \
                on a new machine and a pull from the blind peer bring everything back. Without it, the \
                blind copy cannot be read by anyone, by design.
                """)

        @OptionGroup var options: StoreOptions
        @Flag(help: "Print only the fingerprint (to compare two nodes' keys without showing them).")
        var fingerprint = false

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            guard !store.isBlind else {
                throw StoreError.wrongKindOfStore("this store is blind: it never holds the inventory key")
            }
            let key = try InventoryKeyFile.loadOrCreate(store, logger: options.makeLogger())
            if fingerprint {
                Output.write("\(key.fingerprint)\n")
            } else {
                Output.write("\(key.recoveryText)\nfingerprint: \(key.fingerprint)\n")
            }
        }
    }
}
