import Foundation
import Testing

@Suite("one duration syntax in every option, run as a binary")
struct DurationTests {
    @Test func bareNumbersAreRefusedWithAHintAndZeroIsZero() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        try runner.run(["init"])
        for arguments in [
            ["status", "--check", "90"], ["gc", "--older-than", "30"], ["pull", "x", "--keep-deleted", "7"],
        ] {
            let result = try runner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("has no unit; write \(arguments[arguments.count - 1])s"), "\(result.stderr)")
        }
        #expect(try runner.run(["status", "--check", "1h30m"]).status == 0)
        let key = try runner.run(["add", "--name", "gone"]).text.trimmingCharacters(in: .newlines)
        try runner.run(["rm", key])
        // 0 is a zero age: every tombstone is older than that (no peers hold it back here).
        let gc = try runner.run(["gc", "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        #expect(gc.text.hasPrefix("dropped 1 tombstone"))
        #expect(try runner.run(["trash", "purge", "--older-than", "0"]).text == "purged 0 trash entries\n")
        let invite = try runner.run(["invite", "--expires", "0", "--address", "127.0.0.1:1"])
        #expect(invite.status == 64)
        #expect(invite.stderr.contains("no time at all"))
    }
}
