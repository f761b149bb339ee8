import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Records a sink does not apply (refused by its clock guard, withheld for a missing image) are
/// never lost: no checkpoint passes them, so a later session offers them again (issue 12 §1).
@Suite struct NoChangeLostTests {
    static let start: UInt64 = 1_750_000_000_000
    static let day: UInt64 = 86_400_000

    /// Pushes with the client offering at most `maxVersion` (an older server when below 3).
    @discardableResult
    static func push(_ client: TestNode, to server: TestNode, maxVersion: UInt32 = ProtocolLimits.maxVersion)
        throws -> SyncReport
    {
        try Sync.session(client, server, .pipe) { channel in
            var hooks = EngineTestHooks()
            hooks.maxVersion = maxVersion
            return try SyncClient(store: client.store, logger: quietLogger, testHooks: hooks).push(
                over: channel, serverNodeID: server.nodeID, peerName: server.name)
        } wrap: {
            $0
        }
    }

    @Test(arguments: [UInt32(1), 2, 3])
    func aPushTheServerRefusesIsOfferedAgainAndLandsOnceTheClocksAgree(maxVersion: UInt32) throws {
        let clockF = TestClock(Self.start + Self.day)  // f's clock runs a day ahead
        let f = try TestNode("f", clock: clockF)
        let a = try TestNode("a", clock: TestClock(Self.start))
        try a.allow(f)
        let before = try f.add("Before")
        let future = try f.add("From the future")
        let after = try f.add("After")
        clockF.set(Self.start)
        // Stamped before the future item was made: the server takes it, later ones are refused.
        _ = try f.store.edit(before.key, ItemEdit(name: "Before, edited"))
        let refused = try Self.push(f, to: a, maxVersion: maxVersion)
        #expect(try a.store.item(future.key) == nil)
        // Everything f stamped while ahead, and the edit stamped after its high-water mark.
        #expect(refused.refused.count == 3)
        if maxVersion >= 3 {
            #expect(Set(refused.refused.kept.map(\.key)).contains(future.key.rawValue))
            #expect(refused.refused.kept.allSatisfy { $0.reason.contains("in the future") })
        }
        // A day later both clocks agree: the next push offers the refused records again.
        clockF.set(Self.start + Self.day + 60_000)
        a.clock.set(Self.start + Self.day + 60_000)
        let retried = try Self.push(f, to: a, maxVersion: maxVersion)
        #expect(retried.refused.isEmpty)
        #expect(try a.store.item(future.key)?.name == "From the future")
        #expect(try a.store.item(after.key)?.name == "After")
        #expect(try a.snapshot() == f.snapshot())
    }

    @Test(arguments: [UInt32(2), 3])
    func aRecordWithheldForTheClientsMissingImageIsPushedOnceTheFileIsBack(maxVersion: UInt32) throws {
        let f = try TestNode("f")
        let a = try TestNode("a")
        try a.allow(f)
        let bytes = jpeg(7)
        let item = try f.add("Camera", image: bytes)
        let file = f.store.imageFileURL(for: item.key)
        try FileManager.default.removeItem(at: file)
        let first = try Self.push(f, to: a, maxVersion: maxVersion)
        #expect(first.withheld.kept.map(\.key) == [item.key.rawValue])
        #expect(try a.store.item(item.key) == nil)
        // The file comes back (a repair): the next push offers the record again.
        try Data(bytes).write(to: file)
        let second = try Self.push(f, to: a, maxVersion: maxVersion)
        #expect(second.withheld.isEmpty)
        #expect(try a.store.item(item.key)?.image == item.image)
        #expect(a.imageBytes(item.key) == bytes)
    }

    @Test func aPullWhoseSourceLacksAnImageReportsTheRecordAsWithheld() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let item = try a.add("Camera", image: jpeg(8))
        try FileManager.default.removeItem(at: a.store.imageFileURL(for: item.key))
        let report = try Sync.pull(b, from: a)
        #expect(report.withheld.kept.map(\.key) == [item.key.rawValue])
        #expect(report.withheld.kept.first?.reason.contains("missing on the source") == true)
        #expect(try b.store.item(item.key) == nil)
    }

    /// The sink's PageDone says where the first record it did not apply is and what it refused.
    @Test func aVersion3SinkNamesTheFirstHeldEntryAndItsRefusals() throws {
        var machine = SourceStateMachine(version: 3)
        let keys = (0..<3).map { _ in ItemKey.random() }
        let entries = keys.enumerated().map {
            ManifestEntry(
                key: $0.element,
                version: Version(stamp: VersionStamp(milliseconds: 1), origin: NodeID(certificateDER: [1])),
                deleted: false, seq: Int64($0.offset + 1))
        }
        machine.sent(ManifestPage(entries: entries, throughSeq: 3, isFinal: true))
        #expect(throws: ProtocolError.self) {
            var copy = machine
            _ = try copy.received(
                .pageDone(
                    throughSeq: 3, counts: .init(), durableSeq: 3, firstHeldSeq: 2,
                    refusals: [PageRefusal(key: .random(), reason: "not on the page")]))
        }
        _ = try machine.received(
            .pageDone(
                throughSeq: 3, counts: .init(), durableSeq: 3, firstHeldSeq: 2,
                refusals: [PageRefusal(key: keys[1], reason: "clock")]))
        #expect(machine.firstHeldSeq == 2)
        var checkpoint = PushCheckpoint(version: 3)
        let acknowledgement = SourceSession.Acknowledgement(
            durableSeq: 3, counts: .init(), firstHeldSeq: machine.firstHeldSeq, refusals: machine.refusals)
        #expect(checkpoint.advance(acknowledgement) == 1, "the checkpoint stays below the first held entry")
    }
}
