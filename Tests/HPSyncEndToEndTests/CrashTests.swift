import Foundation
import HPSyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pull` and `push` between two real `hp-sync` processes over TLS, killed with SIGKILL at random
/// moments. After every kill both stores verify clean, no acknowledged local change is lost, and
/// the next sync converges.
///
/// `HP_SYNC_KILLS` sets the number of kills (default 12, CI's short round; the power-cut test
/// covers what a kill cannot); `Scripts/torture N` runs N (default 300).
@Suite(.serialized) struct CrashTests {
    static var kills: Int { Int(ProcessInfo.processInfo.environment["HP_SYNC_KILLS"] ?? "") ?? 12 }

    /// A command running in the background, to be killed or waited for.
    final class Running {
        let process = Process()
        init(_ runner: BinaryRunner, _ arguments: [String]) throws {
            process.executableURL = runner.binary
            process.arguments = arguments + ["--store", runner.store.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        func kill() {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    enum Victim: String, CaseIterable { case client, server, both }

    /// Adds `count` items in one import: a local change acknowledged once the command exits 0.
    static func addBatch(_ runner: BinaryRunner, prefix: String, count: Int) throws -> [String] {
        let keys = (0..<count).map { _ in UUID().uuidString }
        let items = keys.enumerated().map { index, key in
            [
                "key": key, "name": "\(prefix) \(index)", "valueInDollars": index,
                "dateCreatedMilliseconds": 1_750_000_000_000,
            ] as [String: Any]
        }
        let document: [String: Any] = ["format": "hp-sync-export", "version": 1, "items": items]
        let file = runner.root.appendingPathComponent("batch-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: document).write(to: file)
        let result = try runner.run(["import", file.path])
        try #require(result.status == 0, "import failed: \(result.stderr)")
        return keys
    }

    static func keys(_ runner: BinaryRunner) throws -> Set<String> {
        let result = try runner.run(["list", "--json"])
        let items = try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]] ?? []
        return Set(items.compactMap { $0["key"] as? String })
    }

    @Test func killedSyncsLoseNothingAndTheNextSyncConverges() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let (primary, backup, primaryID) = (pair.primary, pair.backup, pair.primaryID)
        var server = try pair.serve(allow: "read-write")
        let photo = try primary.file("photo.jpg", Images.jpeg + (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try #require(try primary.run(["add", "--name", "With photo", "--image", photo.path]).status == 0)

        let seed = UInt64(ProcessInfo.processInfo.environment["HP_SYNC_SEED"] ?? "") ?? UInt64.random(in: 0...99_999)
        var random = SplitMix64(seed: seed)
        var acknowledgedPrimary = Set<String>()
        var acknowledgedBackup = Set<String>()
        var tally: [String: Int] = [:]
        for round in 0..<Self.kills {
            acknowledgedPrimary.formUnion(try Self.addBatch(primary, prefix: "p\(round)", count: 120))
            acknowledgedBackup.formUnion(try Self.addBatch(backup, prefix: "b\(round)", count: 120))
            let verb = Bool.random(using: &random) ? "pull" : "push"
            let victim = Victim.allCases.randomElement(using: &random)!
            let delay = UInt32.random(in: 0...250_000, using: &random)
            let context = "seed \(seed) round \(round): \(verb), kill \(victim) after \(delay / 1000) ms"
            let client = try Running(backup, [verb, "primary"])
            usleep(delay)
            let finishedFirst = !client.process.isRunning
            if victim != .server { client.kill() }
            if victim != .client {
                kill(server.process.processIdentifier, SIGKILL)
                _ = server.stop()
            }
            if victim == .server { client.process.waitUntilExit() }
            tally["\(verb) \(victim)\(finishedFirst ? " (finished first)" : "")", default: 0] += 1

            for (runner, name) in [(primary, "primary"), (backup, "backup")] {
                let verify = try runner.run(["verify"])
                #expect(verify.status == 0, "\(name) verify after \(context): \(verify.stderr) \(verify.text)")
            }
            #expect(acknowledgedPrimary.isSubset(of: try Self.keys(primary)), "primary lost a change: \(context)")
            #expect(acknowledgedBackup.isSubset(of: try Self.keys(backup)), "backup lost a change: \(context)")
            if victim != .client {
                server = try pair.start(primary)
                try backup.run(["peer", "rm", "primary"])
                try backup.run(
                    ["peer", "add", "primary", primaryID, "--address", server.address, "--allow", "read-write"])
            }
        }
        let synced = try backup.run(["sync", "primary"])
        #expect(synced.status == 0, "final sync: \(synced.stderr)")
        let primaryItems = try primary.run(["list", "--json", "--deleted"]).stdout
        let backupItems = try backup.run(["list", "--json", "--deleted"]).stdout
        #expect(primaryItems == backupItems, "stores differ after the final sync (seed \(seed))")
        #expect(try Self.keys(primary).count == acknowledgedPrimary.count + acknowledgedBackup.count + 1)
        print("crash: \(Self.kills) kills (seed \(seed)): \(tally.sorted { $0.key < $1.key })")
    }
}
