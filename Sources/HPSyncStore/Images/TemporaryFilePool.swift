import Foundation

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
