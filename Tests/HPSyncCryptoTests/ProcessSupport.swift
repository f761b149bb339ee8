import Foundation

struct ToolOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A child process whose output is collected in the background.
final class RunningTool: @unchecked Sendable {
    let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stdinPipe = Pipe()
    private let collected = Locked((stdout: Data(), stderr: Data(), closed: 0))

    /// `closeInput: false` keeps stdin open (s_server shuts the connection down on stdin EOF).
    init(_ arguments: [String], input: String = "", closeInput: Bool = true) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = stdinPipe
        try process.run()
        drain(stdoutPipe.fileHandleForReading, isStdout: true)
        drain(stderrPipe.fileHandleForReading, isStdout: false)
        stdinPipe.fileHandleForWriting.write(Data(input.utf8))
        if closeInput { try stdinPipe.fileHandleForWriting.close() }
    }

    private func drain(_ handle: FileHandle, isStdout: Bool) {
        let collected = collected
        Thread {
            let data = handle.readDataToEndOfFile()
            collected.withLock {
                if isStdout { $0.stdout = data } else { $0.stderr = data }
                $0.closed += 1
            }
        }.start()
    }

    /// Waits for exit (killing the process at the timeout) and returns what it printed.
    func finish(timeout: TimeInterval = 15) -> ToolOutput {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        _ = collected.wait(timeout: 5) { $0.closed == 2 }
        let result = collected.current
        return ToolOutput(
            status: process.terminationStatus, stdout: String(decoding: result.stdout, as: UTF8.self),
            stderr: String(decoding: result.stderr, as: UTF8.self))
    }
}

/// Runs a tool to completion.
func runTool(_ arguments: [String], input: String = "", timeout: TimeInterval = 15) throws -> ToolOutput {
    try RunningTool(arguments, input: input).finish(timeout: timeout)
}
