import HPSyncModel

/// What a client wants from a session: pull or push changes, or (version 2) join the server's
/// peers by redeeming an invitation.
public enum SyncIntent: String, Sendable, Equatable {
    case pull, push, join
    /// Version 4: the client reads and writes a blind store's sealed entries.
    case blind

    /// The direction changes flow in; nil for a join, which moves no items, and for a blind
    /// session, which moves sealed entries both ways.
    public var direction: SyncDirection? {
        switch self {
        case .pull: return .pull
        case .push: return .push
        case .join, .blind: return nil
        }
    }

    /// The lowest protocol version that defines this intent.
    public var minimumVersion: UInt32 {
        switch self {
        case .pull, .push: return 1
        case .join: return 2
        case .blind: return ProtocolLimits.blindVersion
        }
    }
}

/// The validated contents of a Hello.
public struct HelloMessage: Equatable, Sendable {
    public var minVersion: UInt32
    public var maxVersion: UInt32
    public var nodeID: NodeID
    public var storeID: StoreID
    public var intent: SyncIntent
    /// The server's choice for the session; 0 in the client's Hello.
    public var version: UInt32
    public var software: String
    /// Version 2, a client's push only: preview the push; the server applies nothing.
    public var dryRun: Bool
    /// The sender's wall clock when it sent the Hello (milliseconds since 1970); nil when the
    /// peer did not say (older versions). Any version.
    public var clockMilliseconds: UInt64?
    /// Version 4: the inventory key, told only to a trusted peer (Protocol.md 5.8); nil when not told.
    public var inventoryKey: [UInt8]?
    /// Version 4: the sender's store is blind.
    public var blind: Bool = false

    public init(
        minVersion: UInt32 = ProtocolLimits.minVersion, maxVersion: UInt32 = ProtocolLimits.maxVersion,
        nodeID: NodeID, storeID: StoreID, intent: SyncIntent, version: UInt32 = 0, software: String,
        dryRun: Bool = false, clockMilliseconds: UInt64? = nil
    ) {
        self.clockMilliseconds = clockMilliseconds
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.nodeID = nodeID
        self.storeID = storeID
        self.intent = intent
        self.version = version
        self.software = software
        self.dryRun = dryRun
    }
}

/// One line of a manifest: the source's current version of a key and its change number.
/// It is exactly the change-feed entry, which the wire shares with the store (HPSyncModel).
public typealias ManifestEntry = ChangeEntry

/// A page of the source's change feed in ascending seq.
public struct ManifestPage: Equatable, Sendable {
    public var entries: [ManifestEntry]
    public var throughSeq: Int64
    public var isFinal: Bool
    /// Version 2: set on every page of a full listing by a source that collected tombstones the
    /// sink has not seen; nil otherwise (Protocol.md section 6.1).
    public var reconcileHorizon: VersionStamp?
    /// Version 2, first page only: how many tombstones the session will list (0 otherwise).
    public var tombstonesAhead: Int64
    /// Version 2, first page only: how many entries the session will list (0 otherwise).
    public var entriesAhead: Int64 = 0
    /// Version 2, first page only: the bytes of the images of the live entries the session will
    /// list, for progress by bytes (0 otherwise, or from a source that does not say).
    public var imageBytesAhead: Int64 = 0

    public init(
        entries: [ManifestEntry], throughSeq: Int64, isFinal: Bool, reconcileHorizon: VersionStamp? = nil,
        tombstonesAhead: Int64 = 0
    ) {
        self.entries = entries
        self.throughSeq = throughSeq
        self.isFinal = isFinal
        self.reconcileHorizon = reconcileHorizon
        self.tombstonesAhead = tombstonesAhead
    }
}

/// Version 3: a manifest entry the sink refused to apply, and why, as PageDone reports it.
public struct PageRefusal: Equatable, Sendable {
    public var key: ItemKey
    public var reason: String

    public init(key: ItemKey, reason: String) {
        self.key = key
        self.reason = reason
    }
}

