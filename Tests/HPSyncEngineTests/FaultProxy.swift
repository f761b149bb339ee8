import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1 that forwards to a target port and injects one fault into one
/// direction of every connection: the network misbehaving between a real client and server.
final class FaultProxy: @unchecked Sendable {
    enum Fault: Sendable, CustomStringConvertible {
        /// Forward faithfully.
        case none
        /// Close both sockets once `afterBytes` have gone through (a dropped connection).
        case cut(afterBytes: Int)
        /// Stop forwarding after `afterBytes`, keeping the connection open (a black hole).
        case stall(afterBytes: Int)
        /// Forward at most this many bytes a second.
        case throttle(bytesPerSecond: Int)
        /// XOR the byte at this offset with 0x20 (corruption TCP's checksum missed).
        case flip(atByte: Int)

        var description: String {
            switch self {
            case .none: "none"
            case .cut(let n): "cut after \(n) B"
            case .stall(let n): "stall after \(n) B"
            case .throttle(let rate): "throttle \(rate) B/s"
            case .flip(let n): "flip byte \(n)"
            }
        }
    }

    enum Direction: Sendable, CustomStringConvertible {
        case toServer, toClient
        var description: String { self == .toServer ? "client->server" : "server->client" }
    }

    /// Faults actually triggered (a cut or flip past the end of the conversation does not count).
    static let injected = Atomic<Int>(0)

    let port: UInt16
    private let listener: Int32
    private let targetPort: UInt16
    private let fault: Fault
    private let direction: Direction
    private let stopped = Atomic<Bool>(false)
    private let threads = DispatchGroup()

    init(to targetPort: UInt16, fault: Fault, direction: Direction) throws {
        self.targetPort = targetPort
        self.fault = fault
        self.direction = direction
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        threads.enter()
        Thread.detachNewThread { [self] in
            acceptLoop()
            threads.leave()
        }
    }

    /// Stops accepting, tears down every connection, and waits for the proxy's threads.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        threads.wait()
        close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Waits until `fd` is readable or 50 ms passed; false when the proxy is stopping.
    private func waitReadable(_ fd: Int32) -> Bool? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 50)
        if stopped.load(ordering: .relaxed) { return nil }
        return ready > 0
    }

    private func acceptLoop() {
        while let ready = waitReadable(listener) {
            guard ready else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            let link = Link(client: client, server: server)
            for faulty in [true, false] {
                let (from, to) =
                    (direction == .toServer) == faulty ? (client, server) : (server, client)
                threads.enter()
                Thread.detachNewThread { [self] in
                    pump(from: from, to: to, fault: faulty ? fault : .none, link: link)
                    threads.leave()
                }
            }
        }
    }

    /// The two sockets of one proxied connection, closed once when either pump ends.
    final class Link: @unchecked Sendable {
        let client: Int32
        let server: Int32
        private let pumpsLeft = Atomic<Int>(2)
        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }
        /// Both directions stop at once, as when a cable is pulled.
        func cut() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }
        func pumpEnded() {
            if pumpsLeft.subtract(1, ordering: .relaxed).newValue == 0 {
                close(client)
                close(server)
            }
        }
    }

    private func pump(from: Int32, to: Int32, fault: Fault, link: Link) {
        defer {
            link.cut()
            link.pumpEnded()
        }
        var forwarded = 0
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var stalled = false
        let started = Date()
        if case .throttle = fault { Self.injected.add(1, ordering: .relaxed) }
        while let ready = waitReadable(from) {
            if stalled { continue }
            guard ready else { continue }
            var limit = buffer.count
            switch fault {
            case .cut(let n), .stall(let n): limit = min(limit, n - forwarded)
            case .throttle(let rate): limit = min(limit, max(1, rate / 20))
            default: break
            }
            if limit <= 0 {
                Self.injected.add(1, ordering: .relaxed)
                if case .stall = fault {
                    stalled = true
                    continue
                }
                return
            }
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, limit) }
            guard count > 0 else { return }
            if case .flip(let offset) = fault, offset >= forwarded, offset < forwarded + count {
                buffer[offset - forwarded] ^= 0x20
                Self.injected.add(1, ordering: .relaxed)
            }
            var sent = 0
            while sent < count {
                let n = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                sent += n
            }
            forwarded += count
            if case .throttle(let rate) = fault {
                let due = Double(forwarded) / Double(rate) - Date().timeIntervalSince(started)
                if due > 0 { usleep(UInt32(due * 1_000_000)) }
            }
        }
    }
}
