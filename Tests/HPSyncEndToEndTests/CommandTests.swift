import Foundation
import HPSyncTesting
import Testing

@Suite("hp-sync commands, run as a binary")
struct CommandTests {
    static let errorPrefix = "hp-sync: error: "

    @Test func initRefusesAnExistingStore() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let first = try runner.run(["init"])
        #expect(first.status == 0)
        #expect(first.text.contains("node ID:"))
        let second = try runner.run(["init"])
        #expect(second.status == 73)
        #expect(second.stderr.hasPrefix(Self.errorPrefix + "a store already exists"))
        #expect(second.text.isEmpty)
    }

    @Test func missingStoreIsReported() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let result = try runner.run(["list"])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix(Self.errorPrefix + "no hp-sync store"))
    }

    @Test func addListShowEditRemove() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let added = try runner.run([
            "add", "--name", "Camera", "--serial", "SN-1", "--value", "350", "--image", image.path, "--created",
            "2024-05-01",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let key = added.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.count == 36)
        let list = try runner.run(["list"])
        #expect(list.text.contains("Camera") && list.text.contains("SN-1") && list.text.contains("2024-05-01"))
        #expect(list.text.contains("yes (\(Images.jpeg.count) B)"))
        let json = try runner.run(["list", "--json"])
        let parsed = try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]]
        #expect(parsed?.first?["key"] as? String == key)

        let show = try runner.run(["show", String(key.prefix(6)).lowercased()])
        #expect(show.status == 0)
        #expect(show.text.contains("name:     Camera"))
        let edit = try runner.run(["edit", key, "--name", "Old camera", "--clear-serial", "--value", "10"])
        #expect(edit.status == 0)
        #expect(edit.text.contains("Old camera") && edit.text.contains("serial:   -"))
        let badEdit = try runner.run(["edit", key, "--serial", "x", "--clear-serial"])
        #expect(badEdit.status == 64)

        let removed = try runner.run(["rm", key])
        #expect(removed.status == 0)
        #expect(removed.text.contains("deleted 1"))
        #expect(try runner.run(["list"]).text.contains(key) == false)
        #expect(try runner.run(["list", "--deleted"]).text.contains(key))
        #expect(try runner.run(["status"]).text.contains("tombstones: 1"))
    }

    @Test func rmOfSeveralKeysIsAllOrNothing() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let a = try runner.run(["add", "--name", "a"]).text.trimmingCharacters(in: .newlines)
        let result = try runner.run(["rm", a, "00000000-0000-4000-8000-000000000000"])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix(Self.errorPrefix + "no item with key"))
        #expect(try runner.run(["list"]).text.contains(a))
    }

    @Test func badKeysAndPrefixes() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for args in [["show", "../../etc/passwd"], ["rm", "../../etc/passwd"], ["image", "get", "../../etc/passwd"]] {
            let result = try runner.run(args)
            #expect(result.status == 65)
            #expect(result.stderr.hasPrefix(Self.errorPrefix + "'../../etc/passwd' is not an item key"))
        }
        let unknown = try runner.run(["show", "ABCDEF"])
        #expect(unknown.status == 65)
        #expect(unknown.stderr.contains("no item with key"))
        // Two keys sharing a prefix: import them with fixed keys.
        let export = """
            {"format": "hp-sync-export", "version": 1, "items": [
            {"key": "ABCD0000-0000-4000-8000-000000000001", "name": "one", "valueInDollars": 1, "dateCreated": "2024-01-01T00:00:00.000Z"},
            {"key": "ABCD0000-0000-4000-8000-000000000002", "name": "two", "valueInDollars": 2, "dateCreated": "2024-01-01"}]}
            """
        let file = try runner.file("two.json", Array(export.utf8))
        let imported = try runner.run(["import", file.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.contains("inserted 2"))
        let ambiguous = try runner.run(["show", "abcd"])
        #expect(ambiguous.status == 65)
        #expect(ambiguous.stderr.contains("matches several items"))
        #expect(ambiguous.stderr.contains("ABCD0000-0000-4000-8000-000000000001"))
        #expect(try runner.run(["show", "abc"]).stderr.contains("too short"))
    }

    @Test func imageCommands() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let key = try runner.run(["add", "--name", "x"]).text.trimmingCharacters(in: .newlines)
        let text = try runner.file("notes.txt", Array("not an image".utf8))
        let rejected = try runner.run(["image", "set", key, text.path])
        #expect(rejected.status == 65)
        #expect(rejected.stderr.contains("is not a JPEG, PNG, HEIC or GIF image"))
        let missing = try runner.run(["image", "set", key, runner.root.appendingPathComponent("nope.png").path])
        #expect(missing.status == 66)
        let png = try runner.file("x.png", Images.png)
        #expect(try runner.run(["image", "set", key, png.path]).status == 0)
        let raw = try runner.run(["image", "get", key])
        #expect(Array(raw.stdout) == Images.png)
        let out = runner.root.appendingPathComponent("out.png")
        #expect(try runner.run(["image", "get", key, "-o", out.path]).status == 0)
        #expect(Array(try Data(contentsOf: out)) == Images.png)
        #expect(try runner.run(["image", "rm", key]).status == 0)
        let none = try runner.run(["image", "get", key])
        #expect(none.status == 66)
        #expect(none.stderr.hasPrefix(Self.errorPrefix))
    }

    /// `Output.save`: an output file that cannot be written is exit 73 naming the path, and
    /// nothing goes to stdout instead.
    @Test func anUnwritableOutputFileExits73() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "x", "--image", image.path]).text.trimmingCharacters(in: .newlines)
        let inMissingFolder = runner.root.appendingPathComponent("no-such-folder/export.json").path
        let export = try runner.run(["export", "-o", inMissingFolder])
        #expect(export.status == 73, "\(export.stderr)")
        #expect(export.stderr.hasPrefix(Self.errorPrefix + "cannot write \(inMissingFolder)"))
        #expect(export.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: inMissingFolder))
        // A folder where the file should go: the atomic rename cannot replace it.
        let folder = runner.root.appendingPathComponent("a-folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let get = try runner.run(["image", "get", key, "-o", folder.path])
        #expect(get.status == 73, "\(get.stderr)")
        #expect(get.stderr.hasPrefix(Self.errorPrefix + "cannot write \(folder.path)"))
        #expect(get.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        // Regression (issue 35 §4): `export -o DIR` said "NSCocoaErrorDomain error 512"; plain
        // words now, --force or not, and the folder is left alone.
        for force in [[], ["--force"]] {
            let intoFolder = try runner.run(["export", "-o", folder.path] + force)
            #expect(intoFolder.status == 73, "\(intoFolder.stderr)")
            #expect(
                intoFolder.stderr == Self.errorPrefix + "cannot write \(folder.path): it is a folder; give the path of "
                    + "a file, such as \(folder.path)/inventory.json\n", "\(intoFolder.stderr)")
            #expect(intoFolder.stdout.isEmpty)
        }
        #expect(!export.stderr.contains("NSCocoaErrorDomain"), "\(export.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Regression (issue 35 §4): a --store path that is a file said "create one with `hp-sync
    /// init`", and that init then failed with 73. It says what the path is, and exits 66.
    @Test func aStorePathThatIsAFileExits66Plainly() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let file = try runner.file("not-a-store", Array("hello".utf8))
        for command in [["list"], ["status"], ["pull", "primary"]] {
            let result = try runner.run(["--store", file.path] + command, withStore: false)
            #expect(result.status == 66, "\(command): \(result.stderr)")
            #expect(
                result.stderr.hasPrefix(Self.errorPrefix + "\(file.path) is a file, not an hp-sync store"),
                "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("init --store \(file.path)"), "\(result.stderr)")
        }
        let initialized = try runner.run(["--store", file.path, "init"], withStore: false)
        #expect(initialized.status == 73, "\(initialized.stderr)")
        #expect(initialized.stderr.contains("it is a file, not a directory"), "\(initialized.stderr)")
    }

    @Test func verifyDetectsTampering() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "x", "--image", image.path]).text.trimmingCharacters(in: .newlines)
        #expect(try runner.run(["verify"]).status == 0)
        try Data(Images.jpeg + [1]).write(to: runner.store.appendingPathComponent("images/\(key)"))
        let tampered = try runner.run(["verify"])
        #expect(tampered.status == 1)
        #expect(tampered.text.contains("does not match its digest"))
        #expect(tampered.stderr.hasPrefix(Self.errorPrefix + "verify found 1 problem"))
        #expect(try runner.run(["verify", "--repair"]).status == 1)
    }

    @Test func exportImportRoundTrip() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        try runner.run(["add", "--name", "Camera, \"big\"", "--image", image.path])
        try runner.run(["add", "--name", "Lamp", "--value", "20"])
        let exportFile = runner.root.appendingPathComponent("export.json")
        let imagesDir = runner.root.appendingPathComponent("images-out")
        #expect(try runner.run(["export", "-o", exportFile.path, "--images", imagesDir.path]).status == 0)
        let csv = try runner.run(["export", "--format", "csv"])
        #expect(csv.text.hasPrefix("key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize"))
        #expect(csv.text.contains("\"Camera, \"\"big\"\"\""))

        let other = try BinaryRunner.initialized()
        defer { other.cleanUp() }
        let imported = try other.run(["import", exportFile.path, "--images", imagesDir.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.hasPrefix("inserted 2, updated 0, deleted 0, images 1"))
        let again = try other.run(["import", exportFile.path])
        #expect(again.text.hasPrefix("inserted 0, updated 0, deleted 0, images 0"))
        #expect(try other.run(["list"]).text == runner.run(["list"]).text)
        #expect(try other.run(["verify"]).status == 0)
        let bad = try runner.file("bad.json", Array("{not json".utf8))
        let rejected = try other.run(["import", bad.path])
        #expect(rejected.status == 65)
        #expect(try other.run(["import", runner.root.appendingPathComponent("missing.json").path]).status == 66)
    }

    @Test func peers() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let nodeID = try #require(
            try runner.run(["init"]).text.split(separator: "\n").first { $0.hasPrefix("node ID:") }?
                .split(separator: " ").last.map(String.init))
        let added = try runner.run([
            "peer", "add", "backup", nodeID, "--address", "backup.local:7878", "--allow", "read-write",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let list = try runner.run(["peer", "list"])
        #expect(list.text.contains("backup") && list.text.contains("read-write") && list.text.contains(nodeID))
        #expect(try runner.run(["peer", "add", "other", nodeID]).status == 65)
        #expect(try runner.run(["peer", "add", "bad/name", nodeID]).status == 64)
        #expect(try runner.run(["peer", "add", "x", "NOT-A-NODE-ID"]).status == 64)
        #expect(try runner.run(["peer", "add", "x", nodeID, "--allow", "admin"]).status == 64)
        #expect(try runner.run(["peer", "rm", "backup"]).status == 0)
        let again = try runner.run(["peer", "rm", "backup"])
        #expect(again.status == 64)
        #expect(again.stderr.hasPrefix(Self.errorPrefix + "no peer named backup"))
    }

    /// Durations and permissions are parsed once, as typed arguments: a bad value is a usage
    /// error naming it, a good one reaches `run()`, and the help shows the defaults.
    @Test func badDurationsAndPermissionsAreUsageErrors() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let nodeID = try runner.nodeID()
        let token = "hpsync://127.0.0.1:1/\(nodeID)#" + String(repeating: "A", count: 43)
        let bad: [(arguments: [String], value: String)] = [
            (["gc", "--older-than", "soon"], "soon"), (["gc", "--older-than", "90"], "90"),
            (["trash", "purge", "--older-than", "1x"], "1x"), (["status", "--check", "1y"], "1y"),
            (["pull", "x", "--keep-deleted", "forever"], "forever"), (["sync", "x", "--keep-deleted", "1.5d"], "1.5d"),
            (["invite", "--expires", "0"], "0"), (["invite", "--expires", "31d"], "31d"),
            (["invite", "--allow", "admin"], "admin"), (["peer", "join", token, "--allow", "write"], "write"),
            (["peer", "add", "x", nodeID, "--allow", "all"], "all"),
        ]
        for (arguments, value) in bad {
            let result = try runner.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(Self.errorPrefix) && result.stderr.contains("'\(value)'"), "\(arguments)")
        }
        for arguments in [
            ["gc", "--older-than", "1s"], ["gc", "--older-than", "0"], ["trash", "purge", "--older-than", "12h"],
            ["status", "--check", "90m"],
            ["invite", "--expires", "30d", "--allow", "read-write", "--address", "127.0.0.1:1"],
        ] {
            let result = try runner.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(try runner.run(["invite", "list"]).text.contains("read-write"))
        #expect(try runner.run(["gc", "--help"]).text.contains("(default: 180d)"))
        #expect(try runner.run(["pull", "--help"]).text.contains("(default: 30d)"))
        #expect(try runner.run(["peer", "add", "--help"]).text.contains("read, read-write; default: read)"))
    }

    @Test func usageErrorsExit64() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let result = try runner.run(["frobnicate"], withStore: false)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix(Self.errorPrefix))
        #expect(try runner.run(["--help"], withStore: false).status == 0)
        #expect(try runner.run(["add", "--name", "x", "--created", "yesterday"]).status == 64)
    }
}

@Suite("Several hp-sync processes on one store")
struct ConcurrentProcessTests {
    @Test func parallelAddsAllLand() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let image = try runner.file("cam.jpg", Images.jpeg)
        let statuses = Locked<[Int32]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { index in
            let result = try? runner.run(["add", "--name", "item \(index)", "--image", image.path])
            statuses.withLock { $0.append(result?.status ?? -1) }
        }
        #expect(statuses.current == [0, 0, 0, 0, 0, 0])
        #expect(try runner.run(["status"]).text.contains("items:      6"))
        #expect(try runner.run(["verify"]).status == 0)
    }
}
