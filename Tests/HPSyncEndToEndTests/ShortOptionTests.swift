import Foundation
import HPSyncTesting
import Testing

@Suite("-n, -v and dry runs of local commands, run as a binary")
struct ShortOptionTests {
    @Test func rmAndImportDryRunsWriteNothing() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let a = try runner.run(["add", "--name", "a"]).text.trimmingCharacters(in: .newlines)
        let b = try runner.run(["add", "--name", "b"]).text.trimmingCharacters(in: .newlines)
        let dry = try runner.run(["rm", "-n", a, String(b.prefix(6))])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.text.contains("delete \(a)\n") && dry.text.contains("delete \(b)\n"))
        #expect(dry.text.contains("dry run, nothing written: would have inserted 0, updated 0, deleted 2"))
        #expect(try runner.run(["list"]).text.contains("total: 2 items"))
        #expect(try runner.run(["rm", "--dry-run", "00000000-0000-4000-8000-000000000000"]).status == 65)

        let export = try runner.file("export.json", Array(try runner.run(["export"]).stdout))
        try runner.run(["rm", a])
        try runner.run(["edit", b, "--name", "b2"])
        // Against this store the export is older everywhere: nothing would change.
        let stale = try runner.run(["import", "-n", export.path])
        #expect(stale.text.contains("would have inserted 0, updated 0, deleted 0"), "\(stale.text)")
        // Into a new store: two inserts, and still nothing written.
        let other = runner.root.appendingPathComponent("other").path
        try runner.run(["init", "--store", other], withStore: false)
        let fresh = try runner.run(["import", "--dry-run", export.path, "--store", other], withStore: false)
        #expect(fresh.text.contains("insert \(a)\n") && fresh.text.contains("would have inserted 2, updated 0"))
        #expect(try runner.run(["list", "--store", other], withStore: false).text.contains("total: 0 items"))
        let csv = try runner.file("export.csv", Array(try runner.run(["export", "--format", "csv"]).stdout))
        let csvDry = try runner.run(["import", "-n", csv.path, "--store", other], withStore: false)
        #expect(csvDry.text.contains("would have inserted 1, updated 0"), "\(csvDry.text)")
    }

    @Test func dashNIsDryRunEverywhere() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for args in [["pull", "-n", "nosuchpeer"], ["push", "-n", "nosuchpeer"], ["sync", "-n", "-q", "nosuchpeer"]] {
            let result = try runner.run(args)
            #expect(!result.stderr.contains("Unknown option"), "\(args): \(result.stderr)")
            #expect(result.stderr.contains("nosuchpeer"), "\(args): \(result.stderr)")
        }
        #expect(try runner.run(["gc", "-n"]).text.hasPrefix("would drop 0 tombstones"))
        let documents = runner.root.appendingPathComponent("Documents")
        #expect(try runner.run(["import-homepwner", "-n", documents.path]).status == 66)
    }

    @Test func verifyQuietPrintsOnlyProblems() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "Camera", "--image", image.path]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let clean = try runner.run(["verify", "-q"])
        #expect(clean.status == 0 && clean.stdout.isEmpty && clean.stderr.isEmpty)
        try FileManager.default.removeItem(at: runner.store.appendingPathComponent("images/\(key)"))
        // What cron mails: the problem list, then the error line that refers to it.
        let broken = try runner.run(["verify", "--quiet"])
        #expect(broken.status == 1)
        #expect(broken.text.contains("problem: image file of \(key) is missing"))
    }

    @Test func trashPurgeNeedsToBeToldHowMuch() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let plain = try runner.run(["trash", "purge"])
        #expect(plain.status == 64)
        #expect(plain.stderr.contains("--older-than DURATION or --all"))
        #expect(try runner.run(["trash", "purge", "--all", "--older-than", "1d"]).status == 64)
        #expect(try runner.run(["trash", "purge", "-n", "--older-than", "1d"]).text.contains("would purge 0"))
    }

    @Test func verbosityFlagsRaiseTheLogLevel() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let quiet = try runner.run(["verify"])
        let verbose = try runner.run(["-v", "verify"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(quiet.stderr.isEmpty)
        #expect(verbose.stderr.contains("info hp-sync: clean=true"), "\(verbose.stderr)")
        #expect(try runner.run(["verify", "-vv"]).stderr.contains("verified store"))
        // --log-level decides when both are given.
        #expect(try runner.run(["verify", "-vv", "--log-level", "error"]).stderr.isEmpty)
    }
}
