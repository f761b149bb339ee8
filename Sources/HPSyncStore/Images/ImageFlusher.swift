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
/// At most `maxInFlight` files wait at once (each holds a descriptor): `submit` blocks past that,
/// which also keeps a fast network from running far ahead of a slow disk.
final class ImageFlusher: @unchecked Sendable {
    static let shared = ImageFlusher(maxInFlight: 64)

    private let queue = DispatchQueue(label: "hp-sync.image-fsync")
    private let slots: DispatchSemaphore

    init(maxInFlight: Int) {
        slots = DispatchSemaphore(value: maxInFlight)
    }

    /// Takes ownership of `fd`: fsyncs and closes it in the background.
    func submit(_ fd: Int32, path: String) -> Durability {
        let durability = Durability(path: path)
        slots.wait()
        queue.async { [slots] in
            let result = fsync(fd) == 0 ? nil : "fsync: \(FileIO.errorText())"
            close(fd)
            slots.signal()
            durability.complete(failure: result)
        }
        return durability
    }
}

/// Whether one staged file's bytes have reached the disk.
public final class Durability: @unchecked Sendable {
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
