import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HTTPTypes
import Hummingbird
import NIOCore

/// The listing routes: inventory, images, sync, report.
extension WebApp {
    func inventory(_ request: Request) async throws -> Response {
        let parameters = Self.parameters(request)
        let listing = try InventoryRequest(parameters: parameters)
        let query = listing.query
        // One stat per shown item (60 at most): a card never shows a broken image.
        let (page, missing) = try await worker.run { store in
            let page = try store.browse(query)
            return (page, Set(page.items.filter { store.imageFileProblem($0) != nil }.map(\.key)))
        }
        let notice: HTML? = parameters["restored"].flatMap(Int.init).map {
            "Restored \($0) item\($0 == 1 ? "" : "s") from the trash."
        }
        return Layout.response(
            InventoryPage.render(listing, page, missingPhotos: missing, csrf: secrets.csrf, notice: notice))
    }

    /// An image by its SHA-256: the digest is the ETag, and the URL names the content, so the
    /// browser may keep it for good (`immutable`) and never asks again.
    func image(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        guard let hex = context.parameters.get("digest"), let digest = SHA256Digest(hex: hex) else {
            throw WebError.notFound("There is no such photo.")
        }
        let etag = "\"\(digest.hex)\""
        let caching: HTTPFields = [.eTag: etag, .cacheControl: "private, max-age=31536000, immutable"]
        if let match = request.headers[.ifNoneMatch], match == etag || match == "*" {
            return Response(status: .notModified, headers: caching)
        }
        let bytes = try await worker.run { store -> Data? in
            // An item's photo, or one that lost a clash (kept for the Conflicts page).
            guard let url = try store.conflictPhotoFile(digest) else { return nil }
            return try? Data(contentsOf: url)
        }
        guard let bytes else { throw WebError.notFound("There is no such photo (its item may have been deleted).") }
        var headers = caching
        headers[.contentType] = Self.mediaType(Array(bytes.prefix(12)))
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func mediaType(_ header: [UInt8]) -> String {
        if header.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if header.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if header.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if header.count >= 12 && Array(header[4..<8]) == Array("ftyp".utf8) { return "image/heic" }
        return "application/octet-stream"
    }

    func sync(_ request: Request) async throws -> Response {
        let overview = try await worker.run { store in
            SyncOverview(
                status: try store.status(), nodeID: store.nodeID.description, peers: try store.peers(),
                states: try store.peerSyncStates(), trash: try store.trashEntries(),
                now: Int64(store.nowMilliseconds()))
        }
        return Layout.response(SyncPage.render(overview, csrf: secrets.csrf))
    }

    func report() async throws -> Response {
        let (items, now, nodeID) = try await worker.run { store in
            var items: [Item] = []
            try store.forEachLiveItem(order: .name, descending: false) { items.append($0) }
            return (items, Int64(store.nowMilliseconds()), store.nodeID.description)
        }
        return Layout.response(ReportPage.render(items: items, generatedAt: now, nodeID: nodeID))
    }
}
