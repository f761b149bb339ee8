import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore

@testable import HPSyncWeb

/// A store in a temporary folder and the web app's router on it, driven through
/// HummingbirdTesting's in-process router client (no socket).
final class WebFixture: @unchecked Sendable {
    let directory: URL
    let store: Store
    let secrets = AccessSecrets()
    let app: WebApp
    let worker: StoreWorker

    init(
        maxImageBytes: Int64 = ItemLimits.defaultMaxImageBytes, busyTimeoutSeconds: Double = 5,
        clock: any WallClock = SystemClock()
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hp-sync-web-test-" + UUID().uuidString, isDirectory: true)
        store = try Store.create(
            at: directory.appendingPathComponent("store"), nodeID: NodeID(certificateDER: Array("web".utf8)),
            configuration: StoreConfiguration(maxImageBytes: maxImageBytes, busyTimeoutSeconds: busyTimeoutSeconds),
            clock: clock, logger: quietLogger)
        worker = StoreWorker(store: store, threads: 2)
        app = try WebApp(worker: worker, secrets: secrets)
    }

    deinit {
        app.cleanUp()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a client for the app.
    func test<T: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        let application = Application(router: app.makeRouter())
        return try await application.test(.router) { client in try await body(client) }
    }

    /// The headers of a browser that has the cookie.
    var cookie: HTTPFields { [.cookie: "\(secrets.cookieName)=\(secrets.token)"] }

    /// An urlencoded form with the CSRF token.
    func form(_ fields: [(String, String)], csrf: Bool = true) -> (HTTPFields, ByteBuffer) {
        var all = fields
        if csrf { all.insert(("csrf", secrets.csrf), at: 0) }
        let body = all.map { "\(Format.query($0.0))=\(Format.query($0.1))" }.joined(separator: "&")
        var headers = cookie
        headers[.contentType] = "application/x-www-form-urlencoded"
        return (headers, ByteBuffer(string: body))
    }

    /// A multipart form with the CSRF token and one file field `photo`.
    func multipart(_ fields: [(String, String)], photo: [UInt8]?, filename: String = "photo.jpg") -> (
        HTTPFields, ByteBuffer
    ) {
        let boundary = "----hpsync" + AccessSecrets.random(bytes: 6)
        var body: [UInt8] = []
        for (name, value) in [("csrf", secrets.csrf)] + fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        if let photo {
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"\(filename)\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8)
            body += photo + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        var headers = cookie
        headers[.contentType] = "multipart/form-data; boundary=\(boundary)"
        return (headers, ByteBuffer(bytes: body))
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
}
