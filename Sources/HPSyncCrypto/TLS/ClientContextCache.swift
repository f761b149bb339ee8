import Foundation

/// The client `TLSContext` of one identity, made once and shared by its connections. Making a
/// context (`SSL_CTX_new` and the settings) is OpenSSL's largest step in a pull after parsing
/// the key (5 M instructions), and OpenSSL allows `SSL_new` from several threads on one
/// configured context.
final class ClientContextCache: @unchecked Sendable {
    private let lock = NSLock()
    private var context: TLSContext?

    /// The context, made for `identity` on the first call.
    func context(for identity: NodeIdentity) throws(TLSError) -> TLSContext {
        lock.lock()
        defer { lock.unlock() }
        if let context { return context }
        let made = try TLSContext(identity: identity, role: .client)
        context = made
        return made
    }
}
