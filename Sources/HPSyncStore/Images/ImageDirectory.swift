import Foundation
import HPSyncCrypto
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `images/` folder: final files named by key and `.tmp-*` temporaries being written.
struct ImageDirectory: Sendable {
    static let tempPrefix = ".tmp-"

    let url: URL
    /// `url.path`, worked out once: a pull's image check builds a path per image.
    let path: String

    init(url: URL) {
        self.url = url
        self.path = url.path
    }

    func finalPath(_ key: ItemKey) -> String { path + "/" + key.rawValue }
    func tempPath(_ name: String) -> String { path + "/" + name }

    /// A fresh temporary file name; random so that processes never collide.
    func newTempName() -> String {
        // Two draws, not one system call per byte: names are made for every staged image.
        var generator = SystemRandomNumberGenerator()
        let high = generator.next()
        let low = generator.next()
        func hex16(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return Self.tempPrefix + hex16(high) + hex16(low)
    }

    /// A new, empty temporary, open for writing.
    func createTemp() throws -> (name: String, descriptor: Int32) {
        let name = newTempName()
        return (name, try FileIO.create(tempPath(name)))
    }

    /// Copies `source` into a new fsynced temporary, hashing as it goes. Checks the image magic
    /// and the size limit when `validate` is set.
    func writeTemp(copying source: URL, maxBytes: Int64, validate: Bool) throws -> (name: String, ref: ImageRef) {
        let sourcePath = source.path
        let input = try FileIO.openForReading(sourcePath)
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw StoreError.io(path: sourcePath, reason: FileIO.errorText()) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw StoreError.missingImageFile(path: sourcePath) }
        if validate && Int64(info.st_size) > maxBytes {
            throw StoreError.imageTooLarge(path: sourcePath, size: Int64(info.st_size), limit: maxBytes)
        }
        let (name, output) = try createTemp()
        let target = tempPath(name)
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            defer { close(output) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { buffer.deallocate() }
            var first = true
            while true {
                let count = try FileIO.readChunk(input, into: buffer, path: sourcePath)
                if count == 0 { break }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                if first && validate {
                    first = false
                    guard ImageFormat.isImage(Array(chunk.prefix(16))) else {
                        throw StoreError.notAnImage(path: sourcePath)
                    }
                }
                size += Int64(count)
                if size > maxBytes { throw StoreError.imageTooLarge(path: sourcePath, size: size, limit: maxBytes) }
                hasher.update(chunk)
                try FileIO.writeAll(output, chunk, path: target)
            }
            if validate && first { throw StoreError.notAnImage(path: sourcePath) }
            try FileIO.sync(output, path: target)
        } catch {
            FileIO.unlinkIfPresent(target)
            throw error
        }
        return (name, ImageRef(digest: hasher.finalize(), size: size))
    }

    /// A hard link of a staged temporary under a new temporary name, so one staged image can
    /// be journaled for several keys.
    func linkTemp(_ name: String) throws -> String {
        let copy = newTempName()
        try FileIO.linkFile(tempPath(name), tempPath(copy))
        return copy
    }

    func syncDirectory() throws { try FileIO.syncDirectory(path) }

    /// The names in `images/` (only those starting with `prefix`, when given) with their age
    /// in seconds.
    func listing(prefix: String? = nil) throws -> [(name: String, age: Double)] {
        let folder = try openFolder()
        defer { close(folder) }
        let names = try self.names(in: folder, prefix: prefix)
        let now = Date().timeIntervalSince1970
        return names.map { name in
            var info = stat()
            guard fstatat(folder, name, &info, 0) == 0 else { return (name, 0) }
            return (name, now - FileIO.modified(info))
        }
    }

    /// Runs `body` with the folder open, for `regularFileSize(in:named:)`.
    func withOpenFolder<T>(_ body: (Int32) throws -> T) throws -> T {
        let folder = try openFolder()
        defer { close(folder) }
        return try body(folder)
    }

    /// The size of the file `name` in the open `folder` (or of the path `name` with
    /// `AT_FDCWD`), nil where there is no regular file: one `fstatat`; relative to an open
    /// folder it looks up one name, not the whole path.
    static func regularFileSize(in folder: Int32, named name: UnsafePointer<CChar>) -> Int64? {
        var info = stat()
        guard fstatat(folder, name, &info, 0) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    private func openFolder() throws -> Int32 {
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw StoreError.io(path: path, reason: FileIO.errorText()) }
        return folder
    }

