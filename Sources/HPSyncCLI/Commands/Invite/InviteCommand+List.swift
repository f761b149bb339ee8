import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

extension InviteCommand {
    /// `hp-sync invite list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List invitations, newest first.")

        @OptionGroup var options: StoreOptions
        @Flag(help: "Print JSON, one object per invitation.") var json = false

        struct Document: Encodable {
            var id: String
            var allow: String
            var name: String?
            var createdAt: String
            var expiresAt: String
            /// pending, expired or used.
            var status: String
            var usedAt: String?
            var usedBy: String?
        }

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let peers = try store.peers()
            var rows = [["ID", "ALLOW", "NAME", "CREATED", "EXPIRES", "STATUS"]]
            var documents: [Document] = []
            for invitation in try store.invitations() {
                let status: String
                if let used = invitation.usedAtMilliseconds {
                    let by =
                        invitation.usedBy.map { node in peers.first { $0.nodeID == node }?.name ?? node.short } ?? "?"
                    status = "used by \(by) at \(DateText.iso8601(milliseconds: used))"
                } else {
                    status = invitation.expiresAtMilliseconds <= now ? "expired" : "pending"
                }
                documents.append(
                    Document(
                        id: invitation.shortID, allow: invitation.permission.rawValue, name: invitation.name,
                        createdAt: DateText.iso8601(milliseconds: invitation.createdAtMilliseconds),
                        expiresAt: DateText.iso8601(milliseconds: invitation.expiresAtMilliseconds),
                        status: invitation.usedAtMilliseconds != nil ? "used" : status,
                        usedAt: Output.isoDate(invitation.usedAtMilliseconds), usedBy: invitation.usedBy.map { "\($0)" }
                    ))
                rows.append([
                    invitation.shortID, invitation.permission.rawValue, invitation.name ?? "-",
                    DateText.iso8601(milliseconds: invitation.createdAtMilliseconds),
                    DateText.iso8601(milliseconds: invitation.expiresAtMilliseconds), status,
                ])
            }
            if json { return try Output.json(documents) }
            Output.write(Output.table(rows))
        }
    }
}
