import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// A trusted node's pack index of each blind peer: rows per pack, kept apart per peer, replaced
/// when a pack is known again, forgotten when the head stops naming it, and kept across a reopen.
@Suite struct BlindPackStoreTests {
    static func pack(_ byte: UInt8, applied: Bool = false) -> BlindPackRecord {
        BlindPackRecord(
            id: BlindID(bytes: [UInt8](repeating: byte, count: 32))!, plainSize: 1000 + Int64(byte), applied: applied,
            contents: [1, byte, 2])
    }

    @Test func packsAreRememberedPerPeerReplacedAndForgotten() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let offsite = NodeID(bytes: [UInt8](repeating: 7, count: 32))!
        let other = NodeID(bytes: [UInt8](repeating: 8, count: 32))!
        try store.rememberBlindPacks([Self.pack(3), Self.pack(1), Self.pack(2)], peer: offsite)
        try store.rememberBlindPacks([Self.pack(9)], peer: other)
        #expect(try store.blindPacks(peer: offsite) == [Self.pack(1), Self.pack(2), Self.pack(3)])
        try store.rememberBlindPacks([Self.pack(2, applied: true)], peer: offsite)
        #expect(try store.blindPacks(peer: offsite).map(\.applied) == [false, true, false])
        #expect(try store.forgetBlindPacks(peer: offsite, keeping: [Self.pack(2).id]) == 2)
        #expect(try store.blindPacks(peer: offsite) == [Self.pack(2, applied: true)])
        #expect(try store.blindPacks(peer: other) == [Self.pack(9)], "another peer's packs stay")
        let reopened = try Fixtures.reopen(store)
        #expect(try reopened.blindPacks(peer: offsite) == [Self.pack(2, applied: true)])
    }
}