    /// Where a `dirent`'s name starts.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Every name in the open folder but `.` and `..` (those starting with `prefix`, when
    /// given), read with `readdir`: Foundation's listing cost several milliseconds per 2,000
    /// names, and every command opening the store lists `images/` for its temporaries.
    private func names(in folder: Int32, prefix: String?) throws -> [String] {
        // `fdopendir` takes the descriptor over: hand it a duplicate, the caller closes its own.
        let copy = fcntl(folder, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw StoreError.io(path: path, reason: FileIO.errorText())
        }
        defer { closedir(stream) }
        var names: [String] = []
        let wanted = prefix.map { Array($0.utf8) } ?? []
        while true {
            // Cleared before each call: only readdir's own failure may leave errno set here.
            errno = 0
            guard let entry = readdir(stream) else { break }
            // The name's bytes in place, up to its NUL. `entry.pointee` would copy the whole
            // `dirent` (280 bytes on Linux), but the kernel packs the entries by `d_reclen`, so
            // the last one in readdir's buffer may end before that and the copy read past the
            // buffer: a pull died of it (SIGSEGV in this function).
            let bytes = (UnsafeRawPointer(entry) + Self.nameOffset).assumingMemoryBound(to: UInt8.self)
            // A name shorter than the prefix stops at its NUL, which no prefix byte matches.
            guard !wanted.enumerated().contains(where: { bytes[$0.offset] != $0.element }) else { continue }
            let name = String(cString: bytes)
            if name != "." && name != ".." { names.append(name) }
        }
        guard errno == 0 else { throw StoreError.io(path: path, reason: FileIO.errorText()) }
        return names
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Empty temporaries in `images/`, created ahead of need on a thread of their own while a sync
/// session receives images.
///
/// Creating a file is the costliest step of staging an image: the file system allocates an
/// inode under the folder's lock (on ext4 right after many deletions, it first skips the inodes
/// freed recently). The session's thread, which decrypts, hashes and writes the bytes, then only
/// takes a file that is already there.
///
/// The pool works only between `start()` and `stop()` (a bulk apply), and makes no more files
/// than the images its caller said are coming (`expect`: a sink, as it asks for them), so a
/// session's last image leaves no spare to remove; `stop()` removes the files not taken. A file
/// waits at most a minute, far below the sweep's age for temporaries, so another process's sweep
/// never removes one a session is about to write; one that waited longer is removed and
/// replaced. A crash leaves a few empty temporaries, which the sweep removes.
final class TemporaryFilePool: @unchecked Sendable {
    /// A created, empty temporary.
    struct File {
        let name: String
        let descriptor: Int32
        let created: ContinuousClock.Instant
    }

    /// How many files wait ready.
    static let depth = 4

    /// The `images/` folder the temporaries are made in.
    let directory: ImageDirectory
    /// How long a file may wait before it is replaced rather than taken.
    private let maxWait: Duration
    private let lock = NSLock()
    private var ready: [File] = []
    private var isOpen = false
    private var refilling = false
    /// Images announced (`expect`) and not taken yet.
    private var coming = 0
    private let queue = DispatchQueue(label: "hp-sync.temporaries", qos: .userInitiated)

    init(directory: ImageDirectory, maxWait: Duration = .seconds(60)) {
        self.directory = directory
        self.maxWait = maxWait
    }

    /// Starts keeping files ready for the images announced (`expect`).
    func start() {
        lock.withLock { isOpen = true }
    }

    /// Says that `count` more images are on their way: files are made ahead for them.
    func expect(_ count: Int) {
        lock.withLock { coming += count }
        refillIfOpen()
    }

    /// Stops, and removes the files not taken.
    func stop() {
        let left = lock.withLock {
            isOpen = false
            coming = 0
            defer { ready = [] }
            return ready
        }
        for file in left { remove(file) }
    }

    /// A new empty temporary: a ready one while the pool is open, else one made now.
    func take() throws -> (name: String, descriptor: Int32) {
        let now = ContinuousClock.now
        var stale: [File] = []
        let taken: File? = lock.withLock {
            coming = max(0, coming - 1)
            while !ready.isEmpty {
                let file = ready.removeFirst()
                if now - file.created < maxWait { return file }
                stale.append(file)
            }
            return nil
        }
        for file in stale { remove(file) }
        refillIfOpen()
        if let taken { return (taken.name, taken.descriptor) }
        return try directory.createTemp()
    }

    /// Waits for the refills started so far (tests: to look at what they made, or did not).
    func waitUntilIdle() {
        queue.sync {}
    }

    private func refillIfOpen() {
        let start = lock.withLock {
            guard isOpen, !refilling, ready.count < wanted else { return false }
            refilling = true
            return true
        }
        if start { queue.async { self.refill() } }
    }

    private func refill() {
        while lock.withLock({ isOpen && ready.count < wanted }) {
            guard let (name, descriptor) = try? directory.createTemp() else { break }
            let file = File(name: name, descriptor: descriptor, created: .now)
            let kept = lock.withLock {
                guard isOpen else { return false }
                ready.append(file)
                return true
            }
            if !kept { remove(file) }
        }
        lock.withLock { refilling = false }
    }

    /// How many files should wait ready: the depth, or fewer when fewer images are coming.
    /// Under the lock.
    private var wanted: Int { min(Self.depth, coming) }

    private func remove(_ file: File) {
        close(file.descriptor)
        FileIO.unlinkIfPresent(directory.tempPath(file.name))
    }
}
