import Foundation
import HPSyncModel
import HPSyncStore
import HTTPTypes
import Hummingbird
import NIOCore

/// One item's routes: detail, add, edit, photo, delete.
extension WebApp {
    /// The live item the route's key names, with what is wrong with its photo file (nil when
    /// nothing is); a page that says so, with 404, when there is no such item.
    private func liveItem(_ context: BasicRequestContext) async throws -> (Item, String?) {
        let key = try Self.key(context)
        let (item, imageProblem) = try await worker.run { store in
            let item = try store.item(key)
            return (item, item.flatMap { store.imageFileProblem($0) })
        }
        guard let item, !item.deleted else {
            throw WebError.notFound("There is no such item. It may have been deleted here or by a sync.")
        }
        return (item, imageProblem)
    }

    func detail(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (item, imageProblem) = try await liveItem(context)
        let conflicts = try await worker.run { store in try store.mergeState(item.key)?.conflicts.count ?? 0 }
        let parameters = Self.parameters(request)
        let notice: HTML? =
            parameters["saved"] != nil
            ? "Saved."
            : parameters["added"] != nil ? "Added “\(item.name)”." : parameters["photo"] != nil ? "Photo updated." : nil
        return Layout.response(
            ItemPages.detail(
                item, csrf: secrets.csrf, notice: notice, imageMissing: imageProblem != nil, conflicts: conflicts))
    }

    func add(_ request: Request) async throws -> Response {
        let form = try await form(request, limit: maxUploadBytes)
        let (name, serial, value) = try Self.fields(form)
        let photo = try await stage(form.files["photo"])
        defer { if let photo { try? FileManager.default.removeItem(at: photo) } }
        let item = try await worker.run { store in
            try store.add(ItemDraft(name: name, serialNumber: serial, valueInDollars: value, imageFile: photo))
        }
        return Layout.redirect("/items/\(item.key.rawValue)?added=1")
    }

    func edit(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let key = try Self.key(context)
        let form = try await form(request, limit: Self.maxFormBytes)
        let (name, serial, value) = try Self.fields(form)
        _ = try await worker.run { store in
            try store.edit(
                key, ItemEdit(name: name, serialNumber: serial.map { .set($0) } ?? .clear, valueInDollars: value))
        }
        return Layout.redirect("/items/\(key.rawValue)?saved=1")
    }

    func setPhoto(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let key = try Self.key(context)
        let form = try await form(request, limit: maxUploadBytes)
        guard let photo = try await stage(form.files["photo"]) else {
            throw WebError.badRequest("Choose a photo first.")
        }
        defer { try? FileManager.default.removeItem(at: photo) }
        _ = try await worker.run { store in try store.setImage(key, from: photo) }
        return Layout.redirect("/items/\(key.rawValue)?photo=1")
    }

    func removePhoto(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let key = try Self.key(context)
        _ = try await form(request, limit: Self.maxFormBytes)
        _ = try await worker.run { store in try store.removeImage(key) }
        return Layout.redirect("/items/\(key.rawValue)?photo=1")
    }

    func confirmDelete(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (item, _) = try await liveItem(context)
        return Layout.response(ItemPages.confirmDelete(item, csrf: secrets.csrf))
    }

    func delete(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let key = try Self.key(context)
        _ = try await form(request, limit: Self.maxFormBytes)
        return try await removeAndReport([key])
    }

    /// "Remove selected": every checked key in one transaction, deleted versions to the trash.
    func removeSelected(_ request: Request) async throws -> Response {
        let form = try await form(request, limit: Self.maxFormBytes)
        var keys: [ItemKey] = []
        for text in form.all("key") {
            guard let key = try? ItemKey(text) else { throw WebError.badRequest("“\(text)” is not an item key.") }
            keys.append(key)
        }
        guard !keys.isEmpty else {
            throw WebError.badRequest("Select the items to remove first (tap Select, then the cards).")
        }
        guard keys.count <= 10_000 else { throw WebError.tooLarge("Remove at most 10,000 items at a time.") }
        return try await removeAndReport(keys)
    }

    private func removeAndReport(_ keys: [ItemKey]) async throws -> Response {
        let start = ContinuousClock.now
        let (changes, names) = try await worker.run { store in
            let names = Dictionary(
                try store.records(keys).map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
            return (try store.delete(keys, keepInTrash: true), names)
        }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Int(
            elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        return Layout.response(
            ItemPages.changeSet(changes, names: names, milliseconds: milliseconds, csrf: secrets.csrf))
    }

    /// Restores the newest trashed version of each key (or entry `id` of one key).
    func restore(_ request: Request) async throws -> Response {
        let form = try await form(request, limit: Self.maxFormBytes)
        let keys = form.all("key").compactMap { try? ItemKey($0) }
        guard !keys.isEmpty, keys.count == form.all("key").count else {
            throw WebError.badRequest("Nothing to restore: the form names no item.")
        }
        var id: Int64?
        if let text = form["id"] {
            guard keys.count == 1, let number = Int64(text) else {
                throw WebError.badRequest("“\(text)” is not a trash entry.")
            }
            id = number
        }
        let entry = id
        let restored = try await worker.run { store in
            try keys.map { try store.restoreFromTrash(key: $0, id: entry) }
        }
        if restored.count == 1 { return Layout.redirect("/items/\(restored[0].key.rawValue)?saved=1") }
        return Layout.redirect("/?restored=\(restored.count)")
    }
}
