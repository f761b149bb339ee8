import HPSyncModel

/// One item as an edition of the Homepwner app stored it, converted to the store's units.
public struct HomepwnerItem: Equatable, Sendable {
    public var key: ItemKey
    /// The key exactly as the file wrote it (the image file is named by this text).
    public var keyText: String
    public var name: String
    public var serialNumber: String?
    public var valueInDollars: Int64
    /// Milliseconds since 1970, rounded from the app's seconds since 2001.
    public var dateCreatedMilliseconds: Int64
    /// The Core Data edition's asset type label (`BNRAssetType.label`), if the item had one.
    public var assetType: String?

    public init(
        key: ItemKey, keyText: String? = nil, name: String, serialNumber: String? = nil, valueInDollars: Int64 = 0,
        dateCreatedMilliseconds: Int64, assetType: String? = nil
    ) {
        self.key = key
        self.keyText = keyText ?? key.rawValue
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
        self.dateCreatedMilliseconds = dateCreatedMilliseconds
        self.assetType = assetType
    }
}

/// The app's dates: seconds since 2001-01-01 UTC (NSDate's reference date) as a Double.
enum ReferenceDate {
    /// Seconds from 1970-01-01 to 2001-01-01.
    static let offsetSeconds: Int64 = 978_307_200

    /// Milliseconds since 1970, rounded to the nearest millisecond; nil for NaN, infinities and
    /// dates beyond ±100,000 years.
    static func milliseconds(fromReferenceSeconds seconds: Double) -> Int64? {
        // Scale first and add the offset as an integer, so no precision is lost to the offset.
        let scaled = (seconds * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 3.2e15 else { return nil }
        return Int64(scaled) + offsetSeconds * 1000
    }

    /// Seconds since 2001 for milliseconds since 1970 (exact to the millisecond on the way back).
    /// A date near Int64's limits (a row from a broken build) is approximate, never a trap.
    static func referenceSeconds(fromMilliseconds milliseconds: Int64) -> Double {
        let (difference, overflow) = milliseconds.subtractingReportingOverflow(offsetSeconds * 1000)
        return overflow ? (Double(milliseconds) - Double(offsetSeconds) * 1000) / 1000 : Double(difference) / 1000
    }
}

/// Which edition of the app wrote a file.
public enum HomepwnerEdition: String, Sendable, CaseIterable {
    /// `items.archive` of `BNRItem`s with `itemKey` (Objective-C editions).
    case objectiveC = "BNRItem archive (Objective-C)"
    /// `items.archive` of `BNRItem`s with `imageKey` and `thumbnailData` (3rd edition).
    case objectiveCImageKey = "BNRItem archive with imageKey (3rd edition)"
    /// `items.archive` of `Homepwner.Item`s (Swift editions).
    case swift = "Item archive (Swift)"
    /// `items.plist`, Codable `[Item]` (LootLogger edition).
    case lootLogger = "LootLogger plist"
    /// `store.data` / `items.data`, a Core Data SQLite store.
    case coreData = "Core Data store"
}
