extension DecodingError {
    /// A one-line account of where decoding failed, for error messages that name the field.
    var fieldDescription: String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch self {
        case .dataCorrupted(let context):
            return "invalid data at \(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
