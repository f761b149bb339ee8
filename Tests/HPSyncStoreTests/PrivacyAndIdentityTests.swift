import Foundation
import HPSyncCrypto
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
