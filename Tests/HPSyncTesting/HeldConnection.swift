import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to a loopback port that never speaks TLS: it takes a server's
/// connection slot until `close()`.
public final class HeldConnection: @unchecked Sendable {
    private var fd: Int32

    /// Whether the connection was made (binding `source` may fail where 127.0.0.0/8 is not all
    /// routed to the loopback interface, as it is on Linux).
    public private(set) var isConnected = false

    /// Connects to 127.0.0.1 from `source` (another loopback address stands for another host).
    public init(port: UInt16, from source: String? = nil) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound != 0 { return }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        isConnected =
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
    }

    /// Whether the server closed it within `timeout` seconds (EOF or a reset; bytes it sends
    /// first are read and dropped).
    public func closedByPeer(within timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            if recv(fd, &buffer, buffer.count, 0) <= 0 { return true }
        }
        return false
    }

    /// Waits until the server has closed at least `count` of `connections` (a server shedding
    /// a flood closes the ones past its limit at once), or `timeout` seconds pass; returns how
    /// many it closed.
    @discardableResult
    public static func waitUntilClosed(
        _ connections: [HeldConnection], count: Int, timeout: TimeInterval = 10
    ) -> Int {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var open = connections.filter { $0.fd >= 0 && $0.isConnected }
        var closed = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while closed < count, !open.isEmpty, deadline.timeIntervalSinceNow > 0 {
            var entries = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&entries, nfds_t(entries.count), Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            var still: [HeldConnection] = []
            for (connection, entry) in zip(open, entries) {
                if entry.revents != 0, recv(connection.fd, &buffer, buffer.count, 0) <= 0 {
                    closed += 1
                } else {
                    still.append(connection)
                }
            }
            open = still
        }
        return closed
    }

    public func close() {
        #if canImport(Glibc)
            if fd >= 0 { _ = Glibc.close(fd) }
        #else
            if fd >= 0 { _ = Darwin.close(fd) }
        #endif
        fd = -1
    }

    deinit { close() }
}
