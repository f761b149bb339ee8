import Foundation
import HPSyncTesting
import Testing

@Suite("one duration syntax in every option, run as a binary")
struct DurationTests {
    @Test func bareNumbersAreRefusedWithAHintAndZeroIsZero() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
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

@Suite("the network timeouts take the same durations, run as a binary")
struct NetworkDurationTests {
    @Test func bareNumbersAreRefusedAndZeroIsNoTimeAtAll() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for arguments in [
            ["pull", "x", "--connect-timeout", "2"], ["push", "x", "--idle-timeout", "60"],
            ["serve", "--handshake-timeout", "10"],
            ["serve", "--idle-timeout", "60"], ["serve", "--grace", "30"],
            ["peer", "join", "hpsync://host:7717/x#y", "--connect-timeout", "5"],
        ] {
            let result = try runner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("has no unit; write \(arguments[arguments.count - 1])s"), "\(result.stderr)")
        }
        // The hidden --retry-delay (for tests) takes a duration too, with the same hint, though
        // its usage line names no value.
        let hidden = try runner.run(["sync", "x", "--retry-delay", "1"])
        #expect(hidden.status == 64)
        #expect(hidden.stderr.contains("has no unit; write 1s"), "\(hidden.stderr)")
        // 0 is a zero duration here too, never "no timeout": a timeout of no time at all is refused.
        for arguments in [
            ["pull", "x", "--connect-timeout", "0"], ["sync", "x", "--idle-timeout", "0"],
            ["serve", "--handshake-timeout", "0"], ["serve", "--idle-timeout", "0"],
        ] {
            let result = try runner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("'0' is no time at all"), "\(result.stderr)")
        }
    }

    @Test func aDurationIsTheTimeoutAndGraceZeroWaitsForNone() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let silent = try SilentListener()
        try runner.run(["peer", "add", "slow", NodeIDFixture.any, "--address", silent.address])
        // The peer never answers the handshake: the pull gives up after 1.5 s, not the default 10 s.
        let started = Date()
        let timedOut = try runner.run(["pull", "slow", "--connect-timeout", "1s500ms"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(timedOut.status == 69, "\(timedOut.stderr)")
        #expect(elapsed >= 1.4 && elapsed < 8, "\(elapsed)")

        // A connection still in its handshake (allowed a minute) does not hold up `--grace 0`.
        let server = try ServeProcess(runner, extra: ["--handshake-timeout", "1m", "--grace", "0"])
        let held = HeldConnection(port: server.port)
        defer { held.close() }
        #expect(held.isConnected)
        #expect(!held.closedByPeer(within: 0.5))
        let stopping = Date()
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(stopped.log.contains("some sessions did not finish within the grace period"), "\(stopped.log)")
    }
}
