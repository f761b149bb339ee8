import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTransfer
import HPSyncWeb

/// The exit codes of `hp-sync`, following sysexits.h so scripts and cron can tell failures apart.
///
/// Codes below 64 mean the command did its work and has something to report; 64 and above mean
/// it failed. The values are a public interface (cron wrappers, monitoring): never renumber one.
/// Every error a command throws goes through `ExitStatus.of(_:)`; add new error types there.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success.
    case ok = 0
    /// A check found problems: `verify` (the store is readable but not clean) or
    /// `status --check` (a peer's last successful sync is older than allowed).
    case verifyFoundProblems = 1
    /// A sync completed, but some records were refused or withheld, or some images could not be
    /// healed (listed on stderr); they are retried next run.
    /// An import applied every record but recorded images as missing (an export without images);
    /// an export or import left out images whose bytes were missing or damaged.
    case completedWithWarnings = 3
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
    /// Another pull, push or sync holds this store's lock; the message names its PID.
    case locked = 79
    /// A safety guard refused the run (a pull that would delete most of the backup, or a `gc`
    /// that a never-synced peer holds back); nothing was applied, and the message says how to override.
    case refusedByGuard = 80
    /// A blind peer served sealed data that failed authentication, an older copy than this node
    /// saw there, or entries the trusted nodes' head does not name (Protocol.md 5.8).
    case blindPeerDistrusted = 81

    /// One line for the exit-code table (`hp-sync exit-codes` and the README).
    public var meaning: String {
        switch self {
        case .ok: return "success"
        case .verifyFoundProblems:
            return "a check found problems: `verify` (listed on stdout) or `status --check` (a stale peer)"
        case .completedWithWarnings:
            return
                "completed with warnings: a sync whose peer refused or withheld some records, or could not supply "
                + "images missing here (listed on stderr), the rest applied; an import without images, or an export "
                + "or import that left damaged or missing images out (they are recorded as missing)"
        case .usage:
            return "usage error: unknown option, bad value, a peer name or invitation ID that names nothing "
                + "(`pull primray`: a bare word is a peer name, never a host), bad address"
        case .dataError: return "bad input data: malformed or unknown key, non-image file, bad import file"
        case .noInput: return "missing input: no store here, missing file or folder"
        case .unavailable:
            return "peer unreachable or timed out: cannot resolve, connect, or it stopped answering; `serve` or "
                + "`web` cannot listen (port in use)"
        case .software: return "internal error (a bug) or damaged database (please report it; run `hp-sync verify`)"
        case .cannotCreate:
            return "cannot create: the store or an output file exists or cannot be written, or a blind peer's "
                + "head can name no more packs"
        case .ioError:
            return "local store or disk error: the disk is full, the store is read-only or not ours to write, "
                + "or reading or writing it failed (the message names the path)"
        case .temporaryFailure:
            return "temporary failure: store busy; server busy, shutting down, out of disk, or it closed the "
                + "connection during the TLS handshake (shedding load); try again later (`--retries`)"
        case .protocolError:
            return "protocol or version mismatch: the peer broke the protocol or speaks no common version"
        case .permissionDenied:
            return "authentication or authorization refused: untrusted server, unknown client, read-only peer "
                + "pushing, node ID mismatch, insecure key file, invitation refused or for another server"
        case .locked: return "locked: another pull/push/sync holds the store's lock (its PID is named); try later"
        case .refusedByGuard:
            return "refused by a safety guard (mass deletion; gc held back by a never-synced peer); nothing "
                + "beyond the guard's limit applied; override with `--allow-mass-delete` or `gc --force`"
        case .blindPeerDistrusted:
            return "a blind peer failed a check: sealed data altered, truncated, swapped or replayed, or a pack "
                + "its head names not served (not applied; the rest of the sync was), an older copy than this "
                + "node saw there (rollback), or entries its head does not name (nothing applied or sent); see "
                + "README, \"Off-site backup\""
        }
    }

    /// The table as `hp-sync exit-codes` prints it and the README shows it.
    public static var markdownTable: String {
        "| code | meaning |\n|---|---|\n" + allCases.map { "| \($0.rawValue) | \($0.meaning) |\n" }.joined()
    }

    /// The exit status for an error of hp-sync's own modules, or nil for anything else (argument
    /// parser errors are usage errors; `HPSyncCommand.report` decides the rest).
    public static func of(_ error: any Error) -> ExitStatus? {
        switch error {
        case let error as StoreError: return of(error)
        case let error as HomepwnerError: return of(error)
        case is ItemKeyError, is NodeIDError: return .dataError
        case is VerifyFoundProblems: return .verifyFoundProblems
        case let error as CommandFailure: return error.status
        case WebError.cannotListen: return .unavailable
        case WebError.invalidListen: return .usage
        case let error as TLSError: return of(error)
        case let error as SyncError: return of(error)
        // A peer that vanishes mid-frame (killed, cable pulled) is unreachable, not a liar.
        case ProtocolError.prematureEOF: return .unavailable
        case is ProtocolError: return .protocolError
        case let error as ConnectError: return of(error)
        case let error as InterruptedRun: return of(error.underlying)
        case let error as SyncLockError: if case .held = error { return .locked } else { return .ioError }
        case is MassDeleteRefused, is GCRefused: return .refusedByGuard
        case is CompletedWithWarnings: return .completedWithWarnings
        case is StalePeers: return .verifyFoundProblems
        case let error as BlindError: return of(error)
        case SealingError.keyFileExists: return .cannotCreate
        case is SealingError: return .dataError
        default: return nil
        }
    }

    static func of(_ error: StoreError) -> ExitStatus {
        switch error {
        case .noStore, .storeIsAFile, .missingImageFile, .missingImportFile, .missingImportImage, .notInTrash:
            return .noInput
        // A name the person typed that names nothing here: the command line was wrong.
        case .unknownPeer, .unknownInvitation: return .usage
        case .storeExists, .cannotCreate: return .cannotCreate
        case .io, .diskFull, .notWritable: return .ioError
        case .busy: return .temporaryFailure
        case .database, .newerSchema: return .software
        case .stagingOverflow, .invalidRecord, .invalidBlindEntry: return .protocolError
        case .wrongKindOfStore: return .usage
        case .invalidKey, .unknownKey, .alreadyDeleted, .keyExists, .ambiguousPrefix, .prefixTooShort, .invalidName,
            .invalidSerial, .invalidValue, .invalidPeerName, .peerExists, .notAnImage, .imageTooLarge, .digestMismatch,
            .invalidImport, .ambiguousInvitation:
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
        case .handshakeInterrupted: return .temporaryFailure
        case .protocolFailure: return .protocolError
        }
    }

    static func of(_ error: SyncError) -> ExitStatus {
        switch error {
        case .refusedByPeer(let peerError):
            switch peerError.code {
            case .notAuthorized, .readOnly, .nodeIDMismatch, .invitation: return .permissionDenied
            case .busy, .shuttingDown, .internalError: return .temporaryFailure
            case .incompatibleVersion, .protocolViolation, .limit, .badData, .unspecified: return .protocolError
            }
        case .protocolViolation(.prematureEOF): return .unavailable
        case .protocolViolation, .imageDigestMismatch, .imageTooLarge, .needsReconciliation: return .protocolError
        case .nodeIDMismatch: return .permissionDenied
        }
    }

    static func of(_ error: ConnectError) -> ExitStatus {
        switch error {
        case .badAddress, .peerWithoutAddress, .unknownPeerName: return .usage
        case .unknownServer, .knownNodeAtNewAddress: return .permissionDenied
        }
    }
}

