import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes staged temporaries durable off the receiving thread. `ImageStaging.finish()` hands its
/// descriptor here and returns at once, so the next image streams in while the disk flushes this
/// one; `Store.applyRemote` waits for every file of a batch (`Durability.wait()`) before the
/// transaction that journals them commits, so the store's rule "the bytes are durable before a
/// row names them" holds as before.
///
/// The fsyncs run on `lanes` serial queues, files handed out in turn: one fsync at a time leaves
/// the disk's queue nearly empty (each waits for its own flush), while several in flight let the
/// device and the file system merge them. On this project's VM 2,000 files of 216 KiB took
/// 5.0–8.6 s with one lane and 0.9–2.3 s with four or eight. At most `maxInFlight` files wait at
/// once (each holds a descriptor): `submit` blocks past that, which also keeps a fast network
/// from running far ahead of a slow disk.
final class ImageFlusher: @unchecked Sendable {
    static let shared = ImageFlusher(lanes: 8, maxInFlight: 64)

    private let queues: [DispatchQueue]
    private let slots: DispatchSemaphore
    private let next = NSLock()
    private var turn = 0

    init(lanes: Int, maxInFlight: Int) {
        queues = (0..<max(lanes, 1)).map { DispatchQueue(label: "hp-sync.image-fsync.\($0)") }
        slots = DispatchSemaphore(value: maxInFlight)
    }

    /// Takes ownership of `fd`: fsyncs and closes it in the background.
    func submit(_ fd: Int32, path: String) -> Durability {
        let durability = Durability(path: path)
        slots.wait()
        nextQueue().async { [slots] in
            let result = fsync(fd) == 0 ? nil : "fsync: \(FileIO.errorText())"
            close(fd)
            slots.signal()
            durability.complete(failure: result)
        }
        return durability
    }

    private func nextQueue() -> DispatchQueue {
        next.lock()
        defer { next.unlock() }
        turn = (turn + 1) % queues.count
        return queues[turn]
    }
}

/// Whether one staged file's bytes have reached the disk.
package final class Durability: @unchecked Sendable {
    private let condition = NSCondition()
    private let path: String
    private var done = false
    private var failure: String?

    init(path: String) {
        self.path = path
    }

    /// A file already durable (written and fsynced by its creator).
    static func durable(path: String) -> Durability {
        let durability = Durability(path: path)
        durability.done = true
        return durability
    }

    fileprivate func complete(failure: String?) {
        condition.lock()
        self.failure = failure
        done = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until the flush ended; throws if it failed.
    func wait() throws {
        condition.lock()
        while !done { condition.wait() }
        let failure = self.failure
        condition.unlock()
        if let failure { throw StoreError.io(path: path, reason: failure) }
    }
}
