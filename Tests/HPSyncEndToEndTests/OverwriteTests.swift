import Foundation
import HPSyncTesting
import Testing

@Suite("outputs that must not clobber a file or a terminal, run as a binary")
struct OverwriteTests {
    static func storeWithImage(_ runner: BinaryRunner) throws -> String {
        try runner.run(["init"])
        let image = try runner.file("cam.jpg", Images.jpeg)
        return try runner.run(["add", "--name", "Camera", "--image", image.path]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func imageBytesAreNotWrittenOntoATerminal() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let key = try Self.storeWithImage(runner)
        // Python's pty module gives the binary a terminal as stdout (stderr stays a pipe).
        let script = """
            import pty, subprocess, sys
            primary, terminal = pty.openpty()
            result = subprocess.run(sys.argv[1:], stdout=terminal, stderr=subprocess.PIPE)
            sys.stderr.buffer.write(result.stderr)
            sys.exit(result.returncode)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script, runner.binary.path, "image", "get", key, "--store", runner.store.path,
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
        #expect(stderr.contains("use -o FILE or redirect"), "\(stderr)")
        // Redirected, the bytes come out as they are.
        #expect(try runner.run(["image", "get", key]).stdout == Data(Images.jpeg))
    }

    @Test func existingOutputFilesAreKeptWithoutForce() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let key = try Self.storeWithImage(runner)
        let precious = Array("precious".utf8)
        for args in [["export", "-o"], ["export", "--format", "csv", "-o"], ["image", "get", key, "-o"]] {
            let target = try runner.file("out-\(args.count)-\(args.last!)", precious)
            let refused = try runner.run(args + [target.path])
            #expect(refused.status == 73, "\(args): \(refused.stderr)")
            #expect(refused.stderr.contains("exists; give --force to overwrite it"))
            #expect(try Data(contentsOf: target) == Data(precious))
            let forced = try runner.run(args + [target.path, "--force"])
            #expect(forced.status == 0, "\(args): \(forced.stderr)")
            #expect(try Data(contentsOf: target) != Data(precious))
        }
        let folder = runner.root.appendingPathComponent("Documents")
        #expect(try runner.run(["export-homepwner", folder.path]).status == 0)
        let again = try runner.run(["export-homepwner", folder.path])
        #expect(again.status == 73)
        #expect(again.stderr.contains("items.archive exists"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("items.archive"))
        // An image file as the export would write it is no loss; one with other bytes is.
        #expect(try runner.run(["export-homepwner", folder.path]).status == 0)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("items.archive"))
        try Data("other photo".utf8).write(to: folder.appendingPathComponent(key))
        let image = try runner.run(["export-homepwner", folder.path])
        #expect(image.status == 73)
        #expect(image.stderr.contains("\(key) exists"))
        #expect(try runner.run(["export-homepwner", folder.path, "--force"]).status == 0)
    }
}
