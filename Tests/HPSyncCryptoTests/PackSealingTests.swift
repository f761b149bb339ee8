import HPSyncModel
import HPSyncProtocol
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

/// Packs share the photo's construction (`PhotoSealingTests` covers its damage cases); these
/// check what is the pack's own: its subkey, its labels, its size bound, and its known answer.
@Suite struct PackSealingTests {
    private let keys = BlindKeys(InventoryKey.random())

    private static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try RandomSource().fill(&bytes)
        return bytes
    }

    private static func seal(_ sealer: StreamSealer, _ plaintext: [UInt8]) throws -> [UInt8] {
        var sealer = sealer
        return sealer.update(plaintext) + (try sealer.finish())
    }

    private static func open(_ opener: StreamOpener, _ sealed: [UInt8]) -> Result<[UInt8], SealingError> {
        var opener = opener
        return Result { () throws(SealingError) -> [UInt8] in
            let opened = try opener.update(sealed)
            try opener.finish()
            return opened
        }
    }

    @Test(arguments: [0, 1, 4095, 65536, 200_000])
    func roundTrips(plainSize: Int) throws {
        let pack = try Self.bytes(plainSize)
        let packID = BlindKeys.newPackID()
        let sealed = try Self.seal(keys.sealer(.pack, id: packID, plainSize: Int64(plainSize)), pack)
        #expect(Int64(sealed.count) == BlindKeys.sealedSize(of: .pack, plainSize: Int64(plainSize)))
        #expect(BlindKeys.sealedSize(of: .pack, plainSize: 9) == BlindKeys.sealedPhotoSize(plainSize: 9))
        #expect(try Self.open(keys.opener(.pack, id: packID, plainSize: Int64(plainSize)), sealed).get() == pack)
    }

    /// A pack is not a photo under the same ID and size, nor the reverse, nor another pack.
    @Test func aPackOpensOnlyAsItselfUnderItsOwnID() throws {
        let plaintext = try Self.bytes(5_000)
        let id = BlindKeys.newPackID()
        let pack = try Self.seal(keys.sealer(.pack, id: id, plainSize: 5_000), plaintext)
        let photo = try Self.seal(keys.photoSealer(photoID: id, plainSize: 5_000), plaintext)
        #expect(pack.count == photo.count, "one construction, one size")
        let asPhoto = Self.open(keys.photoOpener(photoID: id, plainSize: 5_000), pack)
        let asPack = Self.open(keys.opener(.pack, id: id, plainSize: 5_000), photo)
        let otherID = Self.open(keys.opener(.pack, id: BlindKeys.newPackID(), plainSize: 5_000), pack)
        let otherSize = Self.open(keys.opener(.pack, id: id, plainSize: 5_001), pack)
        let otherKey = Self.open(BlindKeys(InventoryKey.random()).opener(.pack, id: id, plainSize: 5_000), pack)
        // The error names what the opener expected.
        for (attempt, opener, result) in [
            ("a pack as a photo", "photo", asPhoto), ("a photo as a pack", "pack", asPack),
            ("another pack ID", "pack", otherID), ("another size", "pack", otherSize),
            ("another inventory key", "pack", otherKey),
        ] {
            guard case .failure(.authenticationFailed(let what)) = result else {
                Issue.record("\(attempt) was not refused as unauthentic: \(result)")
                continue
            }
            #expect(what.hasPrefix("sealed \(opener) "), "\(attempt): \(what)")
        }
    }

    @Test func theWiresPackBoundIsTheSealedSizeOfTheLargestPack() {
        #expect(
            BlindKeys.sealedSize(of: .pack, plainSize: BlindKeys.maximumPackSize) == ProtocolLimits.maxSealedPackBytes)
    }

    /// Every sealed size is recognised as one, for both kinds, and the bytes around it mostly not.
    @Test func aHostRecognisesSealedSizesWithoutAKey() {
        var generator = SplitMix64(seed: 37)
        var sizes: [Int64] = [0, 1, 4095, 4096, 65535, 65536, 65537, 1 << 20, BlindKeys.maximumPackSize]
        sizes += (0..<2_000).map { _ in Int64.random(in: 0...(8 << 20), using: &generator) }
        var neighbours = 0
        for plainSize in sizes {
            for kind in SealedStreamKind.allCases {
                let sealed = BlindKeys.sealedSize(of: kind, plainSize: plainSize)
                #expect(BlindKeys.isSealedSize(sealed, of: kind), "\(kind) of \(plainSize) bytes: \(sealed)")
                if BlindKeys.isSealedSize(sealed + 1, of: kind) { neighbours += 1 }
            }
        }
        #expect(neighbours == 0, "one past a sealed size is never one (Padmé's buckets are wider)")
        #expect(!BlindKeys.isSealedSize(BlindKeys.sealedSize(of: .photo, plainSize: 1 << 30), of: .pack))
        #expect(!BlindKeys.isSealedSize(17, of: .pack) && !BlindKeys.isSealedSize(-5, of: .photo))
    }

    @Test func aSizeBeyondThePackBoundIsRefusedNotTrapped() throws {
        let result = Self.open(
            keys.opener(.pack, id: BlindKeys.newPackID(), plainSize: BlindKeys.maximumPackSize + 1), [1])
        guard case .failure(.malformed(let message)) = result else {
            Issue.record("not refused: \(result)")
            return
        }
        #expect(message.contains("pack of 67108865 bytes"))
    }

    /// Computed by an independent implementation of the format as documented (Python's hmac,
    /// hashlib and the cryptography package), as `SealingTests` does for photos.
    @Test func knownAnswer() throws {
        let keys = BlindKeys(try InventoryKey(bytes: Array(0..<32)))
        let packID = [UInt8](repeating: 7, count: 32)
        let pack = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sealed = try Self.seal(keys.sealer(.pack, id: packID, plainSize: 70_000, salt: Array(0..<16)), pack)
        #expect(sealed.count == 71_729)
        #expect(SHA256.hash(sealed).hex == "1ce0b27d2cfb20e7d7b69713d8f51a6ac8dd085537ada3a47394c26a20d5d17c")
        let empty = try Self.seal(keys.sealer(.pack, id: packID, plainSize: 0, salt: Array(0..<16)), [])
        #expect(empty.count == 4129)
        #expect(SHA256.hash(empty).hex == "ee916a79c3dc4b1fbd90ff012ec3afbd71b57aded943dd9bb482e922f6db5f81")
        #expect(try Self.open(keys.opener(.pack, id: packID, plainSize: 70_000), sealed).get() == pack)
    }
}