/// An image the sink asks for, by the item it belongs to and the digest it expects.
public struct ImageWanted: Equatable, Sendable, Hashable {
    public var key: ItemKey
    public var digest: SHA256Digest

    public init(key: ItemKey, digest: SHA256Digest) {
        self.key = key
        self.digest = digest
    }
}

/// Announces the chunks of one image.
public struct ImageHeaderMessage: Equatable, Sendable {
    public var key: ItemKey
    public var digest: SHA256Digest
    public var size: Int64
    public var missing: Bool

    public init(key: ItemKey, digest: SHA256Digest, size: Int64, missing: Bool = false) {
        self.key = key
        self.digest = digest
        self.size = size
        self.missing = missing
    }
}

/// Counts a side reports about a session.
public struct ChangeCounts: Equatable, Sendable, Codable {
    public var inserted = 0
    public var updated = 0
    public var deleted = 0
    public var tombstones = 0
    public var skipped = 0
    public var refused = 0
    public var images = 0
    public var imageBytes: Int64 = 0
    public var entries = 0
    public var records = 0

    public init() {}

    public static func + (lhs: ChangeCounts, rhs: ChangeCounts) -> ChangeCounts {
        var sum = lhs
        sum.inserted += rhs.inserted
        sum.updated += rhs.updated
        sum.deleted += rhs.deleted
        sum.tombstones += rhs.tombstones
        sum.skipped += rhs.skipped
        sum.refused += rhs.refused
        sum.images += rhs.images
        sum.imageBytes += rhs.imageBytes
        sum.entries += rhs.entries
        sum.records += rhs.records
        return sum
    }
}

/// The error codes of the wire protocol (Protocol.md §Errors).
public enum WireErrorCode: Int, Sendable, Equatable {
    case unspecified = 0
    case incompatibleVersion = 1
    case notAuthorized = 2
    case readOnly = 3
    case busy = 4
    case protocolViolation = 5
    case limit = 6
    case internalError = 7
    case shuttingDown = 8
    case nodeIDMismatch = 9
    case badData = 10
    case invitation = 11

    /// The name Protocol.md and hpsync.proto use, e.g. `ERROR_READ_ONLY`.
    public var name: String {
        switch self {
        case .unspecified: return "ERROR_UNSPECIFIED"
        case .incompatibleVersion: return "ERROR_INCOMPATIBLE_VERSION"
        case .notAuthorized: return "ERROR_NOT_AUTHORIZED"
        case .readOnly: return "ERROR_READ_ONLY"
        case .busy: return "ERROR_BUSY"
        case .protocolViolation: return "ERROR_PROTOCOL"
        case .limit: return "ERROR_LIMIT"
        case .internalError: return "ERROR_INTERNAL"
        case .shuttingDown: return "ERROR_SHUTTING_DOWN"
        case .nodeIDMismatch: return "ERROR_NODE_ID_MISMATCH"
        case .badData: return "ERROR_BAD_DATA"
        case .invitation: return "ERROR_INVITATION"
        }
    }
}

/// An Error message: why the sender is ending the session.
public struct PeerErrorMessage: Equatable, Sendable {
    public var code: WireErrorCode
    public var message: String

    public init(code: WireErrorCode, message: String) {
        self.code = code
        self.message = message
    }
}

/// Version 2: the joiner's proof that it holds an invitation's secret.
public struct JoinRequestMessage: Equatable, Sendable {
    public var secret: InvitationSecret
    /// The name the joiner suggests for itself (at most 64 bytes, any text; the server sanitizes it).
    public var name: String

    public init(secret: InvitationSecret, name: String) {
        self.secret = secret
        self.name = name
    }
}

