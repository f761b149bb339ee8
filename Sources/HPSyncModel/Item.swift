/// What an item row says about its image: the SHA-256 of the bytes and their count.
public struct ImageRef: Hashable, Sendable, Codable {
    public var digest: SHA256Digest
    public var size: Int64

    public init(digest: SHA256Digest, size: Int64) {
        self.digest = digest
        self.size = size
    }
}

/// One version of one inventory item, as the store keeps it and as peers exchange it.
///
/// A tombstone (`deleted == true`) keeps key and version and clears everything else, so a
/// deletion replicates and competes by the merge rule like any edit.
public struct Item: Hashable, Sendable, Codable {
    public var key: ItemKey
    public var name: String
    public var serialNumber: String?
    public var valueInDollars: Int64
    /// Creation time in milliseconds since 1970 UTC (what the app's `Date` keeps, to the ms).
    public var dateCreatedMilliseconds: Int64
    public var image: ImageRef?
    public var version: Version
    public var deleted: Bool
    /// The item's whole merge state (Protocol.md 5.9) when it says more than this record does:
    /// fields at versions of their own, open conflicts, the fields a tombstone keeps. nil for a
    /// whole record. Behind a reference: most items have none, and batches hold thousands.
    ///
    /// An item read to be sent holds its state in the compact form only (`mergeFields`), which
    /// is read here on demand; that form comes from a store's rows or a peer's checked record.
    public var mergeState: ItemMergeState? {
        get {
            switch mergeBox?.content {
            case nil: nil
            case .state(let state, _): state
            case .fields(let fields): try? fields.state(of: recordOnly)
            }
        }
        set { mergeBox = newValue.map { MergeStateBox(.state($0, joined: false)) } }
    }
    /// The merge state in its compact form (`MergeFields`), as a record carries it: the form
    /// the item was read in, else made from `mergeState`; nil for a whole record. Setting it
    /// keeps that form, unread, for the wire.
    public var mergeFields: MergeFields? {
        get {
            switch mergeBox?.content {
            case nil: nil
            case .state(let state, let joined): MergeFields(state, joined: joined)
            case .fields(let fields): fields
            }
        }
        set { mergeBox = newValue.map { MergeStateBox(.fields($0)) } }
    }
    /// Whether the contents may not be the record the item's version's edit made: a field-merge
    /// join put them together (Protocol.md 5.9 "Older peers"). Only a state with a merge state
    /// can be joined so: setting it on a whole record does nothing. Not part of the item's
    /// equality, as it is not part of the merge digest: two nodes with equal states may differ.
    public var joined: Bool {
        get {
            switch mergeBox?.content {
            case nil: false
            case .state(_, let joined): joined
            case .fields(let fields): fields.joined
            }
        }
        set {
            switch mergeBox?.content {
            case nil: break
            case .state(let state, _): mergeBox = MergeStateBox(.state(state, joined: newValue))
            case .fields(var fields):
                fields.joined = newValue
                mergeBox = MergeStateBox(.fields(fields))
            }
        }
    }
    private var mergeBox: MergeStateBox?

    /// This item without its merge state: the whole record its fields show.
    private var recordOnly: Item {
        var record = self
        record.mergeBox = nil
        return record
    }

    private enum CodingKeys: String, CodingKey {
        case key, name, serialNumber, valueInDollars, dateCreatedMilliseconds, image, version, deleted
    }

    public init(
        key: ItemKey, name: String, serialNumber: String? = nil, valueInDollars: Int64 = 0,
        dateCreatedMilliseconds: Int64, image: ImageRef? = nil, version: Version, deleted: Bool = false
    ) {
        self.key = key
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
        self.dateCreatedMilliseconds = dateCreatedMilliseconds
        self.image = image
        self.version = version
        self.deleted = deleted
    }

    /// The tombstone that replaces `key` at `version`.
    public static func tombstone(key: ItemKey, version: Version) -> Item {
        Item(key: key, name: "", dateCreatedMilliseconds: 0, version: version, deleted: true)
    }
}

/// An item's merge state behind a reference, read or in its compact form, compared by the
/// state only.
private final class MergeStateBox: Hashable, Sendable {
    enum Content {
        case state(ItemMergeState, joined: Bool)
        case fields(MergeFields)
    }

    let content: Content
    init(_ content: Content) { self.content = content }

    /// Equal states have equal compact forms (the form is written one way): two read states
    /// compare as states, anything else by the compact form's bytes.
    static func == (lhs: MergeStateBox, rhs: MergeStateBox) -> Bool {
        if case .state(let left, _) = lhs.content, case .state(let right, _) = rhs.content { return left == right }
        return lhs.compact == rhs.compact
    }

    func hash(into hasher: inout Hasher) { hasher.combine(compact) }

    private var compact: [AnyHashable] {
        switch content {
        case .state(let state, _):
            let fields = MergeFields(state, joined: false)
            return [AnyHashable(fields?.body), AnyHashable(fields?.conflicts)]
        case .fields(let fields): return [AnyHashable(Optional(fields.body)), AnyHashable(Optional(fields.conflicts))]
        }
    }
}

/// Limits every item must respect, whoever made it: the CLI, an import or a peer.
public enum ItemLimits {
    /// The longest name, in UTF-8 bytes.
    public static let maxNameBytes = 1024
    /// The longest serial number, in UTF-8 bytes.
    public static let maxSerialBytes = 256
    /// The default largest image; a store may be configured lower or higher.
    public static let defaultMaxImageBytes: Int64 = 64 << 20
    /// The values an item may take, in whole dollars: a signed 32-bit integer's, what the
    /// Objective-C Homepwner's `valueInDollars` holds (so every file of the app imports and
    /// every value exports back to it), negative ones too (a debt, a credit). No household or
    /// small business owns one thing worth two billion dollars; the sum of 4.29 billion such
    /// items still fits an Int64 (a store that large would hold terabytes of rows alone); and a
    /// total of up to four million of them stays exact in a double (JavaScript's numbers,
    /// SQLite's `total()`).
    public static let valueInDollars: ClosedRange<Int64> = Int64(Int32.min)...Int64(Int32.max)
    /// What a refusal says about the range, for every way in.
    public static let valueRangeText = "-2147483648...2147483647 (a signed 32-bit integer, as Homepwner keeps)"
}
