import Foundation
import HPSyncTesting
import Testing

/// Independent programs, written in Python from Protocol.md, hpsync.proto and the README alone,
/// run against the real binary and must end up with exactly what hp-sync reports.
@Suite struct InteropTests {
    static var toolsPresent: Bool {
        ["/usr/bin/python3", "/usr/local/bin/python3"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        } && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    }

    /// Python's `cryptography` package (ChaCha20-Poly1305, HKDF), which the blind restore needs;
    /// `Scripts/test` installs it (Debian's python3-cryptography).
    static var cryptographyPresent: Bool {
        toolsPresent && (try? run(["python3", "-c", "import cryptography"]).status) == 0
    }

    /// A client pulls from a real `hp-sync serve` (protocol versions 1 and 3).
    @Test(.enabled(if: toolsPresent, "needs python3 and openssl")) func pythonClientPullsEverything() throws {
        try Self.expectPass("run.sh")
    }

    /// A version-5 client: every merge digest, fields bytes, winner and open conflict of real
    /// clashes, and an older session that carries none of them.
    @Test(.enabled(if: toolsPresent, "needs python3 and openssl")) func pythonClientMergesFields() throws {
        try Self.expectPass("run-field-merge.sh")
    }

    /// An offline restore of a blind host's packs with only the recovery key, and the damage a
    /// reader must refuse.
    @Test(.enabled(if: cryptographyPresent, "needs python3 with the cryptography package"))
    func pythonReaderRestoresABlindStore() throws {
        try Self.expectPass("run-blind-restore.sh")
    }

    private static func expectPass(_ script: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/\(script)").path
        let result = try run(["/bin/bash", path, try BinaryRunner.locateBinary().path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("PASS"))
    }

    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
