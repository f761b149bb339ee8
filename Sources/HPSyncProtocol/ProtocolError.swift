/// A peer broke the protocol; each case names what arrived and what was expected.
public enum ProtocolError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A frame header names a type this version does not define.
    case unknownFrameType(UInt8)
    /// A frame's length is zero where data is required, or above the limit for its type.
    case frameTooLarge(type: String, length: Int, limit: Int)
    case emptyFrame(type: String)
    /// The payload is not a valid protobuf `Envelope`.
    case undecodableMessage(String)
    /// The envelope's body is missing or a kind this version does not know.
    case unknownMessage
    /// A field failed validation (bad key, wrong digest length, text too long...).
    case invalidField(message: String, field: String, problem: String)
    /// A repeated field holds more elements than allowed.
    case tooMany(message: String, field: String, count: Int, limit: Int)
    /// A message arrived where the conversation does not allow it.
    case unexpectedMessage(got: String, expected: String)
    /// The peer closed the connection in the middle of the conversation.
    case prematureEOF(expected: String)
    /// The peer said something valid but contradictory (seq going backwards, unrequested key...).
    case violation(String)
    /// The peer used something a later protocol version defines (an unknown Hello intent).
    case unsupported(String)

    public var description: String {
        switch self {
        case .unknownFrameType(let type):
            return
                "protocol error: unknown frame type 0x\(String(type, radix: 16)) (peer speaks another protocol or the stream is corrupt)"
        case .frameTooLarge(let type, let length, let limit):
            return "protocol error: \(type) frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case .emptyFrame(let type):
            return "protocol error: empty \(type) frame"
        case .undecodableMessage(let detail):
            return "protocol error: message is not a valid protobuf Envelope (\(detail))"
        case .unknownMessage:
            return "protocol error: message of an unknown type (peer runs a newer, incompatible protocol?)"
        case .invalidField(let message, let field, let problem):
            return "protocol error: \(message).\(field) \(problem)"
        case .tooMany(let message, let field, let count, let limit):
            return "protocol error: \(message).\(field) holds \(count) elements, the limit is \(limit)"
        case .unexpectedMessage(let got, let expected):
            return "protocol error: received \(got) while expecting \(expected)"
        case .prematureEOF(let expected):
            return "protocol error: connection closed by the peer while expecting \(expected)"
        case .violation(let detail):
            return "protocol error: \(detail)"
        case .unsupported(let detail):
            return "incompatible protocol: \(detail)"
        }
    }

    /// The wire code to report this error to the peer with.
    public var code: WireErrorCode {
        switch self {
        case .frameTooLarge, .tooMany: return .limit
        case .invalidField: return .badData
        case .unsupported: return .incompatibleVersion
        default: return .protocolViolation
        }
    }
}