/// Every message of protocol versions 1, 2 and 3, validated.
public enum Message: Equatable, Sendable {
    case hello(HelloMessage)
    case error(PeerErrorMessage)
    case pullRequest(checkpointStore: StoreID?, sinceSeq: Int64)
    case manifestPage(ManifestPage)
    case fetchRecords([ItemKey])
    case records([Item])
    case fetchImages([ImageWanted])
    case imageHeader(ImageHeaderMessage)
    /// `durableSeq` is version 2's: pages through it are durably applied (0 when absent).
    /// `firstHeldSeq` and `refusals` are version 3's: the first entry of the session the sink
    /// did not apply (0: none), which a source's checkpoint of the sink stays below, and the
    /// entries of this page it refused.
    case pageDone(
        throughSeq: Int64, counts: ChangeCounts, durableSeq: Int64 = 0, firstHeldSeq: Int64 = 0,
        refusals: [PageRefusal] = [])
    case done(ChangeCounts)
    /// Version 2, client to server after a JOIN Hello.
    case joinRequest(JoinRequestMessage)
    /// Version 2, the server's last message of a successful join: what the joiner may do and
    /// the (valid peer) name the server lists it under.
    case joinAccepted(allow: PeerPermission, name: String)
    /// Version 3, a pulling client before its PullRequest: images by digest, outside the manifest.
    case fetchImagesByDigest([ImageWanted])
    /// Version 3, a pulling client in place of its PullRequest: no changes wanted; Done follows.
    case endSession
    /// Version 4 (INTENT_BLIND), client: the head, answered by `blindHead`.
    case blindHeadRequest
    case blindHead(BlindHeadMessage)
    /// Client: the entries with seq > `sinceSeq`, answered by `blindListPage`s up to a final one.
    case blindList(sinceSeq: Int64)
    case blindListPage(BlindListPage)
    /// Client: these records, answered by `blindObjects` messages up to a final one.
    case blindGet([BlindID])
    case blindObjects([BlindObject], isFinal: Bool)
    /// Client: a sealed photo (or, version 6, a pack), answered by `blindPhotoHeader` and its
    /// IMAGE_CHUNK frames.
    case blindGetPhoto(BlindID, kind: SealedStreamKind)
    /// Either way: the IMAGE_CHUNK frames of a sealed photo or pack follow (a client's upload,
    /// or the server's answer to `blindGetPhoto`).
    case blindPhotoHeader(BlindPhotoHeader)
    /// Client (read-write): store these entries where they beat the store's; `blindPutDone`.
    case blindPut([BlindObject])
    /// Server: a BlindPut, an uploaded photo or a BlindSetHead is durable.
    case blindPutDone(applied: Int64, stale: Int64, throughSeq: Int64)
    /// Client (read-write): replace the head if its epoch is still `expected`; answered by
    /// `blindPutDone`, or by `blindHead` (the current one) when the epoch has moved on.
    case blindSetHead(expected: Int64, head: BlindHeadMessage)

    /// The message's name as Protocol.md spells it, for errors and logs.
    public var name: String {
        switch self {
        case .hello: return "Hello"
        case .error: return "Error"
        case .pullRequest: return "PullRequest"
        case .manifestPage: return "ManifestPage"
        case .fetchRecords: return "FetchRecords"
        case .records: return "Records"
        case .fetchImages: return "FetchImages"
        case .imageHeader: return "ImageHeader"
        case .pageDone: return "PageDone"
        case .done: return "Done"
        case .blindHeadRequest: return "BlindHeadRequest"
        case .blindHead: return "BlindHead"
        case .blindList: return "BlindList"
        case .blindListPage: return "BlindListPage"
        case .blindGet: return "BlindGet"
        case .blindObjects: return "BlindObjects"
        case .blindGetPhoto: return "BlindGetPhoto"
        case .blindPhotoHeader: return "BlindPhotoHeader"
        case .blindPut: return "BlindPut"
        case .blindPutDone: return "BlindPutDone"
        case .blindSetHead: return "BlindSetHead"
        case .joinRequest: return "JoinRequest"
        case .joinAccepted: return "JoinAccepted"
        case .fetchImagesByDigest: return "FetchImagesByDigest"
        case .endSession: return "EndSession"
        }
    }
}