/// Thrown by `verify` when problems remain, so the process exits with status 1.
struct VerifyFoundProblems: Error, CustomStringConvertible {
    var count: Int
    var description: String {
        "verify found \(count) problem\(count == 1 ? "" : "s") (listed above); run `hp-sync verify --repair` "
            + "(with `--from PEER` to fetch missing or damaged images again), then re-set the images it still lists"
    }
}

/// A command's own failure with an explicit status and message.
extension ExitStatus {
    static func of(_ error: BlindError) -> ExitStatus {
        switch error {
        case .tampered, .rolledBack, .headMismatch: return .blindPeerDistrusted
        case .concurrentWrite: return .temporaryFailure
        case .noInventoryKey: return .permissionDenied
        case .tooManyPacks: return .cannotCreate
        }
    }
}

struct CommandFailure: Error, CustomStringConvertible {
    var status: ExitStatus
    var description: String
}

/// Thrown after a sync printed its results when some records were refused or withheld, or some
/// images could not be healed, so the process exits 3.
struct CompletedWithWarnings: Error, CustomStringConvertible {
    var refused: Int
    var withheld = 0
    /// Images missing or damaged here that the peer could not supply either.
    var unhealed = 0
    /// A dry run: nothing was applied.
    var preview = false
    var description: String {
        var parts: [String] = []
        if refused > 0 { parts.append("\(refused) record\(refused == 1 ? " was" : "s were") refused") }
        if withheld > 0 { parts.append("\(withheld) record\(withheld == 1 ? " was" : "s were") withheld") }
        if unhealed > 0 {
            parts.append("\(unhealed) image\(unhealed == 1 ? "" : "s") could not be fetched again")
        }
        // A preview applies nothing: it only says what a real run would refuse.
        let rest =
            preview ? ", the rest would be applied (this preview applied nothing)" : ", everything else was applied"
        return parts.joined(separator: " and ") + " (listed above)\(rest); "
            + "fix what each line says, the next run retries them"
    }
}
