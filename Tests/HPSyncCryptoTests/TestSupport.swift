import Foundation
import HPSyncCrypto
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

let quietLogger = Logger(label: "hp-sync.tests") { _ in SwiftLogNoOpLogHandler() }

/// A value shared between test threads under a lock.
final class Locked<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body(&value)
    }

    var current: Value { withLock { $0 } }

    /// Waits until `predicate` holds or `timeout` passes; returns whether it holds.
    func wait(timeout: TimeInterval, until predicate: (Value) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(value) {
            if !condition.wait(until: deadline) { return predicate(value) }
        }
        return true
    }
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

/// A plain TCP connection that never speaks TLS; returns the descriptor.
func rawTCPConnect(port: UInt16, from source: String? = nil) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    if let source {
        // Linux routes all of 127.0.0.0/8 to lo: another loopback address is another "host".
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            return -1
        }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return result == 0 ? fd : -1
}

/// Waits up to `timeout` for the peer to close a raw socket; true if it saw EOF or a reset.
func waitForPeerClose(_ fd: Int32, timeout: TimeInterval) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while Date() < deadline {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
        if ready <= 0 { continue }
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { return true }
    }
    return false
}

let opensslPath = "/usr/bin/openssl"
var hasOpenSSLBinary: Bool { FileManager.default.isExecutableFile(atPath: opensslPath) }
