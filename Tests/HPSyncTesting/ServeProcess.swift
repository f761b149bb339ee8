import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hp-sync serve` running as a real background process on an ephemeral loopback port.
public final class ServeProcess {
    public let process = Process()
    private let stderrPipe = Pipe()
    /// The log so far, and whether the process closed it.
    private let log = Locked((text: Data(), closed: false))
    private var stopped: (status: Int32, log: String)?
    public private(set) var port: UInt16 = 0

    public init(_ runner: BinaryRunner, extra: [String] = []) throws {
        process.executableURL = runner.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--store", runner.store.path] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        collect(stderrPipe.fileHandleForReading)
        port = try waitForPort()
    }

    /// Reads the log as it comes, for `waitForLog` and `stop`.
    private func collect(_ handle: FileHandle) {
        let log = self.log
        Thread.detachNewThread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                log.withLock { $0.text.append(chunk) }
            }
            log.withLock { $0.closed = true }
        }
    }

    /// Waits until the "serving" line names the port.
    private func waitForPort() throws -> UInt16 {
        var port: UInt16?
        waitForLog(timeout: 20) { text in
            guard let range = text.range(of: "listen=127.0.0.1:") else { return false }
            port = UInt16(text[range.upperBound...].prefix { $0.isNumber })
            return port != nil
        }
        if let port { return port }
        process.terminate()
        throw ServeFailed(log: String(decoding: log.current.text, as: UTF8.self))
    }

    public var address: String { "127.0.0.1:\(port)" }

    /// Waits until the log so far satisfies `condition` (a line a session writes when it ends,
    /// say), the process closes its log, or `timeout` seconds pass; returns whether it did.
    @discardableResult
    public func waitForLog(timeout: TimeInterval = 10, _ condition: (String) -> Bool) -> Bool {
        var satisfied = false
        log.wait(timeout: timeout) { state in
            satisfied = condition(String(decoding: state.text, as: UTF8.self))
            return satisfied || state.closed
        }
        return satisfied
    }

    /// Waits until the server logs the end of `count` sessions with `peer` ("session done",
    /// written once the session is recorded for `status`); returns whether it did in time.
    @discardableResult
    public func waitForSessionDone(peer: String, count: Int = 1, timeout: TimeInterval = 10) -> Bool {
        waitForLog(timeout: timeout) { text in
            text.split(separator: "\n").count { $0.contains("session done") && $0.contains("peer=\(peer)") } >= count
        }
    }

    /// Sends SIGTERM, waits, and returns the exit status and the whole log. Once stopped, it
    /// answers the same again.
    @discardableResult
    public func stop() -> (status: Int32, log: String) {
        if let stopped { return stopped }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        log.wait(timeout: 5) { $0.closed }
        let result = (process.terminationStatus, String(decoding: log.current.text, as: UTF8.self))
        stopped = result
        return result
    }

    struct ServeFailed: Error, CustomStringConvertible {
        var log: String
        var description: String { "hp-sync serve did not start: \(log)" }
    }
}
