import HPSyncStore
import Hummingbird

/// What the web app reports to a browser: each case an HTTP status and a message a person can
/// act on. Store errors are mapped here too, so no handler shows a raw error or a stack trace.
public enum WebError: Error, CustomStringConvertible, Equatable, Sendable {
    /// `hp-sync web` refused its `--listen` value.
    case invalidListen(String)
    /// `hp-sync web` could not listen where it was asked (the port in use, say).
    case cannotListen(String)
    case badRequest(String)
    case unauthorized
    case forbidden(String)
    case notFound(String)
    case tooLarge(String)
    case unsupportedMediaType(String)
    case busy(String)
    case internalError(String)

    public var description: String {
        switch self {
        case .invalidListen(let message), .cannotListen(let message), .badRequest(let message), .forbidden(let message),
            .notFound(let message),
            .tooLarge(let message), .unsupportedMediaType(let message), .busy(let message),
            .internalError(let message):
            message
        case .unauthorized:
            "This page needs the access token. Open the address that `hp-sync web` printed when it started "
                + "(it ends in ?token=...); the browser keeps the token in a cookie after that."
        }
    }

    var status: HTTPResponse.Status {
        switch self {
        case .invalidListen, .badRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .tooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .busy: .serviceUnavailable
        case .cannotListen, .internalError: .internalServerError
        }
    }

    var title: String {
        switch self {
        case .invalidListen, .badRequest: "That did not work"
        case .unauthorized: "Access token needed"
        case .forbidden: "Not allowed"
        case .notFound: "Not found"
        case .tooLarge: "Too large"
        case .unsupportedMediaType: "Not a photo"
        case .busy: "The store is busy"
        case .cannotListen, .internalError: "Something went wrong"
        }
    }

    /// The one message for a photo over the store's limit, wherever it is caught.
    static func photoTooLarge(limit: Int64) -> WebError {
        let size = limit >= 1 << 20 && limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return .tooLarge("The photo is larger than this store accepts (\(size)).")
    }

    /// The page for a store error. Paths in the store's messages (an upload's temporary file) are
    /// left out: they mean nothing to the person at the browser.
    static func from(_ error: StoreError) -> WebError {
        switch error {
        case .unknownKey, .invalidKey, .prefixTooShort, .ambiguousPrefix:
            .notFound("There is no such item. It may have been deleted here or by a sync.")
        case .alreadyDeleted:
            .notFound("That item has been deleted already; look for it in the trash on the Sync page.")
        case .notInTrash:
            .notFound("That version is no longer in the trash.")
        case .invalidName(let reason): .badRequest("The name is not valid: \(reason).")
        case .invalidSerial(let reason): .badRequest("The serial number is not valid: \(reason).")
        case .invalidValue(let value):
            .badRequest(
                "The value \(value) is out of range: values are whole dollars from -2,147,483,648 to 2,147,483,647.")
        case .notAnImage:
            .unsupportedMediaType("The file is not a photo hp-sync keeps: send a JPEG, PNG, HEIC or GIF.")
        case .imageTooLarge(_, _, let limit): photoTooLarge(limit: limit)
        case .busy:
            .busy("Another command or a sync is writing to the store; try again in a moment.")
        default:
            .internalError("The store reported a problem: \(error). Nothing was half-changed; see `hp-sync verify`.")
        }
    }
}
