import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncProtocol
import HPSyncStore

extension InviteCommand {
    /// `hp-sync invite revoke ID`.
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Delete an invitation so it can no longer be used.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The invitation's ID from `hp-sync invite list` (at least 4 characters).") var id: String

        func run() throws {
            let invitation = try options.openStore(blindAllowed: true).revokeInvitation(prefix: id)
            var text = "revoked invitation \(invitation.shortID)"
            if invitation.usedAtMilliseconds != nil {
                text += " (it was used already: remove the peer it added with `hp-sync peer rm` if needed)"
            }
            Output.write(text + "\n")
        }
    }
}
