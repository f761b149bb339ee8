import Foundation
import HPSyncTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback TCP port that accepts connections (in the kernel's backlog) and never answers,
/// so a client hangs in the TLS handshake until its timeout: a run that holds the lock a while.
final class SilentListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    var address: String { "127.0.0.1:\(port)" }

    deinit { close(fd) }
}

extension BinaryRunner {
    /// Starts `pull PEER` (a peer at a `SilentListener`, so it hangs in the TLS handshake for 4 s)
    /// and returns once it holds the store's sync lock.
    func startPullHoldingTheLock(from peer: String) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["pull", peer, "--connect-timeout", "4s", "--quiet", "--store", store.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lockFile = store.appendingPathComponent("sync.lock")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, (try? String(contentsOf: lockFile, encoding: .utf8))?.isEmpty ?? true {
            usleep(20_000)
        }
        return process
    }
}
