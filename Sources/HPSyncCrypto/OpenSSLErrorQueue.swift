internal import CHPSyncOpenSSL

/// Reads and clears OpenSSL's thread-local error queue, so errors carry its text.
enum OpenSSLErrorQueue {
    /// Drains the queue into one line: "error:0A000086:SSL routines::certificate verify failed; ...".
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error reported" : messages.joined(separator: "; ")
    }

    /// Empties the queue so a later failure does not report stale errors.
    static func clear() {
        ERR_clear_error()
    }
}
