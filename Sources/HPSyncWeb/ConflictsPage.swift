import HPSyncModel

/// One open conflict as the page shows it, with the item's name and where each value came from.
struct ConflictRow: Sendable {
    var conflict: FieldConflict
    var itemName: String
    /// Peer names by node, "this node" for the store's own.
    var keptBy: String
    var losingBy: String
    /// Whether this store holds the losing photo's bytes (a photo clash only).
    var losingPhotoHere: Bool
}

/// The open clashes, each field's kept value beside the one that lost, with one button to take
/// the other value: an edit of that field, which resolves the clash on every node after their
/// next syncs.
enum ConflictsPage {
    static func render(_ rows: [ConflictRow], csrf: String, notice: HTML? = nil, only key: ItemKey? = nil) -> HTML {
        let cards = rows.map { row -> HTML in
            let conflict = row.conflict
            let key = conflict.key.rawValue
            let take: HTML =
                row.losingPhotoHere || !isPhoto(conflict.losing)
                ? """
                <form method="post" action="/conflicts/take" class="inline">\(Layout.csrfField(csrf))
                <input type="hidden" name="key" value="\(key)"><input type="hidden" name="field" value="\(conflict.field.rawValue)">
                <input type="hidden" name="stamp" value="\(String(conflict.losingVersion.stamp.rawValue))">
                <input type="hidden" name="origin" value="\(conflict.losingVersion.origin.description)">
                <button type="submit" class="primary">Take this value</button></form>
                """
                : "<p class=\"muted\">This photo's bytes are not on this node: take it on the node that made it.</p>"
            return """
                <section class="panel conflict" id="conflict-\(key)-\(conflict.field.rawValue)">
                <h2><a href="/items/\(key)">\(row.itemName)</a> · \(label(conflict.field))</h2>
                <div class="sides">
                <div class="side kept"><h3>Kept</h3>\(value(conflict.kept, conflict.field))
                <p class="muted">\(Format.version(conflict.keptVersion)) (\(row.keptBy))</p></div>
                <div class="side losing"><h3>Lost</h3>\(value(conflict.losing, conflict.field))
                <p class="muted">\(Format.version(conflict.losingVersion)) (\(row.losingBy))</p>\(take)</div>
                </div></section>
                """
        }
        let intro: HTML =
            rows.isEmpty
            ? "<p id=\"no-conflicts\">No open conflicts: every field holds the one value its latest edit set.</p>"
            : """
            <p class="muted">Both nodes changed these fields since they last agreed. Every node keeps the later \
            edit; the other value waits here until someone edits the field again, on any node.</p>
            """
        return Layout.page(
            title: "Conflicts", notice: notice,
            body: """
                <h1>Conflicts\(key == nil ? "" : " of one item")</h1>
                \(intro)
                \(cards)
                """)
    }

    static func label(_ field: ItemField) -> String {
        switch field {
        case .name: "Name"
        case .serialNumber: "Serial number"
        case .valueInDollars: "Value"
        case .dateCreated: "Date created"
        case .photo: "Photo"
        }
    }

    private static func isPhoto(_ content: FieldContent) -> Bool {
        if case .photo(.some) = content { return true }
        return false
    }

    private static func value(_ content: FieldContent, _ field: ItemField) -> HTML {
        switch content {
        case .text(let text): "<p class=\"value\">\(text)</p>"
        case .optionalText(let text): text.map { "<p class=\"value\">\($0)</p>" } ?? "<p class=\"value muted\">none</p>"
        case .integer(let number) where field == .dateCreated: "<p class=\"value\">\(Format.time(number))</p>"
        case .integer(let number): "<p class=\"value\">\(Format.dollars(number))</p>"
        case .photo(let ref?):
            """
            <img class="photo" src="\(InventoryPage.imageURL(ref))" alt="Photo, SHA-256 \(ref.digest.hex)">
            <p class="muted">\(ref.size) bytes</p>
            """
        case .photo(nil): "<p class=\"value muted\">no photo</p>"
        }
    }
}
