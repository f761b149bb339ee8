import Foundation
import HPSyncTesting
import Testing

@Suite("the progress line on a terminal, run as a binary")
struct ProgressTerminalTests {
    /// Python gives the pull a terminal of `columns` columns as stderr and prints what it drew.
    static let terminal = """
        import fcntl, os, pty, struct, subprocess, sys, termios
        columns, term = int(sys.argv[1]), sys.argv[2]
        primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        env = dict(os.environ, TERM=term)
        result = subprocess.run(sys.argv[3:], stderr=secondary, stdout=subprocess.DEVNULL, env=env)
        os.close(secondary)
        drawn = b""
        try:
            while chunk := os.read(primary, 65536):
                drawn += chunk
        except OSError:
            pass
        sys.stdout.write(drawn.decode("utf-8", "replace"))
        sys.exit(result.returncode)
        """

    static func pull(_ pair: Pair, columns: Int, term: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", "-c", terminal, "\(columns)", term, pair.backup.binary.path, "pull", "primary"]
            + ["--store", pair.backup.store.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func theLineFitsTheTerminalAndADumbOneGetsNone() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(30)
        try pair.serve()
        let (status, drawn) = try Self.pull(pair, columns: 30, term: "xterm")
        #expect(status == 0, "\(drawn)")
        let frames = drawn.components(separatedBy: "\r\u{1B}[K").filter { !$0.isEmpty }
        #expect(!frames.isEmpty, "no progress drawn: \(drawn.debugDescription)")
        for frame in frames { #expect(frame.count <= 29, "\(frame.debugDescription)") }
        try pair.primary.run(["add", "--name", "one more"])
        let (dumbStatus, dumb) = try Self.pull(pair, columns: 30, term: "dumb")
        #expect(dumbStatus == 0)
        #expect(!dumb.contains("\u{1B}[K") && !dumb.contains("pulling from"), "\(dumb.debugDescription)")
    }
}
