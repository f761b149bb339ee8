import Foundation
import Testing

/// Issue 12 §3: every version that lost is either nowhere or in a trash, never silently gone
/// from the node that made it; a server receiving a push keeps what it replaces as a pull does.
@Suite(.serialized) struct PushTrashTests {
    typealias Served = CronCommandTests.Served

    /// The server edits one item and the client deletes another's server-side edit; the
    /// client's later edits win and are pushed.
    static func pushOverServerEdits(_ served: Served) throws {
        let (primary, backup) = (served.pair.primary, served.pair.backup)
        try primary.run(["edit", served.keys[0], "--value", "222"])
        try primary.run(["edit", served.keys[1], "--name", "Server side"])
        // Later stamps win by the merge rule.
        Thread.sleep(forTimeInterval: 0.01)
        try backup.run(["edit", served.keys[0], "--value", "111"])
        try backup.run(["rm", served.keys[1]])
        let pushed = try backup.run(["push", "primary", "--quiet"])
        try #require(pushed.status == 0, "\(pushed.stderr)")
        #expect(try primary.run(["show", served.keys[0]]).text.contains("111"))
    }

    @Test func aPushKeepsWhatItOverwritesOrDeletesInTheServersTrash() throws {
        let served = try Served(items: 2, backupPermission: "read-write")
        defer { served.cleanUp() }
        let (primary, backup) = (served.pair.primary, served.pair.backup)
        let photo = try primary.file("photo.jpg", Images.jpeg + Array(repeating: 7, count: 4000))
        try primary.run(["image", "set", served.keys[0], photo.path])
        try #require(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        try backup.run(["image", "rm", served.keys[0]])
        try Self.pushOverServerEdits(served)

        let listed = try primary.run(["trash", "list"])
        #expect(listed.status == 0)
        #expect(listed.text.contains("\(served.keys[0])  overwritten"), "\(listed.text)")
        #expect(listed.text.contains("\(served.keys[1])  deleted"), "\(listed.text)")
        #expect(listed.text.contains("4018 bytes"), "\(listed.text)")
        // The server's own version, with its image, comes back as a new edit.
        #expect(try primary.run(["trash", "restore", served.keys[0]]).status == 0)
        #expect(try primary.run(["show", served.keys[0]]).text.contains("222"))
        #expect(try primary.run(["image", "get", served.keys[0]]).stdout.count == 4018)
        #expect(try primary.run(["trash", "restore", served.keys[1]]).status == 0)
        #expect(try primary.run(["show", served.keys[1]]).text.contains("Server side"))
        #expect(try primary.run(["verify"]).status == 0)
    }

    @Test func serveKeepDeletedZeroKeepsNothing() throws {
        let served = try Served(items: 2, backupPermission: "read-write")
        defer { served.cleanUp() }
        try #require(try served.pair.backup.run(["pull", "primary", "--quiet"]).status == 0)
        _ = served.server.stop()
        let server = try ServeProcess(served.pair.primary, extra: ["--keep-deleted", "0"])
        defer { _ = server.stop() }
        try served.pair.backup.run(["peer", "set", "primary", "--address", server.address])
        try Self.pushOverServerEdits(served)
        #expect(try served.pair.primary.run(["trash", "list"]).text.isEmpty)
    }
}
