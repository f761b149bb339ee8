import Dispatch

/// A throwing computation started on a thread of its own at once, its result waited for later:
/// work that overlaps with what the caller does meanwhile (a pull's image check with the TCP
/// connect, the TLS handshake and the Hellos; the TLS identity with the store's opening).
///
/// The work never outlives its owner: dropping the value waits for it, also when the owner
/// leaves without asking (it failed first). The process may exit next, and its exit handlers
/// (OpenSSL's, SQLite's callers') must not run under work still in flight.
public final class BackgroundResult<Value: Sendable>: @unchecked Sendable {
    /// Written once by the work inside `done`; read only after waiting for it. Apart from this
    /// value, so that the work holds the outcome, not its owner.
    private final class Outcome: @unchecked Sendable {
        var result: Result<Value, any Error>?
    }

    private let done = DispatchGroup()
    private let outcome = Outcome()

    public init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global(qos: .userInitiated).async(group: done) { [outcome] in
            outcome.result = Result { try work() }
        }
    }

    deinit {
        done.wait()
    }

    /// The work's value or error, once it has ended.
    public func wait() throws -> Value {
        done.wait()
        guard let result = outcome.result else { preconditionFailure("the work ended without a result") }
        return try result.get()
    }
}
