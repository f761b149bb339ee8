import Foundation
import HPSyncModel
import HPSyncStore

/// `--json` output: one JSON document on stdout, the text exactly as stored.
extension Output {
    /// The message of the last `hp-sync: error:` line, for the JSON error object. Written once,
    /// by the main thread, just before the process exits.
    nonisolated(unsafe) static var lastError: String?

    /// Writes `value` as pretty-printed JSON with sorted keys, then a newline.
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        writeJSON(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
    }

    /// A failed command run with `--json` also says why on stdout, so a script reading stdout
    /// alone still gets a document: `{"error": {"code": 66, "message": "..."}}`.
    static func jsonError(code: Int32) {
        struct Failure: Encodable {
            var error: Body
            struct Body: Encodable {
                var code: Int32
                var message: String
            }
        }
        try? json(Failure(error: .init(code: code, message: lastError ?? "failed with exit code \(code)")))
    }

    /// Whether the command line asks for JSON (before any `--`).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }

    /// Milliseconds since 1970 as the ISO 8601 text the exports use, or nil.
    static func isoDate(_ milliseconds: Int64?) -> String? {
        milliseconds.map { DateText.iso8601(milliseconds: $0) }
    }
}
