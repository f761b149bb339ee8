import Foundation
import HPSyncCrypto
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("store privacy and identity")
struct PrivacyAndIdentityTests {
    @Test func verifyWarnsWhenGroupOrOthersCanRead() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(try store.verify(repair: false).warnings == [])
        let database = store.directory.appendingPathComponent("store.sqlite").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
        let report = try store.verify(repair: false)
        #expect(report.exposedPaths == ["\(database) (mode 644)"])
        #expect(report.warnings.count == 1)
        #expect(report.isClean, "a readable store is a warning, not damage")
    }

    @Test func openAdoptsTheCertificatesNodeIDAndVerifyChecksIt() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let identity = try NodeIdentity.create(in: store.directory)
        #expect(store.nodeID != identity.nodeID)
        #expect(try store.verify(repair: false).identityProblems.count == 1)
        let reopened = try Fixtures.reopen(store)
        #expect(reopened.nodeID == identity.nodeID)
        #expect(try reopened.verify(repair: false).identityProblems == [])
    }
}

@Suite("store privacy leaves other files alone")
struct PrivacyScopeTests {
    @Test func onlyTheStoresOwnFilesAreTightened() throws {
        let dir = TempDirectory()
        let folder = dir.url.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let unrelated = folder.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: unrelated)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: unrelated.path)
        let store = try Fixtures.makeStore(dir)
        let mode = { (path: String) in
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        }
        #expect(try mode(store.directory.appendingPathComponent("store.sqlite").path) == 0o600)
        #expect(try mode(unrelated.path) == 0o644)
    }
}
