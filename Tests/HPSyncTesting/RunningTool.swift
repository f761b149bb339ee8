import Foundation

/// What a finished child process printed, and how it exited.
public struct ToolOutput: Sendable {
    public var status: Int32
    public var stdoutData: Data
    public var stderr: String

    public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
}

/// A child process whose output is collected in the background.
public final class RunningTool: @unchecked Sendable {
    public let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stdinPipe = Pipe()
    private let collected = Locked((stdout: Data(), stderr: Data(), closed: 0))
    private let exited = Locked(false)

    /// Starts `arguments[0]` with the rest as its arguments. `input` is written to its stdin
    /// (nil: stdin is /dev/null); `closeInput: false` keeps stdin open (s_server shuts the
    /// connection down on stdin EOF). `environment` nil inherits this process's.
    public init(
        _ arguments: [String], environment: [String: String]? = nil, input: String? = "", closeInput: Bool = true
    ) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let environment { process.environment = environment }
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = input == nil ? FileHandle.nullDevice : stdinPipe
        let exited = exited
        process.terminationHandler = { _ in exited.set(true) }
        try process.run()
        drain(stdoutPipe.fileHandleForReading, isStdout: true)
        drain(stderrPipe.fileHandleForReading, isStdout: false)
        if let input {
            stdinPipe.fileHandleForWriting.write(Data(input.utf8))
            if closeInput { try stdinPipe.fileHandleForWriting.close() }
        }
    }

    /// Collects `handle` as it comes, for `waitForStdout` and `finish`.
    private func drain(_ handle: FileHandle, isStdout: Bool) {
        let collected = collected
        Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                collected.withLock { if isStdout { $0.stdout.append(chunk) } else { $0.stderr.append(chunk) } }
            }
            collected.withLock { $0.closed += 1 }
        }.start()
    }

    /// Waits until what the process printed on stdout so far satisfies `condition` (a line
    /// saying it listens, say), it closes its stdout, or `timeout` seconds pass; returns whether
    /// it did.
    @discardableResult
    public func waitForStdout(timeout: TimeInterval = 10, _ condition: (String) -> Bool) -> Bool {
        var satisfied = false
        collected.wait(timeout: timeout) { state in
            satisfied = condition(String(decoding: state.stdout, as: UTF8.self))
            return satisfied || state.closed == 2
        }
        return satisfied
    }

    /// Waits for exit (killing the process at a finite timeout) and returns what it printed.
    public func finish(timeout: TimeInterval = 15) -> ToolOutput {
        if timeout.isFinite, !exited.wait(timeout: timeout, until: { $0 }) { process.terminate() }
        process.waitUntilExit()
        collected.wait(timeout: timeout.isFinite ? 5 : .infinity) { $0.closed == 2 }
        let result = collected.current
        return ToolOutput(
            status: process.terminationStatus, stdoutData: result.stdout,
            stderr: String(decoding: result.stderr, as: UTF8.self))
    }
}

/// Runs a tool to completion.
public func runTool(_ arguments: [String], input: String = "", timeout: TimeInterval = 15) throws -> ToolOutput {
    try RunningTool(arguments, input: input).finish(timeout: timeout)
}
