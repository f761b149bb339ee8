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
}
