import ArgumentParser
import HPSyncModel
import HPSyncStore

/// `hp-sync conflicts`: the open clashes, one line per losing value.
struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the edits that lost a clash with an edit of the same field on another node.",
        discussion: """
            Each line is one field of one item that two nodes changed concurrently: the value kept \
            (the later edit, on every node) and the one that lost. Any later edit of that field, \
            on any node, resolves the clash; it disappears everywhere after the next syncs.
            """)

    @OptionGroup var options: StoreOptions
    @Flag(help: "Print JSON, one object per conflict.") var json = false

    struct Side: Encodable {
        var value: String?
        var node: String
        var nodeName: String?
        var at: String
    }

    struct Document: Encodable {
        var key: String
        var name: String
        var field: String
        var kept: Side
        var losing: Side
    }

    func run() throws {
        let store = try options.openStore()
        let conflicts = try store.conflicts()
        var names: [NodeID: String] = [store.nodeID: "this node"]
        for peer in try store.peers() { names[peer.nodeID] = peer.name }
        var itemNames: [ItemKey: String] = [:]
        for key in Set(conflicts.map(\.key)) { itemNames[key] = try store.item(key)?.name ?? "" }
        func side(_ content: FieldContent, _ version: Version) -> Side {
            Side(
                value: Self.text(content), node: version.origin.description, nodeName: names[version.origin],
                at: DateText.iso8601(milliseconds: Int64(clamping: version.stamp.milliseconds)))
        }
        let documents = conflicts.map {
            Document(
                key: $0.key.rawValue, name: itemNames[$0.key] ?? "", field: $0.field.rawValue,
                kept: side($0.kept, $0.keptVersion), losing: side($0.losing, $0.losingVersion))
        }
        if json { return try Output.json(documents) }
        guard !documents.isEmpty else { return }
        var rows = [["KEY", "NAME", "FIELD", "KEPT", "BY", "AT", "LOST", "BY", "AT"]]
        for document in documents {
            rows.append([
                document.key, document.name, document.field, document.kept.value ?? "-",
                document.kept.nodeName ?? String(document.kept.node.prefix(7)), document.kept.at,
                document.losing.value ?? "-", document.losing.nodeName ?? String(document.losing.node.prefix(7)),
                document.losing.at,
            ])
        }
        Output.write(Output.table(rows))
    }

    /// A value as the table and the JSON show it; nil for no serial number or no photo.
    static func text(_ content: FieldContent) -> String? {
        switch content {
        case .text(let text): text
        case .optionalText(let text): text
        case .integer(let value): "\(value)"
        case .photo(let ref): ref.map { "sha256:\($0.digest.hex) (\($0.size) bytes)" }
        }
    }
}
