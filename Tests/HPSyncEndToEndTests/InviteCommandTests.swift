import Foundation
import Testing

/// Issue 5's invitations, end to end: `invite` on the serving host, `peer join` on the others.
@Suite(.serialized) struct InviteCommandTests {
    /// An initialized store with its node ID.
    struct Node {
        let runner: BinaryRunner
        let id: String

        init() throws {
            runner = try BinaryRunner()
            try #require(try runner.run(["init"]).status == 0)
            id = try runner.run(["id"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @discardableResult
        func run(_ arguments: [String]) throws -> BinaryRunner.Result { try runner.run(arguments) }
    }

    /// Runs `invite` on `server` advertising its loopback port.
    func invite(_ server: Node, _ serve: ServeProcess, _ extra: [String] = []) throws -> String {
        let result = try server.run(["invite", "--address", serve.address] + extra)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("hp-sync serve` must be running here"))
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func joinThenPullWorksAndAReadOnlyJoinerCannotPush() throws {
        let server = try Node()
        let joiner = try Node()
        defer { [server, joiner].forEach { $0.runner.cleanUp() } }
        let key = try server.run(["add", "--name", "Couch"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let serve = try ServeProcess(server.runner)
        let token = try invite(server, serve)
        #expect(token.hasPrefix("hpsync://\(serve.address)/\(server.id)#"))

        let joined = try joiner.run(["peer", "join", token, "--name", "home"])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.text.contains("this node may pull from it"))
        #expect(try joiner.run(["peer", "list"]).text.contains("home"))
        let serverPeers = try server.run(["peer", "list"]).text
        #expect(serverPeers.contains(joiner.id) && serverPeers.contains("read "))

        let pulled = try joiner.run(["pull", "home"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try joiner.run(["show", key]).text.contains("Couch"))
        try joiner.run(["add", "--name", "Mine"])
        let pushed = try joiner.run(["push", "home"])
        #expect(pushed.status == 77)
        #expect(pushed.stderr.contains("ERROR_READ_ONLY"))
        let (status, log) = serve.stop()
        #expect(status == 0)
        #expect(log.contains("peer joined with an invitation"))
    }

    @Test func anInvitationUsedTwiceOrExpiredIsRefusedWith77() throws {
        let server = try Node()
        let first = try Node()
        let second = try Node()
        defer { [server, first, second].forEach { $0.runner.cleanUp() } }
        let serve = try ServeProcess(server.runner)
        defer { _ = serve.stop() }
        let token = try invite(server, serve, ["--allow", "read-write"])
        #expect(try first.run(["peer", "join", token]).status == 0)
        let again = try second.run(["peer", "join", token])
        #expect(again.status == 77)
        #expect(again.stderr.contains("ERROR_INVITATION") && again.stderr.contains("used already"))
        #expect(!(try server.run(["peer", "list"]).text.contains(second.id)))
        #expect(try second.run(["peer", "list"]).text.contains(server.id) == false)

        let shortLived = try invite(server, serve, ["--expires", "1s"])
        Thread.sleep(forTimeInterval: 1.1)
        let late = try second.run(["peer", "join", shortLived])
        #expect(late.status == 77)
        #expect(late.stderr.contains("expired"))
        #expect(try server.run(["invite", "list"]).text.contains("expired"))
    }

    @Test func aWrongServerNeverSeesTheSecret() throws {
        let server = try Node()
        let impostor = try Node()
        let joiner = try Node()
        defer { [server, impostor, joiner].forEach { $0.runner.cleanUp() } }
        let real = try ServeProcess(server.runner)
        defer { _ = real.stop() }
        let fake = try ServeProcess(impostor.runner)
        let token = try invite(server, real)
        // The same invitation pointed at another server's address.
        let redirected = token.replacingOccurrences(of: real.address, with: fake.address)
        let refused = try joiner.run(["peer", "join", redirected])
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("the secret was not sent"))
        #expect(refused.stderr.contains(impostor.id))
        #expect(try joiner.run(["peer", "list"]).text.contains(server.id) == false)
        let (_, fakeLog) = fake.stop()
        #expect(!fakeLog.contains("JoinRequest") && !fakeLog.contains("invitation"))
        // Still unused: the real server accepts it.
        #expect(try joiner.run(["peer", "join", token]).status == 0)
    }

    @Test func malformedInvitationsAreUsageErrors() throws {
        let joiner = try Node()
        defer { joiner.runner.cleanUp() }
        let result = try joiner.run(["peer", "join", "hpsync://nas:7717/\(joiner.id)#tooshort"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("invalid invitation: the secret after # must be 43 base64url characters"))
        let own = try joiner.run(["invite", "--address", "127.0.0.1:1"]).text
        #expect(try joiner.run(["peer", "join", own]).status == 64)
        #expect(try joiner.run(["invite", "--expires", "31d"]).status == 64)
    }
}
