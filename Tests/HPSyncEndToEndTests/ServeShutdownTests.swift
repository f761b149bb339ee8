import Foundation
import HPSyncTesting
import Testing

/// Regression (session 12): `serve` stopped while its sessions were still hashing and encrypting
/// crashed on its way out: 3 times in 14 with two full pulls in flight and `--grace 0` (SIGSEGV,
/// or a fatal "EVP_DigestInit_ex(SHA-256) failed"), because OpenSSL's exit handler freed its
/// state under them. The README promises exit 0 once the grace period is over.
@Suite struct ServeShutdownTests {
    /// Starts `hp-sync pull primary` on `backup` without waiting for it.
    private func startPull(_ backup: BinaryRunner) throws -> Process {
        let process = Process()
        process.executableURL = backup.binary
        process.arguments = ["pull", "primary", "--quiet", "--store", backup.store.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func serveStoppedWithPullsInFlightExits0EveryTime() throws {
        let primary = try BinaryRunner.initialized()
        defer { primary.cleanUp() }
        try DiskFullTests.addImages(primary, count: 24, size: 400_000)
        let primaryID = try primary.nodeID()
        var statuses: [Int32: Int] = [:]
        let rounds = 16
        for round in 0..<rounds {
            let backups = try (0..<3).map { _ in try BinaryRunner.initialized() }
            defer { backups.forEach { $0.cleanUp() } }
            for (index, backup) in backups.enumerated() {
                try #require(try primary.run(["peer", "add", "backup\(round)x\(index)", backup.nodeID()]).status == 0)
            }
            let server = try ServeProcess(primary, extra: ["--grace", "0"])
            for backup in backups {
                try #require(
                    try backup.run(["peer", "add", "primary", primaryID, "--address", server.address]).status == 0)
            }
            let pulls = try backups.map(startPull)
            // Stop at a different moment of the transfer each round.
            usleep(UInt32(20_000 + (round % 8) * 25_000))
            let (status, log) = server.stop()
            pulls.forEach { $0.waitUntilExit() }
            let signaled = server.process.terminationReason == .uncaughtSignal
            statuses[signaled ? -status : status, default: 0] += 1
            if signaled || status != 0 {
                Issue.record(
                    "round \(round): serve \(signaled ? "killed by signal" : "exited") \(status): \(log.suffix(400))")
            }
        }
        #expect(statuses == [0: rounds], "serve's exit statuses (negative: killed by that signal) and how often")
    }
}
