import Foundation
import HPSyncModel
import Testing

@testable import HPSyncCrypto

/// The OpenSSL wiring of sealing, proven against the RFCs' own vectors rather than round trips.
@Suite struct SealingTests {
    @Test func chaChaPolyMatchesRFC8439AEADExample() throws {
        // RFC 8439 §2.8.2.
        let plaintext = Array(
            ("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
                + "sunscreen would be it.").utf8)
        let aad = bytes(hex: "50515253c0c1c2c3c4c5c6c7")
        let key = Array(UInt8(0x80)...UInt8(0x9f))
        let nonce = bytes(hex: "070000004041424344454647")
        let ciphertext = bytes(
            hex: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
                + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                + "3ff4def08e4b7a9de576d26586cec64b6116")
        let tag = bytes(hex: "1ae10b594f09e26a7e902ecbd0600691")

        let sealed = ChaChaPoly.seal(key: key, nonce: nonce, plaintext: plaintext, aad: aad)
        #expect(sealed == ciphertext + tag)
        #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: sealed, aad: aad) == plaintext)
    }

    @Test func chaChaPolyRefusesAnyChange() {
        let key = Array(repeating: UInt8(7), count: 32)
        let nonce = Array(repeating: UInt8(1), count: 12)
        let sealed = ChaChaPoly.seal(key: key, nonce: nonce, plaintext: Array("a shelf of books".utf8), aad: [9])
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: changed, aad: [9]) == nil)
        }
        #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: sealed, aad: [8]) == nil)
        #expect(ChaChaPoly.open(key: key, nonce: Array(repeating: 2, count: 12), sealed: sealed, aad: [9]) == nil)
        #expect(ChaChaPoly.open(key: Array(repeating: 8, count: 32), nonce: nonce, sealed: sealed, aad: [9]) == nil)
        #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: Array(sealed.dropLast()), aad: [9]) == nil)
        #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: Array(sealed.prefix(15)), aad: [9]) == nil)
    }

    @Test func chaChaPolySealsEmptyPlaintext() {
        let key = Array(repeating: UInt8(3), count: 32)
        let nonce = Array(repeating: UInt8(4), count: 12)
        let sealed = ChaChaPoly.seal(key: key, nonce: nonce, plaintext: [], aad: [])
        #expect(sealed.count == 16)
        #expect(ChaChaPoly.open(key: key, nonce: nonce, sealed: sealed, aad: []) == [])
    }

    @Test func hmacMatchesRFC4231TestCase2() {
        let code = HMACSHA256.authenticationCode(
            for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(code == bytes(hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test func hkdfMatchesRFC5869TestCase1() {
        let output = HKDFSHA256.deriveKey(
            inputKeyMaterial: Array(repeating: 0x0b, count: 22), salt: Array(0x00...0x0c),
            info: Array(0xf0...0xf9), byteCount: 42)
        #expect(
            output
                == bytes(
                    hex: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
    }

    @Test func hkdfWithEmptySaltAndInfoMatchesRFC5869TestCase3() {
        // BlindKeys derives with an empty salt: OpenSSL must read it as RFC 5869 does.
        let output = HKDFSHA256.deriveKey(
            inputKeyMaterial: Array(repeating: 0x0b, count: 22), salt: [], info: [], byteCount: 42)
        #expect(
            output
                == bytes(
                    hex: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
    }

    @Test func randomBytesDiffer() throws {
        let first = try SecureRandom.bytes(32)
        #expect(first.count == 32)
        #expect(first != (try SecureRandom.bytes(32)))
        #expect(try SecureRandom.bytes(0) == [])
    }

    @Test func padmeIsMonotoneNeverSmallerAndTight() {
        // Every length up to 70,000, then steps of ~0.1%, and around each power of two (where the
        // overhead is worst): collected first, since an #expect per length would be slow.
        var lengths = Array(Int64(0)...70_000)
        var length: Int64 = 70_000
        while length < 1 << 40 {
            length += length / 997
            lengths.append(length)
        }
        for exponent in 12...40 {
            lengths += [-1, 0, 1, 2].map { (Int64(1) << exponent) + $0 }
        }
        lengths.sort()
        var previous: Int64 = 0
        var worst = 0.0
        var violations: [Int64] = []
        for length in lengths {
            let padded = Padme.paddedLength(length)
            if padded < length || padded < previous || Padme.paddedLength(padded) != padded {
                violations.append(length)
            }
            if length >= 4096 {
                worst = max(worst, Double(padded - length) / Double(length))
            }
            previous = padded
        }
        #expect(violations.isEmpty, "not monotone, smaller than the length, or not its own bucket")
        #expect(worst <= 0.12)
        #expect(worst < 0.0625, "from 4 KiB, as Padme's comment says")
        #expect(Padme.paddedLength(129) == 144, "11.6%, Padmé's worst overhead")
        #expect(Padme.paddedLength(0) == 0)
        #expect(Padme.paddedLength(1) == 1)
        #expect(Padme.paddedLength(4097) == 4352)
        #expect(Padme.paddedLength(65537) == 67584)
    }

    @Test func knownAnswersOfTheSealedFormats() throws {
        // Computed by an independent implementation of the formats as documented (Python's hmac,
        // hashlib and the cryptography package), so the documented formats are the ones built.
        let keys = BlindKeys(try InventoryKey(bytes: Array(0..<32)))
        let itemKey = try ItemKey("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")
        #expect(keys.recordID(for: itemKey).hex == "4437f2ddaa64304c52aaadc0c7621aff144697c8fcb076fddc53515cc889e8fb")
        let photoID = keys.photoID(for: SHA256.hash(Array("photo".utf8)))
        #expect(photoID.hex == "6a64f1886570ca944aef17d622e3c8f3e41641bcc39b293764bd9864cc30edf7")

        let nonce = Array(UInt8(0)..<12)
        let record = BlindKeys.seal(
            Array("hello".utf8), key: keys.recordKey, associatedData: Array("hp-sync record v1".utf8) + [1, 2, 3],
            nonce: nonce)
        #expect(record.count == 284)
        #expect(SHA256.hash(record).hex == "66ddb7f454d54b4cac078d3f53957fceaab1bd20b92b9dcc1a48adab8396b9c1")
        #expect(try keys.openRecord(record, context: [1, 2, 3]) == Array("hello".utf8))
        let head = BlindKeys.seal(
            Array("head".utf8), key: keys.headKey, associatedData: Array("hp-sync head v1".utf8) + [4, 5],
            nonce: nonce)
        #expect(SHA256.hash(head).hex == "883f4cb2aaabbe149c917732181257d03ffdc5724aadf6cb57e649e7098ddd81")
        #expect(try keys.openHead(head, context: [4, 5]) == Array("head".utf8))

        let photo = (0..<70_000).map { UInt8($0 % 251) }
        var sealer = keys.sealer(.photo, id: photoID, plainSize: 70_000, salt: Array(0..<16))
        let sealed = sealer.update(photo) + (try sealer.finish())
        #expect(sealed.count == 71_729)
        #expect(SHA256.hash(sealed).hex == "f09c5a87db15bfbb942f86a03df8e947ec08870341ad1abcacd42a162d4a3c7b")
        var empty = keys.sealer(.photo, id: photoID, plainSize: 0, salt: Array(0..<16))
        let sealedEmpty = try empty.finish()
        #expect(sealedEmpty.count == 4129)
        #expect(SHA256.hash(sealedEmpty).hex == "6ab5be099bed68e67946a0aac3cd59e08be70283b997ed54500a538e9ed6e372")
    }
}

/// Bytes from hex digits (test vectors).
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex, for comparing with test vectors.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
