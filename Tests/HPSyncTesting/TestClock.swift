import HPSyncStore
import Synchronization

/// A wall clock the test sets, forwards and back, shared by the test and a store.
public final class TestClock: WallClock, Sendable {
    private let value: Mutex<UInt64>

    public init(_ milliseconds: UInt64 = 1_750_000_000_000) { value = Mutex(milliseconds) }

    public func nowMilliseconds() -> UInt64 { value.withLock { $0 } }

    public func advance(milliseconds: UInt64) { value.withLock { $0 += milliseconds } }

    public func set(_ milliseconds: UInt64) { value.withLock { $0 = milliseconds } }
}
