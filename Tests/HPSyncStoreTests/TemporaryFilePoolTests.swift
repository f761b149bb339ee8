import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Temporaries for incoming images made ahead during a bulk apply (`TemporaryFilePool`).
@Suite struct TemporaryFilePoolTests {
    private func temporaries(_ store: Store) throws -> Set<String> {
        Set(try store.images.listing(prefix: ImageDirectory.tempPrefix).map(\.name))
    }

    @Test func whileABulkApplyRunsTakenFilesAreReplacedAheadAndTheRestRemovedAtItsEnd() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var taken: (name: String, descriptor: Int32)?
        var ahead: Set<String> = []
        try store.bulkApply {
            store.expectImages(10)
            store.temporaries.waitUntilIdle()
            #expect(try temporaries(store).count == TemporaryFilePool.depth, "made before any take")
            taken = try store.temporaries.take()
            ahead = try temporaries(store)
            store.temporaries.waitUntilIdle()
            #expect(try temporaries(store).count == TemporaryFilePool.depth + 1)
            let again = try store.temporaries.take()
            #expect(try temporaries(store).contains(again.name))
            #expect(again.name != taken?.name)
            close(again.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(again.name))
        }
        let mine = try #require(taken)
        defer {
            close(mine.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(mine.name))
        }
        #expect(ahead.contains(mine.name))
        #expect(try temporaries(store) == [mine.name], "the files not taken are removed when the apply ends")
        #expect(write(mine.descriptor, "x", 1) == 1, "the taken file stays the taker's")
    }

    /// Files are made for the images announced and no more: the session's last image leaves
    /// no spare behind to remove.
    @Test func noMoreFilesAreMadeThanImagesAnnounced() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var taken: [(name: String, descriptor: Int32)] = []
        try store.bulkApply {
            store.expectImages(2)
            store.temporaries.waitUntilIdle()
            #expect(try temporaries(store).count == 2)
            taken.append(try store.temporaries.take())
            store.expectImages(1)
            store.temporaries.waitUntilIdle()
            #expect(try temporaries(store).count == 3, "one taken, two ready")
            taken.append(try store.temporaries.take())
            taken.append(try store.temporaries.take())
            store.temporaries.waitUntilIdle()
            #expect(try temporaries(store) == Set(taken.map(\.name)), "three announced, three made, all taken")
        }
        for file in taken {
            close(file.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(file.name))
        }
    }

    @Test func outsideABulkApplyNothingIsMadeAhead() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let taken = try store.temporaries.take()
        defer {
            close(taken.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(taken.name))
        }
        store.temporaries.waitUntilIdle()
        #expect(try temporaries(store) == [taken.name])
    }

    /// A file that waited longer than the pool allows (another process's sweep removes stale
    /// temporaries) is removed and never handed out. Here a file may not wait at all: every
    /// ready one is stale by the time it is taken.
    @Test func aFileThatWaitedTooLongIsReplacedNotTaken() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let pool = TemporaryFilePool(directory: store.images, maxWait: .zero)
        pool.start()
        defer { pool.stop() }
        pool.expect(10)
        let first = try pool.take()
        defer {
            close(first.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(first.name))
        }
        pool.waitUntilIdle()
        #expect(try temporaries(store).count == TemporaryFilePool.depth + 1)
        let waiting = try temporaries(store).subtracting([first.name])
        let second = try pool.take()
        defer {
            close(second.descriptor)
            FileIO.unlinkIfPresent(store.images.tempPath(second.name))
        }
        #expect(!waiting.contains(second.name))
        #expect(try temporaries(store).isDisjoint(with: waiting), "the stale files are removed")
    }

    /// A folder that takes no files: each take says why, with the path, as a staging without the
    /// pool did (the refill behind it fails quietly and makes nothing).
    @Test func whenNoFileCanBeMadeEachTakeSaysWhy() throws {
        let dir = TempDirectory()
        let gone = ImageDirectory(url: dir.url.appendingPathComponent("no such folder", isDirectory: true))
        let pool = TemporaryFilePool(directory: gone)
        pool.start()
        defer { pool.stop() }
        for _ in 0..<3 {
            #expect {
                try pool.take()
            } throws: { error in
                guard case StoreError.io(let path, let reason) = error else { return false }
                return path.hasPrefix(gone.path) && reason.contains("No such file")
            }
        }
        pool.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: gone.path))
    }
}
