import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

@Suite struct PhotoSealingTests {
    private let keys = BlindKeys(InventoryKey.random())
    private let photoID = Array(SHA256.hash(Array("photo one".utf8)).bytes)

    private static func photo(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try RandomSource().fill(&bytes)
        return bytes
    }

    /// Slice lengths from 0 to a little over two chunks, mostly small, reproducible from the seed.
    private static func slices(of total: Int, seed: UInt64) -> [Range<Int>] {
        var generator = SplitMix64(seed: seed)
        var ranges: [Range<Int>] = []
        var start = 0
        while start < total {
            let limit = [1, 17, 4096, 65536, 140_000].randomElement(using: &generator)!
            let end = min(total, start + Int.random(in: 0...limit, using: &generator))
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }

    private func seal(_ photo: [UInt8], seed: UInt64, keys: BlindKeys? = nil) throws -> [UInt8] {
        var sealer = (keys ?? self.keys).photoSealer(photoID: photoID, plainSize: Int64(photo.count))
        var sealed = seed % 2 == 0 ? sealer.header() : []
        for range in Self.slices(of: photo.count, seed: seed) {
            sealed += photo[range].withUnsafeBytes { sealer.update($0) }
        }
        return sealed + (try sealer.finish())
    }

    /// What an opener returned before it threw (or all of it), and the error.
    private func open(
        _ sealed: [UInt8], plainSize: Int, photoID: [UInt8]? = nil, seed: UInt64 = 1
    ) -> (returned: [UInt8], error: SealingError?) {
        var opener = keys.photoOpener(photoID: photoID ?? self.photoID, plainSize: Int64(plainSize))
        var returned: [UInt8] = []
        do {
            for range in Self.slices(of: sealed.count, seed: seed) {
                returned += try opener.update(Array(sealed[range]))
            }
            try opener.finish()
            return (returned, nil)
        } catch {
            return (returned, error)
        }
    }

    @Test(arguments: [0, 1, 4095, 4096, 65535, 65536, 65537, 3 * 65536 + 7, 5_000_017])
    func roundTripsInRandomSlices(plainSize: Int) throws {
        let photo = try Self.photo(plainSize)
        for seed: UInt64 in [1, 2] {
            let sealed = try seal(photo, seed: seed)
            #expect(Int64(sealed.count) == BlindKeys.sealedPhotoSize(plainSize: Int64(plainSize)))
            let padded = Int64(max(4096, Padme.paddedLength(Int64(plainSize) + 1)))
            #expect(Int64(sealed.count) == 17 + padded + 16 * ((padded + 65535) / 65536))
            let opened = open(sealed, plainSize: plainSize, seed: seed + 10)
            #expect(opened.error == nil)
            #expect(opened.returned == photo)
        }
    }

    @Test func sealingTheSamePhotoTwiceDiffers() throws {
        let photo = try Self.photo(5000)
        let first = try seal(photo, seed: 1)
        let second = try seal(photo, seed: 1)
        #expect(first.count == second.count)
        #expect(first != second)
        #expect(first[0] == 1 && second[0] == 1)
    }

    @Test func sealerReturnsWholeChunksOnly() throws {
        var sealer = keys.photoSealer(photoID: photoID, plainSize: 200_000)
        #expect(sealer.header().count == 17)
        #expect(sealer.header().isEmpty)
        #expect(sealer.update(Array(repeating: 1, count: 65535)).isEmpty)
        #expect(sealer.update([1]).count == 65536 + 16)
        #expect(sealer.update(Array(repeating: 1, count: 65536 * 2 + 100)).count == 2 * (65536 + 16))
        #expect(sealer.update(Array(repeating: 1, count: 200_000 - 196_708)).isEmpty, "the last chunk waits")
        let rest = try sealer.finish()
        #expect(17 + 3 * (65536 + 16) + rest.count == Int(BlindKeys.sealedPhotoSize(plainSize: 200_000)))
    }

    @Test func sealerRefusesAPhotoOfAnotherSize() throws {
        var short = keys.photoSealer(photoID: photoID, plainSize: 100)
        _ = short.update(Array(repeating: 1, count: 99))
        #expect(throws: SealingError.malformed("the photo ended after 99 of the 100 bytes it was sealed for")) {
            try short.finish()
        }
        var long = keys.photoSealer(photoID: photoID, plainSize: 100)
        let output = long.update(Array(repeating: 1, count: 101))
        #expect(output.count == 17, "nothing past the size is sealed")
        #expect(throws: SealingError.malformed("the photo has more than the 100 bytes it was sealed for")) {
            try long.finish()
        }
    }

    // MARK: - Tampering

    /// 3 × 64 KiB + 7 bytes: four chunks, the last one 4 KiB (P = 200,704).
    private static let tamperSize = 3 * 65536 + 7
    private static let sealedChunk = 65536 + 16

    /// Opens `sealed`, expects a refusal, and checks nothing unverified came out: what was returned
    /// is a prefix of the photo no longer than the chunks before `firstBadChunk`.
    private func expectRefused(
        _ sealed: [UInt8], photo: [UInt8], firstBadChunk: Int, plainSize: Int? = nil, photoID: [UInt8]? = nil,
        _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for seed: UInt64 in [3, 4] {
            let (returned, error) = open(sealed, plainSize: plainSize ?? photo.count, photoID: photoID, seed: seed)
            #expect(error != nil, comment, sourceLocation: sourceLocation)
            #expect(returned.count <= firstBadChunk * 65536, comment, sourceLocation: sourceLocation)
            #expect(returned == Array(photo.prefix(returned.count)), comment, sourceLocation: sourceLocation)
        }
    }

    @Test func flippedBytesAreRefusedInEveryRegion() throws {
        let photo = try Self.photo(Self.tamperSize)
        let sealed = try seal(photo, seed: 5)
        let chunk = Self.sealedChunk
        let places: [(offset: Int, chunk: Int, what: String)] = [
            (0, 0, "version"), (1, 0, "salt start"), (16, 0, "salt end"),
            (17, 0, "chunk 1 ciphertext"), (17 + 65535, 0, "chunk 1 last ciphertext byte"),
            (17 + 65536, 0, "chunk 1 tag"), (17 + chunk - 1, 0, "chunk 1 tag end"),
            (17 + chunk + 1000, 1, "chunk 2 ciphertext"), (17 + 2 * chunk + 65540, 2, "chunk 3 tag"),
            (17 + 3 * chunk, 3, "last chunk start"), (17 + 3 * chunk + 7, 3, "last chunk padding marker"),
            (17 + 3 * chunk + 100, 3, "last chunk padding"), (sealed.count - 17, 3, "last chunk ciphertext end"),
            (sealed.count - 1, 3, "last tag end"),
        ]
        for place in places {
            var changed = sealed
            changed[place.offset] ^= 0x04
            expectRefused(changed, photo: photo, firstBadChunk: place.chunk, "\(place.what)")
        }
        var version = sealed
        version[0] = 2
        #expect(
            open(version, plainSize: photo.count).error
                == .malformed("sealed photo format 2 is unknown (this hp-sync reads format 1)"))
    }

    @Test func truncationIsRefused() throws {
        let photo = try Self.photo(Self.tamperSize)
        let sealed = try seal(photo, seed: 6)
        let chunk = Self.sealedChunk
        for length in [
            0, 1, 16, 17, 18, 17 + chunk - 1, 17 + chunk, 17 + 2 * chunk + 5, 17 + 3 * chunk, sealed.count - 16,
            sealed.count - 1,
        ] {
            let cut = Array(sealed.prefix(length))
            let chunksWhole = max(0, (length - 17) / chunk)
            expectRefused(cut, photo: photo, firstBadChunk: chunksWhole, "cut at \(length)")
            #expect(
                open(cut, plainSize: photo.count).error
                    == .malformed("the sealed photo ended after \(length) of its \(sealed.count) bytes (truncated)"))
        }
    }

    @Test func extensionIsRefused() throws {
        let photo = try Self.photo(Self.tamperSize)
        let sealed = try seal(photo, seed: 7)
        for extra in [[0], Array(repeating: 0, count: 16), Array(sealed[17..<(17 + Self.sealedChunk)])] {
            expectRefused(sealed + extra, photo: photo, firstBadChunk: 4, "\(extra.count) more bytes")
        }
        var opener = keys.photoOpener(photoID: photoID, plainSize: Int64(photo.count))
        #expect(try opener.update(sealed) == photo)
        #expect(throws: SealingError.malformed("the sealed photo is longer than its \(sealed.count) bytes")) {
            try opener.update([0])
        }
        #expect(throws: SealingError.self, "a failed opener stays failed") { try opener.finish() }
    }

    @Test func reorderedRepeatedAndForeignChunksAreRefused() throws {
        let photo = try Self.photo(Self.tamperSize)
        let sealed = try seal(photo, seed: 8)
        let chunk = Self.sealedChunk
        func chunkRange(_ index: Int) -> Range<Int> { (17 + index * chunk)..<(17 + (index + 1) * chunk) }

        var swapped = sealed
        swapped.replaceSubrange(chunkRange(0), with: sealed[chunkRange(1)])
        swapped.replaceSubrange(chunkRange(1), with: sealed[chunkRange(0)])
        expectRefused(swapped, photo: photo, firstBadChunk: 0, "chunks 1 and 2 swapped")

        var repeated = sealed
        repeated.replaceSubrange(chunkRange(2), with: sealed[chunkRange(1)])
        expectRefused(repeated, photo: photo, firstBadChunk: 2, "chunk 2 repeated as 3")

        let again = try seal(photo, seed: 9)
        var foreign = sealed
        foreign.replaceSubrange(chunkRange(1), with: again[chunkRange(1)])
        expectRefused(foreign, photo: photo, firstBadChunk: 1, "chunk 2 from another sealing of the photo")

        let other = try seal(try Self.photo(Self.tamperSize), seed: 10)
        var otherPhoto = sealed
        otherPhoto.replaceSubrange(chunkRange(2), with: other[chunkRange(2)])
        expectRefused(otherPhoto, photo: photo, firstBadChunk: 2, "chunk 3 from another photo")
        var otherHeader = other
        otherHeader.replaceSubrange(0..<17, with: sealed[0..<17])
        expectRefused(otherHeader, photo: photo, firstBadChunk: 0, "another photo under this header")

        let otherKeys = try seal(photo, seed: 11, keys: BlindKeys(InventoryKey.random()))
        expectRefused(otherKeys, photo: photo, firstBadChunk: 0, "sealed under another inventory key")
    }

    @Test func anotherPhotoIDOrSizeIsRefused() throws {
        let photo = try Self.photo(Self.tamperSize)
        let sealed = try seal(photo, seed: 12)
        let otherID = keys.photoID(for: SHA256.hash(Array("photo two".utf8)))
        expectRefused(sealed, photo: photo, firstBadChunk: 0, photoID: otherID, "another photo ID")
        for size in [photo.count - 1, photo.count + 1, photo.count + 5000, photo.count - 70_000, 0] {
            // Sizes in the same Padmé bucket fail their tags; others fail their length.
            expectRefused(sealed, photo: photo, firstBadChunk: 0, plainSize: size, "size \(size)")
        }
        var opener = keys.photoOpener(photoID: photoID, plainSize: -1)
        #expect(throws: SealingError.self) { try opener.update(sealed) }
    }

    @Test func theLastFlagAndThePaddingAreChecked() throws {
        // Streams only a key holder could make: chunks sealed by hand with the layout's own parts.
        let layout = try #require(StreamLayout(.photo, plainSize: 70_000))
        #expect(layout.chunkCount == 2)
        let salt = Array(repeating: UInt8(5), count: 16)
        let chunkKey = layout.chunkKey(subkey: keys.photoKey, salt: salt, id: photoID)
        let aad = layout.associatedData(id: photoID)
        let photo = try Self.photo(70_000)
        let padded = photo + [0x80] + Array(repeating: 0, count: Int(layout.paddedSize) - 70_001)
        func build(_ plaintext: [UInt8], lastFlags: [UInt8]) -> [UInt8] {
            var sealed = [1] + salt
            for index in 0..<2 {
                var nonce = layout.nonce(Int64(index))
                nonce[11] = lastFlags[index]
                let start = index * 65536
                let chunk = Array(plaintext[start..<min(plaintext.count, start + 65536)])
                sealed += ChaChaPoly.seal(key: chunkKey, nonce: nonce, plaintext: chunk, aad: aad)
            }
            return sealed
        }
        #expect(open(build(padded, lastFlags: [0, 1]), plainSize: 70_000).returned == photo, "the construction itself")
        expectRefused(build(padded, lastFlags: [0, 0]), photo: photo, firstBadChunk: 1, "last chunk not flagged")
        expectRefused(build(padded, lastFlags: [1, 1]), photo: photo, firstBadChunk: 0, "first chunk flagged last")
        var noMarker = padded
        noMarker[70_000] = 0
        var strayByte = padded
        strayByte[padded.count - 1] = 1
        for plaintext in [noMarker, strayByte] {
            let opened = open(build(plaintext, lastFlags: [0, 1]), plainSize: 70_000)
            #expect(opened.error == .authenticationFailed(what: "sealed photo (its padding)"))
            // Chunk 1 verified, but when both came in one update the refusal returns neither.
            #expect(opened.returned.count <= 65536)
            #expect(opened.returned == Array(photo.prefix(opened.returned.count)))
        }
    }
}
