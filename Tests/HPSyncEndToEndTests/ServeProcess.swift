import Foundation
import HPSyncTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hp-sync serve` running as a real background process on an ephemeral loopback port.
final class ServeProcess {
    let process = Process()
    private let stderrPipe = Pipe()
    private let collected = Locked<Data?>(nil)
    private(set) var port: UInt16 = 0

    init(_ runner: BinaryRunner, extra: [String] = []) throws {
        process.executableURL = runner.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--store", runner.store.path] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        port = try waitForPort()
    }

    /// Reads the log until the "serving" line names the port.
    private func waitForPort() throws -> UInt16 {
        var log = Data()
        let handle = stderrPipe.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            log.append(chunk)
            let text = String(decoding: log, as: UTF8.self)
            if let range = text.range(of: "listen=127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = UInt16(digits) {
                    drainInBackground(handle, already: log)
                    return port
                }
            }
        }
        process.terminate()
        throw ServeFailed(log: String(decoding: log, as: UTF8.self))
    }

    private func drainInBackground(_ handle: FileHandle, already: Data) {
        let collected = self.collected
        Thread.detachNewThread {
            var all = already
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                all.append(chunk)
            }
            collected.withLock { $0 = all }
        }
    }

    var address: String { "127.0.0.1:\(port)" }

    /// Sends SIGTERM, waits, and returns the exit status and the whole log.
    func stop() -> (status: Int32, log: String) {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        collected.wait(timeout: 5) { $0 != nil }
        return (process.terminationStatus, String(decoding: collected.current ?? Data(), as: UTF8.self))
    }

    struct ServeFailed: Error, CustomStringConvertible {
        var log: String
        var description: String { "hp-sync serve did not start: \(log)" }
    }
}
