import Foundation
import HPSyncTesting
import Testing

/// An independent client, written in Python from Protocol.md and hpsync.proto alone, pulls from
/// a real `hp-sync serve` and must end up with exactly what hp-sync reports.
@Suite struct InteropTests {
    static var toolsPresent: Bool {
        ["/usr/bin/python3", "/usr/bin/openssl", "/usr/local/bin/python3"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        } && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    }

    @Test(.enabled(if: toolsPresent, "needs python3 and openssl")) func pythonClientPullsEverything() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/run.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path, try BinaryRunner.locateBinary().path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("PASS"))
    }
}
