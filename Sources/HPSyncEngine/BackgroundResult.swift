import Dispatch

/// A throwing computation started on a thread of its own at once, its result waited for later:
/// work that overlaps with what the caller does meanwhile (a pull's image check with the TCP
/// connect, the TLS handshake and the Hellos; the TLS identity with the store's opening).
public final class BackgroundResult<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchGroup()
    /// Written once by the work inside `done`; read only after waiting for it.
    private var result: Result<Value, any Error>?

    public init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global(qos: .userInitiated).async(group: done) {
            self.result = Result { try work() }
        }
    }

    /// The work's value or error, once it has ended.
    public func wait() throws -> Value {
        done.wait()
        guard let result else { preconditionFailure("the work ended without a result") }
        return try result.get()
    }

    /// Waits for the work to end, whatever its result. An owner that may leave without asking
    /// for the value (it failed first) calls this on the way out: the process may exit next, and
    /// its exit handlers (OpenSSL's, SQLite's callers') must not run under work still in flight.
    public func finish() {
        done.wait()
    }
}
