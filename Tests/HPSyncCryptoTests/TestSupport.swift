import Foundation
import HPSyncCrypto
import HPSyncTesting

/// A fresh temporary folder per test.
func temporaryDirectory(_ label: String = "hpsync") throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A new identity in its own temporary store.
func makeIdentity() throws -> NodeIdentity {
    try NodeIdentity.create(in: try temporaryDirectory("store"))
}

/// A TLSListener on 127.0.0.1, port 0, running on its own thread.
final class TestServer: Sendable {
    let listener: TLSListener
    let identity: NodeIdentity

    convenience init(
        identity: NodeIdentity? = nil, limits: ConnectionLimits = .init(), timeouts: TLSTimeouts = .init(),
        handler: @escaping @Sendable (TLSConnection) -> Void
    ) throws {
        try self.init(
            identity: identity, limits: limits, timeouts: timeouts,
            admitting: { connection, admission in
                if admission.authorize() { handler(connection) }
            })
    }

    /// A server whose handler decides when to authorize (`Admission.authorize()`).
    init(
        identity: NodeIdentity? = nil, limits: ConnectionLimits = .init(), timeouts: TLSTimeouts = .init(),
        admitting handler: @escaping @Sendable (TLSConnection, Admission) -> Void
    ) throws {
        let identity = try identity ?? makeIdentity()
        self.identity = identity
        let listener = try TLSListener(
            identity: identity, bind: [(host: "127.0.0.1", port: 0)], limits: limits,
            timeouts: timeouts, logger: quietLogger)
        self.listener = listener
        let thread = Thread { try? listener.run(handler: handler) }
        thread.start()
    }

    var port: UInt16 { listener.boundAddresses[0].port }

    func stop() {
        listener.stop()
        _ = listener.waitForHandlers(timeout: .seconds(10))
    }
}

/// Runs `body` on a new thread; `join()` waits for it.
final class Worker: @unchecked Sendable {
    private let done = Locked(false)

    init(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [done] in
            body()
            done.withLock { $0 = true }
        }
        thread.stackSize = 512 << 10
        thread.start()
    }

    @discardableResult
    func join(timeout: TimeInterval = 30) -> Bool {
        done.wait(timeout: timeout) { $0 }
    }
}

/// Reads random bytes from the kernel (fast enough for 100 MB, unlike a per-word generator).
final class RandomSource {
    private let handle: FileHandle

    init() throws { handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom")) }

    deinit { try? handle.close() }

    func fill(_ buffer: inout [UInt8]) {
        let data = handle.readData(ofLength: buffer.count)
        buffer.withUnsafeMutableBytes { _ = data.copyBytes(to: $0) }
    }
}

let opensslPath = "/usr/bin/openssl"
var hasOpenSSLBinary: Bool { FileManager.default.isExecutableFile(atPath: opensslPath) }
