import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import Testing

@testable import HPSyncEngine

/// The head of a blind store of packs (format 2): what a writer seals, a reader gets back, and
/// what a blind store could change about it does not open (`Docs/blind-packs-design.md`).
@Suite struct BlindPackHeadTests {
    let keys = BlindKeys(InventoryKey.random())
    let store = StoreID.random()

    static func packs(_ count: Int) -> [BlindPackHead.Pack] {
        (0..<count).map { BlindPackHead.Pack(id: BlindID(bytes: BlindKeys.newPackID())!, plainSize: Int64(300 + $0)) }
    }

    @Test(arguments: [0, 1, 97])
    func openAndFinishedHeadsRoundTrip(count: Int) throws {
        for isOpen in [true, false] {
            let head = BlindPackHead(epoch: 7, isOpen: isOpen, packs: Self.packs(count))
            let sealed = head.sealed(keys: keys, store: store)
            #expect(sealed.epoch == 7)
            #expect(try BlindPackHead.open(sealed, keys: keys, store: store) == head)
        }
        #expect(try BlindPackHead.open(BlindHeadMessage(epoch: 0, sealed: []), keys: keys, store: store) == nil)
    }

    /// 1,000,000 items at 1,024 a pack fit many times over, within the wire's bound.
    @Test func theLargestHeadFitsTheWiresBound() throws {
        #expect(BlindPackHead.maxPacks > 1_000_000 / 1_024 * 20)
        let head = BlindPackHead(epoch: 3, isOpen: false, packs: Self.packs(BlindPackHead.maxPacks))
        let sealed = head.sealed(keys: keys, store: store)
        #expect(sealed.sealed.count <= ProtocolLimits.maxSealedHeadBytes)
        #expect(try BlindPackHead.open(sealed, keys: keys, store: store)?.packs.count == BlindPackHead.maxPacks)
    }

    @Test func aHeadMovedToAnotherEpochOrStoreOrAlteredDoesNotOpen() throws {
        let head = BlindPackHead(epoch: 9, isOpen: false, packs: Self.packs(3))
        var sealed = head.sealed(keys: keys, store: store)
        let other = BlindPackHead(epoch: 10, isOpen: false, packs: []).sealed(keys: keys, store: store)
        #expect(throws: BlindRecordSeal.Failure.self, "another epoch in the clear") {
            try BlindPackHead.open(BlindHeadMessage(epoch: 10, sealed: sealed.sealed), keys: keys, store: store)
        }
        #expect(throws: BlindRecordSeal.Failure.self, "another store") {
            try BlindPackHead.open(sealed, keys: keys, store: StoreID.random())
        }
        #expect(throws: BlindRecordSeal.Failure.self, "an older head under a newer epoch") {
            try BlindPackHead.open(BlindHeadMessage(epoch: 10, sealed: sealed.sealed), keys: keys, store: store)
        }
        #expect(try BlindPackHead.open(other, keys: keys, store: store)?.epoch == 10)
        sealed.sealed[sealed.sealed.count / 2] ^= 1
        #expect(throws: BlindRecordSeal.Failure.self, "a flipped byte") {
            try BlindPackHead.open(sealed, keys: keys, store: store)
        }
    }

    /// Heads only a key holder could seal, read as a reader must.
    @Test func aHeadOfEntriesOrOfABrokenListIsRefusedWithWhatIsWrong() throws {
        let entries = BlindHead(epoch: 4, entries: nil).sealed(keys: keys, store: store)
        do {
            _ = try BlindPackHead.open(entries, keys: keys, store: store)
            Issue.record("a format-1 head opened as packs")
        } catch let failure as BlindRecordSeal.Failure {
            #expect(failure.description.contains("the blind store holds the version-4 format"))
        }
        let pack = Self.packs(1)[0]
        func sealedHead(_ packs: [BlindPackHead.Pack], extra: [UInt8] = []) -> BlindHeadMessage {
            var message = BlindPackHead(epoch: 5, isOpen: false, packs: packs).sealed(keys: keys, store: store)
            guard !extra.isEmpty else { return message }
            // Re-seal the plaintext with bytes appended: a list longer than it announces.
            let plaintext = try! keys.openHead(message.sealed, context: BlindHead.context(store: store, epoch: 5))
            message.sealed = keys.sealHead(plaintext + extra, context: BlindHead.context(store: store, epoch: 5))
            return message
        }
        for (what, message) in [
            ("one pack twice", sealedHead([pack, pack])),
            ("a pack of no bytes", sealedHead([BlindPackHead.Pack(id: pack.id, plainSize: 0)])),
            ("a list longer than announced", sealedHead([pack], extra: [1])),
        ] {
            #expect(throws: BlindRecordSeal.Failure.self, "\(what)") {
                try BlindPackHead.open(message, keys: keys, store: store)
            }
        }
    }
}
