import Foundation

/// A value shared between test threads under a lock, with a wait for a condition on it.
public final class Locked<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    public var current: Value { withLock { $0 } }

    public func set(_ newValue: Value) { withLock { $0 = newValue } }

    /// Waits until `predicate` holds or `timeout` passes; returns whether it holds.
    @discardableResult
    public func wait(timeout: TimeInterval = .infinity, until predicate: (Value) -> Bool) -> Bool {
        let deadline = timeout.isFinite ? Date(timeIntervalSinceNow: timeout) : nil
        condition.lock()
        defer { condition.unlock() }
        while !predicate(value) {
            // Foundation's wait(until: .distantFuture) overflows on Linux: no deadline, no date.
            guard let deadline else {
                condition.wait()
                continue
            }
            if !condition.wait(until: deadline) { return predicate(value) }
        }
        return true
    }
}
