import Foundation
import HPSyncModel
import HPSyncStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The web app's routes on one store: Homepwner in a browser.
///
/// Every route sits behind `AccessGuard` (the token) and `ErrorPages` (a page for every error,
/// security headers on every response). Handlers are thin: they read and check the request,
/// run the store call on the `StoreWorker`'s threads and render a page.
public struct WebApp: Sendable {
    let worker: StoreWorker
    let secrets: AccessSecrets
    let uploads: URL
    /// The largest body a form with a photo may have: the store's image limit and room for fields.
    let maxUploadBytes: Int
    /// The largest plain form (edits, selections of many keys).
    static let maxFormBytes = 4 << 20

    public init(worker: StoreWorker, secrets: AccessSecrets) throws {
        self.worker = worker
        self.secrets = secrets
        maxUploadBytes = Int(worker.store.maxImageBytes) + (1 << 20)
        uploads = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hp-sync-web-" + AccessSecrets.random(bytes: 8), isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: uploads, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw WebError.internalError("cannot create a folder for uploads in \(uploads.path): \(error)")
        }
    }

    /// Removes the uploads folder (any file left there is a request that never finished).
    public func cleanUp() {
        try? FileManager.default.removeItem(at: uploads)
    }

    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        // Middleware first: Hummingbird wraps each route with the middleware added before it.
        router.add(middleware: ErrorPages())
        router.add(middleware: AccessGuard(secrets: secrets))
        router.add(middleware: ClockBanner(worker: worker))
        router.get(RouterPath(stringLiteral: Assets.cssPath)) { _, _ in Self.asset(Assets.css, type: "text/css") }
        router.get(RouterPath(stringLiteral: Assets.javascriptPath)) { _, _ in
            Self.asset(Assets.javascript, type: "text/javascript")
        }
        router.get("/image/:digest") { request, context in try await image(request, context) }
        router.get("/") { request, _ in try await inventory(request) }
        router.post("/remove") { request, _ in try await removeSelected(request) }
        router.get("/new") { _, _ in Layout.response(ItemPages.new(csrf: secrets.csrf)) }
        router.post("/items") { request, _ in try await add(request) }
        router.get("/items/:key") { request, context in try await detail(request, context) }
        router.post("/items/:key") { request, context in try await edit(request, context) }
        router.post("/items/:key/photo") { request, context in try await setPhoto(request, context) }
        router.post("/items/:key/photo/remove") { request, context in try await removePhoto(request, context) }
        router.get("/items/:key/delete") { request, context in try await confirmDelete(request, context) }
        router.post("/items/:key/delete") { request, context in try await delete(request, context) }
        router.get("/sync") { request, _ in try await sync(request) }
        router.get("/conflicts") { request, _ in try await conflicts(request) }
        router.post("/conflicts/take") { request, _ in try await takeConflict(request) }
        router.post("/trash/restore") { request, _ in try await restore(request) }
        router.get("/report") { _, _ in try await report() }
        return router
    }

    // MARK: - Request helpers

    /// The query string's parameters (the first of each).
    static func parameters(_ request: Request) -> [String: String] {
        Form.urlEncoded(request.uri.query ?? "").fields.compactMapValues(\.first)
    }

    /// The `:key` parameter as an item key; anything else is a page that does not exist.
    static func key(_ context: BasicRequestContext) throws -> ItemKey {
        guard let text = context.parameters.get("key"), let key = try? ItemKey(text) else {
            throw WebError.notFound("There is no such item: an item's address ends in its key, a UUID.")
        }
        return key
    }

    /// Reads the body (bounded before a byte is stored), parses it and checks the CSRF token.
    func form(_ request: Request, limit: Int) async throws -> Form {
        // An upload's limit is the photo's plus room for the form around it: the person is told
        // the photo's, the one number they can act on (and the one every other message gives).
        let tooLarge =
            limit == maxUploadBytes
            ? WebError.photoTooLarge(limit: worker.store.maxImageBytes)
            : WebError.tooLarge("The form is larger than this server takes (\(limit / 1024) KiB).")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
        let form = try Form.parse(contentType: request.headers[.contentType], body: body)
        guard let csrf = form["csrf"], AccessSecrets.matches(csrf, secrets.csrf) else {
            throw WebError.forbidden(
                "The form is out of date (hp-sync web was restarted since the page was loaded). Go back, reload the page and send it again."
            )
        }
        return form
    }

    /// Checks an uploaded photo (size and type sniffed from its bytes, as `image set` does) and
    /// writes it to a private temporary file for the store to copy; nil when no file was chosen.
    func stage(_ file: Form.File?) async throws -> URL? {
        // A browser sends an empty part without a file name when no file was chosen.
        guard let file, !(file.filename.isEmpty && file.bytes.readableBytes == 0) else { return nil }
        guard file.bytes.readableBytes > 0 else {
            throw WebError.badRequest("“\(file.filename)” is empty (0 bytes): choose the photo file itself.")
        }
        let limit = worker.store.maxImageBytes
        guard Int64(file.bytes.readableBytes) <= limit else { throw WebError.photoTooLarge(limit: limit) }
        guard Store.isAcceptedImage(header: Array(file.bytes.readableBytesView.prefix(16))) else {
            throw WebError.unsupportedMediaType(
                "“\(file.filename)” is not a photo hp-sync keeps: choose a JPEG (or a PNG, HEIC or GIF).")
        }
        let url = uploads.appendingPathComponent(AccessSecrets.random(bytes: 16))
        let data = Data(file.bytes.readableBytesView)
        try await worker.run { _ in
            guard
                FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600])
            else { throw WebError.internalError("cannot write the upload to \(url.path)") }
        }
        return url
    }

    /// Name (required), serial (empty means none) and value (whole dollars) from a form.
    static func fields(_ form: Form) throws -> (name: String, serial: String?, value: Int64) {
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw WebError.badRequest("Give the item a name.") }
        let serialText = (form["serial"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let valueText = (form["value"] ?? "0").trimmingCharacters(in: .whitespaces)
        guard let value = Int64(valueText.isEmpty ? "0" : valueText) else {
            throw WebError.badRequest("The value “\(valueText)” is not a whole number of dollars.")
        }
        return (name, serialText.isEmpty ? nil : serialText, value)
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type + "; charset=utf-8", .cacheControl: "private, max-age=31536000, immutable"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
