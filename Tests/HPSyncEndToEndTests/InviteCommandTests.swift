import Foundation
import HPSyncStore
import HPSyncTesting
import Testing

/// Issue 5's invitations, end to end: `invite` on the serving host, `peer join` on the others.
@Suite(.serialized) struct InviteCommandTests {
    /// An initialized store with its node ID.
    struct Node {
        let runner: BinaryRunner
        let id: String

        init(_ runner: BinaryRunner? = nil) throws {
            self.runner = try runner ?? BinaryRunner()
            try #require(try self.runner.run(["init"]).status == 0)
            id = try self.runner.nodeID()
        }

        @discardableResult
        func run(_ arguments: [String]) throws -> BinaryRunner.Result { try runner.run(arguments) }
    }

    /// Runs `invite` on `server` advertising its loopback port; `secondsAgo`: as if that long ago.
    func invite(_ server: Node, _ serve: ServeProcess, _ extra: [String] = [], secondsAgo: Int = 0) throws -> String {
        let arguments = ["invite", "--address", serve.address] + extra
        let result =
            secondsAgo > 0 ? try server.runner.earlier(arguments, seconds: secondsAgo) : try server.run(arguments)
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

        // Made two seconds ago, for one second: expired now.
        let shortLived = try invite(server, serve, ["--expires", "1s"], secondsAgo: 2)
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

    /// The joiner checks its own peer names before it spends the secret, so a join that would
    /// fail here never uses the invitation up there.
    @Test func aJoinUnderATakenNameIsRefusedAndTheInvitationStaysUnused() throws {
        let server = try Node()
        let joiner = try Node()
        let someoneElse = try Node()
        defer { [server, joiner, someoneElse].forEach { $0.runner.cleanUp() } }
        let serve = try ServeProcess(server.runner)
        defer { _ = serve.stop() }
        let token = try invite(server, serve)
        #expect(try joiner.run(["peer", "add", "home", someoneElse.id]).status == 0)

        let taken = try joiner.run(["peer", "join", token, "--name", "home"])
        #expect(taken.status == 65, "\(taken.stderr)")
        #expect(taken.stderr.contains("a peer named home already exists here; choose another name with --name"))
        #expect(!(try server.run(["peer", "list"]).text.contains(joiner.id)))
        #expect(try server.run(["invite", "list"]).text.contains("pending"))
        #expect(!(try joiner.run(["peer", "list"]).text.contains(server.id)))

        let joined = try joiner.run(["peer", "join", token, "--name", "office"])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.text.contains("added peer office"))
    }

    @Test func aRevokedInvitationIsRefusedOnJoin() throws {
        let server = try Node()
        let joiner = try Node()
        defer { [server, joiner].forEach { $0.runner.cleanUp() } }
        let serve = try ServeProcess(server.runner)
        defer { _ = serve.stop() }
        let token = try invite(server, serve)
        let listed = try server.run(["invite", "list"]).text.split(separator: "\n")
        #expect(listed.count == 2, "a header and one invitation: \(listed)")
        let id = String(try #require(listed.last?.split(separator: " ").first))

        let revoked = try server.run(["invite", "revoke", id])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.text == "revoked invitation \(id)\n")
        #expect(!(try server.run(["invite", "list"]).text.contains(id)))
        let join = try joiner.run(["peer", "join", token])
        #expect(join.status == 77)
        #expect(join.stderr.contains("the server has no such invitation (mistyped, revoked"))
        #expect(!(try server.run(["peer", "list"]).text.contains(joiner.id)))
        #expect(!(try joiner.run(["peer", "list"]).text.contains(server.id)))

        let again = try server.run(["invite", "revoke", id])
        #expect(again.status == 64)
        #expect(again.stderr.contains("no invitation with ID \(id)"))
    }

    /// Two invitations whose IDs share their first 4 hex digits: a 4-digit ID names neither, so
    /// nothing is revoked. They are made through the store (a few hundred random ones until two
    /// collide), then revoked through the binary.
    @Test func anAmbiguousInvitationIDRevokesNothing() throws {
        let server = try Node()
        defer { server.runner.cleanUp() }
        var firstWithPrefix: [Substring: String] = [:]
        var pair: (String, String)?
        do {
            let store = try Store.open(at: server.runner.store, logger: quietLogger)
            while pair == nil {
                let made = try store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: 3_600_000)
                let id = made.invitation.shortID
                if let earlier = firstWithPrefix[id.prefix(4)] { pair = (earlier, id) }
                firstWithPrefix[id.prefix(4)] = id
            }
        }
        let (first, second) = try #require(pair)
        let prefix = String(first.prefix(4))

        let ambiguous = try server.run(["invite", "revoke", prefix])
        #expect(ambiguous.status == 65)
        #expect(ambiguous.stderr.contains("invitation ID \(prefix) matches several invitations"))
        let listed = try server.run(["invite", "list"]).text
        #expect(listed.contains(first) && listed.contains(second))
        #expect(try server.run(["invite", "revoke", second]).status == 0)
        #expect(try server.run(["invite", "revoke", prefix]).text == "revoked invitation \(first)\n")
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
