import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("An image is read for sending as it was checked")
struct ImageReaderTests {
    /// Everything `reader` gives, read in small pieces as a sender does.
    private func readAll(_ reader: ImageReader) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1000)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    /// Overwrites the start of `url` in place (no new file, no truncation).
    private func scribble(_ url: URL, _ bytes: [UInt8]) throws {
        let fd = open(url.path, O_WRONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
    }

    @Test func bytesCheckedIntoAHoldAreTheBytesRead() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let image = jpeg(1, size: 40_000)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", image)))
        let hold = ImageHold()
        let reader = try #require(
            try store.openImage(ofKey: item.key, holding: Fixtures.ref(image).digest, using: hold))
        defer { reader.close() }
        // Changed after the check: what is sent is still what was checked, read once.
        try scribble(store.imageFileURL(for: item.key), [UInt8](repeating: 0xEE, count: 5000))
        #expect(try readAll(reader) == image)
    }

    @Test func anImageLargerThanTheHoldIsReadAgainFromTheFile() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let image = jpeg(2, size: 40_000)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", image)))
        let small = ImageHold(limit: 10_000)
        let reader = try #require(
            try store.openImage(ofKey: item.key, holding: Fixtures.ref(image).digest, using: small))
        defer { reader.close() }
        #expect(try readAll(reader) == image)
        // The hold served nothing: a change after the check shows (the sink's digest check catches it).
        let again = try #require(
            try store.openImage(ofKey: item.key, holding: Fixtures.ref(image).digest, using: small))
        defer { again.close() }
        try scribble(store.imageFileURL(for: item.key), [0xEE])
        #expect(try readAll(again).first == 0xEE)
    }

    @Test func aFileThatGrewOrShrankSinceItWasOpenedIsNotTheImage() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let image = jpeg(3, size: 20_000)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", image)))
        let url = store.imageFileURL(for: item.key)
        let ref = Fixtures.ref(image)
        for hold in [ImageHold(), nil] {
            let grown = try ImageReader(path: url.path)
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([1, 2, 3]))
            try handle.close()
            #expect(try !grown.holds(ref, using: hold), "grown, hold: \(hold != nil)")
            grown.close()
            #expect(truncate(url.path, off_t(image.count)) == 0)

            let shrunk = try ImageReader(path: url.path)
            #expect(truncate(url.path, off_t(image.count - 10)) == 0)
            #expect(try !shrunk.holds(ref, using: hold), "shrunk, hold: \(hold != nil)")
            shrunk.close()
            try Data(image).write(to: url)
            let intact = try ImageReader(path: url.path)
            #expect(try intact.holds(ref, using: hold), "intact, hold: \(hold != nil)")
            #expect(try readAll(intact) == image)
            intact.close()
        }
    }
}
