import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncProtocol
import HPSyncStore

/// The exit codes of `hp-sync`, following sysexits.h so scripts and cron can tell failures apart.
///
/// Every error a command throws goes through `ExitStatus.of(_:)`; add new error types there.
public enum ExitStatus: Int32, Sendable {
    /// Success.
    case ok = 0
    /// `verify` found problems (the store is readable but not clean).
    case verifyFoundProblems = 1
    /// EX_USAGE: the command line was wrong (unknown option, missing argument, bad value).
    case usage = 64
    /// EX_DATAERR: input data was wrong: a malformed or unknown key, a non-image file, a bad import.
    case dataError = 65
    /// EX_NOINPUT: an input file (or the store itself) does not exist or cannot be read.
    case noInput = 66
    /// EX_UNAVAILABLE: a peer could not be reached.
    case unavailable = 69
    /// EX_SOFTWARE: an internal error (a bug, or a damaged database).
    case software = 70
    /// EX_CANTCREAT: an output file or the store could not be created (or already exists).
    case cannotCreate = 73
    /// EX_IOERR: reading or writing a file failed.
    case ioError = 74
    /// EX_TEMPFAIL: the store is locked by another process; try again later.
    case temporaryFailure = 75
    /// EX_PROTOCOL: a peer broke the sync protocol.
    case protocolError = 76
    /// EX_NOPERM: a peer refused us, or we refused it (permission or authentication).
    case permissionDenied = 77

    /// The exit status for an error of hp-sync's own modules, or nil for anything else (argument
    /// parser errors are usage errors; `HPSyncCommand.report` decides the rest).
    public static func of(_ error: any Error) -> ExitStatus? {
        switch error {
        case let error as StoreError: return of(error)
        case let error as HomepwnerError: return of(error)
        case is ItemKeyError, is NodeIDError: return .dataError
        case is VerifyFoundProblems: return .verifyFoundProblems
        case let error as CommandFailure: return error.status
        case let error as TLSError: return of(error)
        case let error as SyncError: return of(error)
        case is ProtocolError: return .protocolError
        case let error as ConnectError: return of(error)
        default: return nil
        }
    }

    static func of(_ error: StoreError) -> ExitStatus {
        switch error {
        case .noStore, .missingImageFile, .missingImportFile, .missingImportImage: return .noInput
        case .storeExists, .cannotCreate: return .cannotCreate
        case .io: return .ioError
        case .busy: return .temporaryFailure
        case .database, .newerSchema: return .software
        case .stagingOverflow, .invalidRecord: return .protocolError
        case .invalidKey, .unknownKey, .alreadyDeleted, .keyExists, .ambiguousPrefix, .prefixTooShort, .invalidName,
            .invalidSerial, .invalidPeerName, .peerExists, .unknownPeer, .notAnImage, .imageTooLarge, .digestMismatch,
            .invalidImport:
            return .dataError
        }
    }
}

extension ExitStatus {
    static func of(_ error: HomepwnerError) -> ExitStatus {
        switch error {
        case .missingFolder, .nothingToImport: return .noInput
        case .malformed, .conflict, .cannotExport: return .dataError
        case .cannotWrite: return .cannotCreate
        }
    }

    static func of(_ error: TLSError) -> ExitStatus {
        switch error {
        case .identityMissing: return .noInput
        case .identityExists: return .cannotCreate
        case .insecureKeyPermissions, .peerMismatch, .noPeerCertificate, .handshakeFailed: return .permissionDenied
        case .invalidIdentity, .openSSL: return .software
        case .fileSystem: return .ioError
        case .resolveFailed, .connectFailed, .timedOut, .connectionReset, .unexpectedEOF, .io, .closed:
            return .unavailable
        case .bindFailed: return .unavailable
        case .protocolFailure: return .protocolError
        }
    }

    static func of(_ error: SyncError) -> ExitStatus {
        switch error {
        case .refusedByPeer(let peerError):
            switch peerError.code {
            case .notAuthorized, .readOnly, .nodeIDMismatch: return .permissionDenied
            case .busy, .shuttingDown, .internalError: return .temporaryFailure
            case .incompatibleVersion, .protocolViolation, .limit, .badData, .unspecified: return .protocolError
            }
        case .protocolViolation, .imageDigestMismatch, .imageTooLarge: return .protocolError
        case .nodeIDMismatch: return .permissionDenied
        }
    }

    static func of(_ error: ConnectError) -> ExitStatus {
        switch error {
        case .badAddress, .peerWithoutAddress: return .usage
        case .unknownServer, .knownNodeAtNewAddress: return .permissionDenied
        }
    }
}

/// Thrown by `verify` when problems remain, so the process exits with status 1.
struct VerifyFoundProblems: Error, CustomStringConvertible {
    var count: Int
    var description: String {
        "verify found \(count) problem\(count == 1 ? "" : "s") (listed above); run `hp-sync verify --repair`, "
            + "then re-set or re-pull the images it still lists"
    }
}

/// A command's own failure with an explicit status and message.
struct CommandFailure: Error, CustomStringConvertible {
    var status: ExitStatus
    var description: String
}
