import Foundation
import HPSyncCrypto
import HPSyncTesting
import Testing

/// Unattended operation through the binary: exit codes, the run lock, the mass-deletion guard,
/// `status --check` and `--quiet`.
@Suite(.serialized) struct CronCommandTests {
    @Test func exitCodeTableIsPrintedAndMatchesTheReadme() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let table = try runner.run(["exit-codes"], withStore: false)
        #expect(table.status == 0)
        let codes = table.text.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
        #expect(codes == [0, 1, 3, 64, 65, 66, 69, 70, 73, 74, 75, 76, 77, 79, 80, 81])
        let help = try runner.run(["help", "exit-codes"], withStore: false)
        #expect(help.status == 0)
        #expect(help.text.contains("79  locked"))
        let markdown = try runner.run(["exit-codes", "--markdown"], withStore: false)
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(markdown.text), "README's exit code table differs from `hp-sync exit-codes --markdown`")
    }

    @Test func usageErrorsExit64() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        #expect(try runner.run(["pull"]).status == 64)
        #expect(try runner.run(["pull", "no such host!"]).status == 64)
        #expect(try runner.run(["status", "--check", "soon"]).status == 64)
        #expect(try runner.run(["pull", "x", "--retries", "-1"]).status == 64)
    }

    @Test func quietPullPrintsNothingAndStatusRecordsIt() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(3)
        try pair.serve()
        let backup = pair.backup
        let never = try backup.run(["status", "--check", "1h"])
        #expect(never.status == 1)
        #expect(never.stderr.contains("primary has never synced successfully"))

        let quiet = try backup.run(["pull", "primary", "--quiet"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.text.isEmpty)
        #expect(quiet.stderr.isEmpty)
        #expect(try backup.run(["list"]).text.contains("Item 2"))

        let fresh = try backup.run(["status", "--check", "1h"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.text.contains("peer primary:"))
        #expect(fresh.text.contains("last pull:"))
        #expect(fresh.stderr.isEmpty)
        let stale = try backup.later(["status", "--check", "1s"])
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("primary last synced"))
        #expect(try backup.run(["status", "--check", "1h", "--peer", "nosuch"]).status == 64)
    }

    @Test func failuresAreRecordedForStatus() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try runner.run(["peer", "add", "gone", NodeIDFixture.any, "--address", "127.0.0.1:1"])
        let failed = try runner.run(["pull", "gone", "--quiet", "--retries", "2", "--retry-delay", "50ms"])
        #expect(failed.status == 69)
        #expect(failed.stderr.hasPrefix("hp-sync: error: "))
        #expect(failed.stderr.contains("resumes from the last committed page (gave up after 2 retries)"))
        #expect(failed.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "\(failed.stderr)")
        let status = try runner.run(["status", "--check", "1d"])
        #expect(status.status == 1)
        #expect(status.text.contains("last error:"))
        #expect(status.text.contains("pull:"))
    }

    @Test func aSecondRunExitsAtOnceWithTheLockHoldersPID() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let silent = try SilentListener()
        try runner.run(["peer", "add", "slow", NodeIDFixture.any, "--address", silent.address])
        // The first pull hangs in the TLS handshake for 4 s, holding the lock.
        let first = try runner.startPullHoldingTheLock(from: "slow")
        defer { first.waitUntilExit() }
        let started = Date()
        let second = try runner.run(["pull", "slow"])
        #expect(second.status == 79)
        #expect(second.stderr.contains("process \(first.processIdentifier)"), "\(second.stderr)")
        #expect(second.stderr.contains("holds the store's lock"))
        #expect(Date().timeIntervalSince(started) < 3)
        // Local commands and status keep working meanwhile.
        #expect(try runner.run(["add", "--name", "During"]).status == 0)
        #expect(try runner.run(["status"]).status == 0)
        first.waitUntilExit()
        #expect(first.terminationStatus == 69)
        // The lock is released with the process: the next run gets it.
        let third = try runner.run(["pull", "slow", "--connect-timeout", "1s"])
        #expect(third.status == 69)
    }

    @Test func guardStopsAPullThatWouldEmptyTheBackup() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(14)
        try pair.serve()
        let (primary, backup) = (pair.primary, pair.backup)
        #expect(try backup.run(["pull", "primary"]).status == 0)
        // A few deletions pass: under the floor.
        #expect(try primary.run(["rm"] + keys.prefix(2)).status == 0)
        #expect(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        #expect(try backup.run(["list"]).text.contains(keys[0]) == false)
        // The source now looks empty: every remaining item deleted.
        #expect(try primary.run(["rm"] + keys.dropFirst(2)).status == 0)
        let refused = try backup.run(["pull", "primary", "--quiet"])
        #expect(refused.status == 80)
        #expect(refused.stderr.contains("would delete 12 of 12 live items"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--allow-mass-delete"))
        #expect(refused.text.isEmpty)
        // Nothing was applied, and the refusal shows in status.
        #expect(try backup.run(["list"]).text.components(separatedBy: "Item ").count - 1 == 12)
        #expect(try backup.run(["status"]).text.contains("refused to pull"))
        // An absolute cap also applies, even below the fraction rule.
        #expect(try backup.run(["pull", "primary", "--max-delete", "3"]).status == 80)
        let allowed = try backup.run(["pull", "primary", "--allow-mass-delete"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.text.contains("12 deleted"))
        #expect(try backup.run(["verify"]).status == 0)
    }

    @Test func refusedRecordsExit3AndAreListed() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(1)
        try pair.serve()
        // An item stamped a day in the future (a node with a broken clock), imported on primary.
        let future = (UInt64(Date().timeIntervalSince1970 * 1000) + 86_400_000) << 16
        let export = """
            {"format": "hp-sync-export", "version": 1, "items": [
            {"key": "ABCD0000-0000-4000-8000-000000000001", "name": "from the future", "valueInDollars": 1,
             "dateCreated": "2024-01-01", "stamp": \(future), "origin": "\(pair.primaryID)"}]}
            """
        let file = try pair.primary.file("future.json", Array(export.utf8))
        let imported = try pair.primary.run(["import", file.path])
        try #require(imported.status == 0, "\(imported.stderr)")
        let pulled = try pair.backup.run(["pull", "primary", "--quiet"])
        #expect(pulled.status == 3, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("hp-sync: warning: refused ABCD0000-0000-4000-8000-000000000001"))
        #expect(pulled.stderr.contains("1 record was refused"))
        #expect(try pair.backup.run(["list"]).text.contains(keys[0]))
    }

    /// Issue 12 §1: a push the server refuses is not a silent success.
    @Test func aPushTheServerRefusesExits3AndListsTheRefusals() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(1)
        try pair.serve(allow: "read-write")
        let backup = pair.backup
        // A record this node stamped while its clock ran a day ahead.
        let future = (UInt64(Date().timeIntervalSince1970 * 1000) + 86_400_000) << 16
        let export = """
            {"format": "hp-sync-export", "version": 1, "items": [
            {"key": "ABCD0000-0000-4000-8000-000000000002", "name": "from the future", "valueInDollars": 1,
             "dateCreated": "2024-01-01", "stamp": \(future), "origin": "\(pair.backupID)"}]}
            """
        try #require(try backup.run(["import", backup.file("future.json", Array(export.utf8)).path]).status == 0)
        let pushed = try backup.run(["push", "primary", "--json"])
        #expect(pushed.status == 3, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("primary refused ABCD0000-0000-4000-8000-000000000002"), "\(pushed.stderr)")
        #expect(pushed.stderr.contains("1 record was refused"))
        let json = try JSONSerialization.jsonObject(with: pushed.stdout) as? [String: Any]
        #expect(json?["refusedCount"] as? Int == 1)
        // Offered again by the next push, refused again: never silently dropped.
        let again = try backup.run(["push", "primary", "--quiet"])
        #expect(again.status == 3, "\(again.stderr)")
    }

    /// Issue 12 §1: a pull whose source lacks a record's image warns instead of exiting 0.
    @Test func aPullWhoseSourceLacksAnImageExits3() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.serve()
        let primary = pair.primary
        let photo = try primary.file("photo.jpg", Images.jpeg)
        let added = try primary.run(["add", "--name", "Camera", "--image", photo.path])
        let key = added.text.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(at: primary.store.appendingPathComponent("images/\(key)"))
        let pulled = try pair.backup.run(["pull", "primary", "--quiet"])
        #expect(pulled.status == 3, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("withheld \(key)"), "\(pulled.stderr)")
    }

    @Test func aStoreErrorExits74() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let photo = try pair.primary.file("photo.jpg", Images.jpeg)
        try pair.primary.run(["add", "--name", "Framed", "--image", photo.path])
        try pair.serve()
        // The images directory replaced by a file: the disk refuses every image write.
        let images = pair.backup.store.appendingPathComponent("images")
        try FileManager.default.removeItem(at: images)
        try Data("not a directory".utf8).write(to: images)
        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 74, "\(pulled.stderr)")
        #expect(pulled.stderr.hasPrefix("hp-sync: error: "))
    }

    @Test func aBusyServerExits75AndRetriesRideItOut() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.primary.run(["add", "--name", "Desk"])
        let server = try pair.serve(extra: ["--max-connections", "1", "--idle-timeout", "20s"])
        // Another trusted peer says Hello and stalls: the one session slot is taken once the
        // server has answered its Hello.
        let attacker = try HostileInputTests.Attacker.listed(as: "holder", on: pair.primary, port: server.port)
        let holder = try attacker.connect()
        try holder.write(attacker.hello(.pull))
        let admitted = try HostileInputTests.Attacker.readFrame(holder)
        guard case .message(let reply)? = admitted, case .hello? = reply.body else {
            Issue.record("the holder was not admitted: \(String(describing: admitted))")
            return
        }
        let busy = try pair.backup.run(["pull", "primary"])
        #expect(busy.status == 75, "\(busy.stderr)")
        #expect(busy.stderr.contains("ERROR_BUSY"))
        // The slot frees up 1 s into the retries (waits of 0.4 s, 0.8 s, 1.6 s).
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { holder.close() }
        let retried = try pair.backup.run(["pull", "primary", "--quiet", "--retries", "4", "--retry-delay", "400ms"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.text.isEmpty && retried.stderr.isEmpty)
        #expect(try pair.backup.run(["list"]).text.contains("Desk"))
    }

    @Test func aPeerThatBreaksTheProtocolExits76AndIsNotRetried() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        // A frame of an unknown type (0xEE), after a valid TLS handshake with the pinned node.
        let rogue = try RogueServer(reply: [0xEE, 0, 0, 0, 0])
        defer { rogue.stop() }
        try runner.run(["peer", "add", "rogue", rogue.identity.nodeID.description, "--address", rogue.address])
        let started = Date()
        let result = try runner.run(["pull", "rogue", "--retries", "5", "--retry-delay", "2s"])
        #expect(result.status == 76, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("hp-sync: error: "))
        #expect(Date().timeIntervalSince(started) < 2, "protocol errors are never retried")
    }

    @Test func aDamagedDatabaseExits70() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        // The database file damaged and no WAL beside it (a command leaves its WAL, whose pages
        // would otherwise stand in for the damaged ones).
        try Data(repeating: 0x5A, count: 8192).write(to: runner.store.appendingPathComponent("store.sqlite"))
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(at: runner.store.appendingPathComponent("store.sqlite" + suffix))
        }
        let result = try runner.run(["pull", "primary"])
        #expect(result.status == 70, "\(result.stderr)")
        #expect(result.stderr.contains("hp-sync verify"))
    }

    /// Regression (session 12): a pull reads its identity on a thread of its own while the store
    /// opens. When the open failed (the lock held, a damaged database), the process exited with
    /// that read still in OpenSSL, whose exit handler then crashed it: SIGSEGV in 4 of 60 runs
    /// of the release build. Each run must end with the lock's exit status.
    @Test func aPullThatCannotTakeTheLockExits79EveryTime() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let fd = open(runner.store.appendingPathComponent("sync.lock").path, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        var statuses: [Int32: Int] = [:]
        for _ in 0..<60 { statuses[try runner.run(["pull", "primary"]).status, default: 0] += 1 }
        #expect(statuses == [79: 60], "exit statuses and how often")
    }

    @Test func pulledDeletionsGoToTheTrashAndRestoreSyncsBack() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(3)
        try pair.serve(allow: "read-write")
        let (primary, backup) = (pair.primary, pair.backup)
        let photo = try primary.file("photo.jpg", Images.jpeg + Array(repeating: 9, count: 3000))
        try primary.run(["image", "set", keys[0], photo.path])
        #expect(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        try primary.run(["rm", keys[0]])
        try primary.run(["edit", keys[1], "--name", "Renamed"])
        #expect(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        let listed = try backup.run(["trash", "list"])
        #expect(listed.status == 0)
        #expect(listed.text.contains("\(keys[0])  deleted"))
        #expect(listed.text.contains("\(keys[1])  overwritten"))
        #expect(listed.text.contains("3018 bytes"))

        let restored = try backup.run(["trash", "restore", keys[0]])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try backup.run(["show", keys[0]]).text.contains("Item 0"))
        #expect(try backup.run(["image", "get", keys[0]]).stdout.count == 3018)
        #expect(try backup.run(["verify"]).status == 0)
        // The restore is a new local edit: it syncs back to primary.
        #expect(try backup.run(["push", "primary", "--quiet"]).status == 0)
        #expect(try primary.run(["show", keys[0]]).text.contains("Item 0"))

        #expect(try backup.run(["trash", "restore", "0000AAAA-0000-4000-8000-000000000000"]).status == 66)
        // Emptying the trash takes saying so; a dry run counts and keeps.
        #expect(try backup.run(["trash", "purge"]).status == 64)
        #expect(try backup.run(["trash", "purge", "--all", "-n"]).text.contains("would purge 2 trash entries"))
        #expect(try backup.run(["trash", "purge", "--all"]).text == "purged 2 trash entries\n")
        #expect(try backup.run(["trash", "list"]).text.isEmpty)
        // --keep-deleted 0 keeps nothing.
        try primary.run(["rm", keys[2]])
        #expect(try backup.run(["pull", "primary", "--keep-deleted", "0"]).status == 0)
        #expect(try backup.run(["trash", "list"]).text.isEmpty)
    }
}
