import Foundation

/// Runs the built `hp-sync` binary with a temporary store.
public struct BinaryRunner: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
        public var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    public let binary: URL
    public let root: URL
    public var store: URL { root.appendingPathComponent("store") }

    public init() throws {
        binary = try Self.locateBinary()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    /// A runner whose store `hp-sync init` has made.
    public static func initialized() throws -> BinaryRunner {
        let runner = try BinaryRunner()
        try runner.succeed(["init"])
        return runner
    }

    public func cleanUp() { try? FileManager.default.removeItem(at: root) }

    /// `HP_SYNC_BINARY`, else `hp-sync` next to the test bundle, else `.build/debug/hp-sync`.
    public static func locateBinary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["HP_SYNC_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("hp-sync"))
            directory = directory.deletingLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/hp-sync"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw BinaryMissing(searched: candidates.map(\.path))
        }
        return found
    }

    /// Debian's faketime (package faketime), which runs a program with its wall clock moved.
    public static let fakeTime = "/usr/bin/faketime"
    public static var canFakeTime: Bool { FileManager.default.isExecutableFile(atPath: fakeTime) }

    struct BinaryMissing: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "hp-sync binary not found (run `swift build` first, or set HP_SYNC_BINARY); looked in \(searched)"
        }
    }

    /// Runs `hp-sync ARGS --store STORE` (the store option goes after the subcommand path);
    /// `clockOffset` (faketime's syntax, `+1d`, `-365d`) runs it with its clock moved.
    @discardableResult
    public func run(_ arguments: [String], withStore: Bool = true, clockOffset: String? = nil) throws -> Result {
        var command = [binary.path] + arguments + (withStore ? ["--store", store.path] : [])
        // Through Debian's wrapper, which sets up libfaketime's shared state as it expects.
        if let clockOffset { command = [Self.fakeTime, "-f", clockOffset] + command }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "HP_SYNC_HOME")
        let output = try RunningTool(command, environment: environment, input: nil).finish(timeout: .infinity)
        return Result(status: output.status, stdout: output.stdoutData, stderr: output.stderr)
    }

    /// Runs `arguments` and throws unless they exit 0: for the steps that set a test up.
    @discardableResult
    public func succeed(_ arguments: [String]) throws -> Result {
        let result = try run(arguments)
        guard result.status == 0 else { throw CommandFailed(arguments: arguments, result: result) }
        return result
    }

    /// A set-up step that did not exit 0.
    public struct CommandFailed: Error, CustomStringConvertible {
        public var arguments: [String]
        public var result: Result
        public var description: String {
            "hp-sync \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)"
        }
    }

    /// Runs `arguments` as if a few seconds from now (`seconds`), for checks against an age: with
    /// the clock moved by faketime where it is installed (`Scripts/lib.sh` installs it), else
    /// after really waiting.
    @discardableResult
    public func later(_ arguments: [String], seconds: Int = 3) throws -> Result {
        guard Self.canFakeTime else {
            Thread.sleep(forTimeInterval: Double(seconds))
            return try run(arguments)
        }
        return try run(arguments, clockOffset: "+\(seconds)s")
    }

    /// Runs `arguments` as if `seconds` ago, so that what runs next is that much older: with the
    /// clock moved back by faketime, else by really waiting afterwards.
    @discardableResult
    public func earlier(_ arguments: [String], seconds: Int) throws -> Result {
        guard Self.canFakeTime else {
            defer { Thread.sleep(forTimeInterval: Double(seconds)) }
            return try run(arguments)
        }
        return try run(arguments, clockOffset: "-\(seconds)s")
    }

    /// The node ID `hp-sync id` prints for this runner's store.
    public func nodeID() throws -> String {
        try run(["id"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Adds `count` items named `Item 0`, `Item 1`, … worth 0, 1, … dollars; returns their keys.
    public func addItems(_ count: Int) throws -> [String] {
        try (0..<count).map { index in
            try succeed(["add", "--name", "Item \(index)", "--value", "\(index)"]).text
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    public func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = root.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }
}
