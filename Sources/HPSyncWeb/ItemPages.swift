import HPSyncModel
import HPSyncStore

/// Homepwner's detail view, its "new item" form with the photo picker, its delete sheet, and the
/// page that reports a batch's change set.
enum ItemPages {
    /// What the photo inputs offer: every format the store accepts (`Store.isAcceptedImage`).
    static let photoTypes = "image/jpeg,image/png,image/heic,image/heif,image/gif,.jpg,.jpeg,.png,.heic,.heif,.gif"

    /// `imageMissing`: the record names a photo whose file is gone or damaged; the page says so
    /// and how to get it back, instead of showing a broken image.
    static func detail(
        _ item: Item, csrf: String, notice: HTML? = nil, imageMissing: Bool = false, conflicts: Int = 0
    ) -> HTML {
        let key = item.key.rawValue
        let clash: HTML =
            conflicts == 0
            ? .empty
            : """
            <p class="panel" id="item-conflicts">\(conflicts) open conflict\(conflicts == 1 ? "" : "s"): another node \
            changed the same field. <a href="/conflicts?key=\(key)">See both values</a></p>
            """
        let missing: HTML =
            "<div class=\"nophoto missing\">Photo missing — repair with <code>\(Store.repairCommand)</code></div>"
        let photo: HTML =
            imageMissing
            ? missing
            : item.image.map {
                "<img class=\"photo\" src=\"\(InventoryPage.imageURL($0))\" alt=\"Photo of \(item.name)\">"
            }
                ?? "<div class=\"nophoto\">No photo yet</div>"
        let removePhoto: HTML =
            item.image == nil
            ? .empty
            : """
            <form method="post" action="/items/\(key)/photo/remove" class="inline">\(Layout.csrfField(csrf))<button type="submit">Remove photo</button></form>
            """
        let imageFact: HTML =
            item.image.map { "\(imageMissing ? "missing: " : "")\($0.size) bytes, SHA-256 \($0.digest.hex)" } ?? "none"
        return Layout.page(
            title: item.name, notice: notice,
            body: """
                <h1>\(item.name)</h1>
                \(clash)
                <div class="detail">
                <div>\(photo)
                <form class="toolbar" method="post" action="/items/\(key)/photo" enctype="multipart/form-data">\(Layout.csrfField(csrf))
                <input type="file" name="photo" accept="\(photoTypes)" capture="environment" required aria-label="Photo">
                <button type="submit">\(item.image == nil ? "Add photo" : "Replace photo")</button></form>
                \(removePhoto)
                </div>
                <div>
                <form class="fields" method="post" action="/items/\(key)" id="edit">\(Layout.csrfField(csrf))
                <label>Name <input name="name" value="\(item.name)" required maxlength="\(ItemLimits.maxNameBytes)"></label>
                <label>Serial number <input name="serial" value="\(item.serialNumber)" maxlength="\(ItemLimits.maxSerialBytes)"></label>
                <label>Value in dollars <input name="value" value="\(item.valueInDollars)" inputmode="numeric" pattern="-?[0-9]+" required></label>
                <button type="submit" class="primary">Save</button>
                </form>
                <div class="panel"><dl class="facts">
                <dt>Date created</dt><dd>\(Format.time(item.dateCreatedMilliseconds))</dd>
                <dt>Key</dt><dd>\(key)</dd>
                <dt>Photo</dt><dd>\(imageFact)</dd>
                <dt>Version</dt><dd>\(Format.version(item.version))</dd>
                </dl></div>
                <p><a class="button" href="/items/\(key)/delete">Delete…</a></p>
                </div></div>
                """)
    }

    static func new(csrf: String) -> HTML {
        Layout.page(
            title: "Add item",
            body: """
                <h1>Add an item</h1>
                <form class="fields" method="post" action="/items" enctype="multipart/form-data" id="add">\(Layout.csrfField(csrf))
                <label>Name <input name="name" required maxlength="\(ItemLimits.maxNameBytes)" autofocus></label>
                <label>Serial number <input name="serial" maxlength="\(ItemLimits.maxSerialBytes)"></label>
                <label>Value in dollars <input name="value" value="0" inputmode="numeric" pattern="-?[0-9]+" required></label>
                <label>Photo <input type="file" name="photo" accept="\(photoTypes)" capture="environment"></label>
                <button type="submit" class="primary">Add</button>
                </form>
                """)
    }

    /// Homepwner's sheet: "Are you sure you want to delete NAME?"
    static func confirmDelete(_ item: Item, csrf: String) -> HTML {
        let key = item.key.rawValue
        return Layout.page(
            title: "Delete \(item.name)",
            body: """
                <h1>Delete \(item.name)</h1>
                <div class="panel">
                <p>Are you sure you want to delete “\(item.name)”?</p>
                <p class="muted">It is kept in the trash, so you can restore it from the Sync page; peers receive the deletion with their next sync.</p>
                <form method="post" action="/items/\(key)/delete" class="inline">\(Layout.csrfField(csrf))
                <button type="submit" class="danger">Delete</button></form>
                <a class="button" href="/items/\(key)">Cancel</a>
                </div>
                """)
    }

    /// ColorCollection's batch, reported: what changed in the one transaction, and the way back.
    static func changeSet(_ changes: ChangeSet, names: [ItemKey: String], milliseconds: Int, csrf: String) -> HTML {
        let rows = changes.deleted.map { key -> HTML in
            "<li>\(names[key] ?? key.rawValue) <span class=\"muted\">\(key.rawValue)</span></li>"
        }
        let restoreFields = HTML.join(
            changes.deleted.map { "<input type=\"hidden\" name=\"key\" value=\"\($0.rawValue)\">" })
        let count = changes.deleted.count
        return Layout.page(
            title: "Removed",
            body: """
                <h1>Removed \(count) item\(count == 1 ? "" : "s")</h1>
                <div class="panel" id="changeset">
                <p>One transaction, \(milliseconds) ms: inserted \(changes.inserted.count), updated \(changes.updated.count), deleted <strong>\(count)</strong>.</p>
                <ul>\(rows)</ul>
                <form method="post" action="/trash/restore" class="inline">\(Layout.csrfField(csrf))\(restoreFields)
                <button type="submit" class="primary">Restore \(count == 1 ? "it" : "all \(count)") from the trash</button></form>
                <a class="button" href="/">Back to the inventory</a>
                </div>
                """)
    }
}
