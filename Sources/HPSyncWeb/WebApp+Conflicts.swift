import Foundation
import HPSyncModel
import HPSyncStore
import Hummingbird

/// The Conflicts page and its one action.
extension WebApp {
    func conflicts(_ request: Request) async throws -> Response {
        let parameters = Self.parameters(request)
        let only = parameters["key"].flatMap { try? ItemKey($0) }
        let rows = try await worker.run { store in
            var names: [NodeID: String] = [store.nodeID: "this node"]
            for peer in try store.peers() { names[peer.nodeID] = peer.name }
            var itemNames: [ItemKey: String] = [:]
            var rows: [ConflictRow] = []
            for conflict in try store.conflicts() where only == nil || conflict.key == only {
                if itemNames[conflict.key] == nil { itemNames[conflict.key] = try store.item(conflict.key)?.name ?? "" }
                var here = true
                if case .photo(let ref?) = conflict.losing { here = try store.conflictPhotoFile(ref.digest) != nil }
                func by(_ version: Version) -> String { names[version.origin] ?? "node \(version.origin.short)" }
                rows.append(
                    ConflictRow(
                        conflict: conflict, itemName: itemNames[conflict.key] ?? "", keptBy: by(conflict.keptVersion),
                        losingBy: by(conflict.losingVersion), losingPhotoHere: here))
            }
            return rows
        }
        let notice: HTML? =
            parameters["taken"] != nil
            ? "Taken: the field holds that value now, here and on every node after their next syncs." : nil
        return Layout.response(ConflictsPage.render(rows, csrf: secrets.csrf, notice: notice, only: only))
    }

    /// Takes the losing value of one conflict: an edit of its field.
    func takeConflict(_ request: Request) async throws -> Response {
        let form = try await form(request, limit: Self.maxFormBytes)
        guard let key = form["key"].flatMap({ try? ItemKey($0) }),
            let field = form["field"].flatMap(ItemField.init(rawValue:)),
            let stamp = form["stamp"].flatMap(UInt64.init),
            let origin = form["origin"].flatMap({ try? NodeID(parsing: $0) })
        else { throw WebError.badRequest("The form does not name a conflict.") }
        let losing = Version(stamp: VersionStamp(rawValue: stamp), origin: origin)
        _ = try await worker.run { store in try store.takeLosingValue(key, field: field, losing: losing) }
        return Layout.redirect("/conflicts?taken=1")
    }
}
