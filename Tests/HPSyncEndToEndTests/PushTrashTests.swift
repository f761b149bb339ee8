import Foundation
import HPSyncTesting
import Testing

/// Issue 12 §3: every version that lost is either nowhere or in a trash, never silently gone
/// from the node that made it; a server receiving a push keeps what it replaces as a pull does.
@Suite(.serialized) struct PushTrashTests {
    /// The server edits one item and the client deletes another's server-side edit; the
    /// client's later edits win and are pushed.
    static func pushOverServerEdits(_ pair: Pair, keys: [String]) throws {
        let (primary, backup) = (pair.primary, pair.backup)
        try primary.run(["edit", keys[0], "--value", "222"])
        try primary.run(["edit", keys[1], "--name", "Server side"])
        // Later stamps win by the merge rule: the client's edits are made a second later.
        try backup.later(["edit", keys[0], "--value", "111"], seconds: 1)
        try backup.later(["rm", keys[1]], seconds: 1)
        let pushed = try backup.run(["push", "primary", "--quiet"])
        try #require(pushed.status == 0, "\(pushed.stderr)")
        #expect(try primary.run(["show", keys[0]]).text.contains("111"))
    }

    @Test func aPushKeepsWhatItOverwritesOrDeletesInTheServersTrash() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(2)
        try pair.serve(allow: "read-write")
        let (primary, backup) = (pair.primary, pair.backup)
        let photo = try primary.file("photo.jpg", Images.jpeg + Array(repeating: 7, count: 4000))
        try primary.run(["image", "set", keys[0], photo.path])
        try #require(try backup.run(["pull", "primary", "--quiet"]).status == 0)
        try backup.run(["image", "rm", keys[0]])
        try Self.pushOverServerEdits(pair, keys: keys)

        let listed = try primary.run(["trash", "list"])
        #expect(listed.status == 0)
        #expect(listed.text.contains("\(keys[0])  overwritten"), "\(listed.text)")
        #expect(listed.text.contains("\(keys[1])  deleted"), "\(listed.text)")
        #expect(listed.text.contains("4018 bytes"), "\(listed.text)")
        // The server's own version, with its image, comes back as a new edit.
        #expect(try primary.run(["trash", "restore", keys[0]]).status == 0)
        #expect(try primary.run(["show", keys[0]]).text.contains("222"))
        #expect(try primary.run(["image", "get", keys[0]]).stdout.count == 4018)
        #expect(try primary.run(["trash", "restore", keys[1]]).status == 0)
        #expect(try primary.run(["show", keys[1]]).text.contains("Server side"))
        #expect(try primary.run(["verify"]).status == 0)
    }

    @Test func serveKeepDeletedZeroKeepsNothing() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(2)
        let server = try pair.serve(allow: "read-write")
        try #require(try pair.backup.run(["pull", "primary", "--quiet"]).status == 0)
        server.stop()
        try pair.serveAgain(extra: ["--keep-deleted", "0"])
        try Self.pushOverServerEdits(pair, keys: keys)
        #expect(try pair.primary.run(["trash", "list"]).text.isEmpty)
    }
}
