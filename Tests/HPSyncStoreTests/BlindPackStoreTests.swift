import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// A trusted node's pack index of each blind peer: rows per pack, kept apart per peer, replaced
/// when a pack is known again, forgotten when the head stops naming it, and kept across a reopen; the
/// highest epoch seen only rises, until the blind store is made again.
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
        let host = StoreID(bytes: [UInt8](repeating: 5, count: 16))!
        try store.noteBlindPackHead(peer: offsite, storeID: host, epoch: 4, naming: [Self.pack(2).id])
        #expect(try store.blindPacks(peer: offsite) == [Self.pack(2, applied: true)])
        #expect(try store.blindPacks(peer: other) == [Self.pack(9)], "another peer's packs stay")
        #expect(try store.blindPeerState(offsite) == .init(storeID: host, throughSeq: 0, epoch: 4))
        try store.noteBlindPackHead(peer: offsite, storeID: host, epoch: 2, naming: [Self.pack(2).id])
        #expect(try store.blindPeerState(offsite)?.epoch == 4, "the highest epoch seen stays")
        let reopened = try Fixtures.reopen(store)
        #expect(try reopened.blindPacks(peer: offsite) == [Self.pack(2, applied: true)])
        #expect(try reopened.blindPeerState(offsite)?.epoch == 4)
    }

    @Test func aBlindStoreMadeAgainStartsItsPacksOver() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let offsite = NodeID(bytes: [UInt8](repeating: 7, count: 32))!
        let first = StoreID(bytes: [UInt8](repeating: 5, count: 16))!
        let again = StoreID(bytes: [UInt8](repeating: 6, count: 16))!
        try store.noteBlindPackHead(peer: offsite, storeID: first, epoch: 9, naming: [Self.pack(1).id])
        try store.rememberBlindPacks([Self.pack(1, applied: true)], peer: offsite)
        try store.noteBlindPackHead(peer: offsite, storeID: again, epoch: 1, naming: [Self.pack(1).id])
        #expect(try store.blindPacks(peer: offsite).isEmpty)
        #expect(try store.blindPeerState(offsite) == .init(storeID: again, throughSeq: 0, epoch: 1))
    }
}
