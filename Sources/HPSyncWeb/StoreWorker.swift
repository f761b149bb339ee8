import HPSyncStore
import NIOPosix

/// Runs store calls on a small pool of dedicated threads.
///
/// SQLite calls block: a read waits for the disk, a write waits up to the busy timeout for the
/// write lock that `serve`, a cron pull or a CLI command may hold. Run on Swift's cooperative
/// pool (one thread per core: two here), two such waits would stall every request and the
/// event loops' continuations. A `NIOThreadPool` of its own keeps the waiting off that pool:
/// the async handler suspends, a pool thread blocks, the result resumes the handler. Four
/// threads: GRDB's pool allows several concurrent readers and one writer; more threads would
/// only queue on SQLite's own locks.
public final class StoreWorker: Sendable {
    public let store: Store
    private let pool: NIOThreadPool

    public init(store: Store, threads: Int = 4) {
        self.store = store
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `body` with the store on a pool thread; store errors become web errors.
    func run<T: Sendable>(_ body: @escaping @Sendable (Store) throws -> T) async throws -> T {
        let store = self.store
        do {
            return try await pool.runIfActive { try body(store) }
        } catch let error as StoreError {
            throw WebError.from(error)
        }
    }

    public func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}
