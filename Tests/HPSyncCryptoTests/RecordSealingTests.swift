import HPSyncModel
import Testing

@testable import HPSyncCrypto

@Suite struct RecordSealingTests {
    private let keys = BlindKeys(InventoryKey.random())
    private let context: [UInt8] = Array("record-id|stamp|origin".utf8)

    private func record(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test(arguments: [(0, 256), (1, 256), (254, 256), (255, 256), (256, 512), (1000, 1024)])
    func sealsAndOpensPaddedToBlocksOf256(plainSize: Int, padded: Int) throws {
        let plaintext = record(plainSize)
        let sealed = keys.sealRecord(plaintext, context: context)
        #expect(sealed.count == 12 + padded + 16)
        #expect(BlindKeys.sealedRecordSize(plainSize: plainSize) == sealed.count)
        #expect(try keys.openRecord(sealed, context: context) == plaintext)
    }

    @Test func plaintextsEndingInPaddingBytesSurvive() throws {
        for plaintext: [UInt8] in [
            [0x80], [0], [1, 0, 0], [0x80, 0], Array(repeating: 0, count: 255),
            [0x80] + Array(repeating: 0, count: 300),
        ] {
            #expect(try keys.openRecord(keys.sealRecord(plaintext, context: context), context: context) == plaintext)
        }
    }

    @Test func eachSealHasItsOwnNonce() {
        let plaintext = record(10)
        #expect(keys.sealRecord(plaintext, context: context) != keys.sealRecord(plaintext, context: context))
    }

    @Test func everyFlippedByteIsRefused() throws {
        let sealed = keys.sealRecord(record(300), context: context)
        var accepted: [Int] = []
        for index in sealed.indices {
            for bit in [0x01, 0x80] as [UInt8] {
                var changed = sealed
                changed[index] ^= bit
                do {
                    _ = try keys.openRecord(changed, context: context)
                    accepted.append(index)
                } catch {
                    if error != .authenticationFailed(what: "sealed record") { accepted.append(index) }
                }
            }
        }
        #expect(accepted.isEmpty)
    }

    @Test func anotherContextOrKeyIsRefused() throws {
        let sealed = keys.sealRecord(record(40), context: context)
        #expect(throws: SealingError.authenticationFailed(what: "sealed record")) {
            try keys.openRecord(sealed, context: context + [0])
        }
        #expect(throws: SealingError.authenticationFailed(what: "sealed record")) {
            try keys.openRecord(sealed, context: [])
        }
        #expect(throws: SealingError.authenticationFailed(what: "sealed record")) {
            try BlindKeys(InventoryKey.random()).openRecord(sealed, context: context)
        }
        // A record is not a head: the two have separate keys and labels.
        #expect(throws: SealingError.authenticationFailed(what: "sealed head")) {
            try keys.openHead(sealed, context: context)
        }
        let error = #expect(throws: SealingError.self) { try keys.openRecord(sealed, context: []) }
        #expect(error.map { "\($0)" }?.contains("sealed under another inventory key") == true)
    }

    @Test func wrongLengthsAreMalformed() {
        let sealed = keys.sealRecord(record(40), context: context)
        for count in [0, 12, 27, 28, 283, sealed.count - 1, sealed.count + 1, sealed.count + 255] {
            let cut = Array((sealed + Array(repeating: 0, count: 300)).prefix(count))
            let error = #expect(throws: SealingError.self) { try keys.openRecord(cut, context: context) }
            if case .malformed = error {} else { Issue.record("\(count) bytes: \(String(describing: error))") }
        }
        // A whole block more or less keeps the shape but not the tag.
        #expect(throws: SealingError.authenticationFailed(what: "sealed record")) {
            try keys.openRecord(sealed + Array(repeating: 0, count: 256), context: context)
        }
    }

    @Test func badPaddingUnderAValidTagIsRefused() {
        // Only a holder of the key can seal bad padding: sealed here through the raw construction.
        let nonce = Array(repeating: UInt8(9), count: 12)
        let label = Array("hp-sync record v1".utf8) + context
        let noMarker = nonce + ChaChaPoly.seal(key: keys.recordKey, nonce: nonce, plaintext: record(256), aad: label)
        let allZero =
            nonce
            + ChaChaPoly.seal(key: keys.recordKey, nonce: nonce, plaintext: Array(repeating: 0, count: 256), aad: label)
        let tooLong =
            nonce
            + ChaChaPoly.seal(
                key: keys.recordKey, nonce: nonce, plaintext: [0x80] + Array(repeating: 0, count: 511), aad: label)
        for sealed in [noMarker, allZero, tooLong] {
            #expect(throws: SealingError.authenticationFailed(what: "sealed record (its padding)")) {
                try keys.openRecord(sealed, context: context)
            }
        }
    }

    @Test func headsSealAndOpenUnderTheirOwnKey() throws {
        let head = Array("epoch 7, 120 records".utf8)
        let sealed = keys.sealHead(head, context: [1])
        #expect(sealed.count == BlindKeys.sealedRecordSize(plainSize: head.count))
        #expect(try keys.openHead(sealed, context: [1]) == head)
        #expect(throws: SealingError.authenticationFailed(what: "sealed head")) {
            try keys.openHead(sealed, context: [2])
        }
        #expect(throws: SealingError.authenticationFailed(what: "sealed record")) {
            try keys.openRecord(sealed, context: [1])
        }
    }

    @Test func idsAreKeyedDeterministicAndSeparate() throws {
        let item = ItemKey.random()
        let other = BlindKeys(InventoryKey.random())
        #expect(keys.recordID(for: item).count == 32)
        #expect(keys.recordID(for: item) == keys.recordID(for: item))
        #expect(keys.recordID(for: item) != keys.recordID(for: ItemKey.random()))
        #expect(keys.recordID(for: item) != other.recordID(for: item))
        let digest = SHA256.hash(Array("a photo".utf8))
        #expect(keys.photoID(for: digest).count == 32)
        #expect(keys.photoID(for: digest) != digest.bytes)
        #expect(keys.photoID(for: digest) != other.photoID(for: digest))
        // Every use has its own subkey.
        let subkeys = [keys.recordIDKey, keys.photoIDKey, keys.recordKey, keys.photoKey, keys.headKey]
        #expect(Set(subkeys).count == 5)
    }
}
