import Foundation
import GRDB
import HPSyncModel

/// How a browsing client (the web app) orders items.
public enum BrowseOrder: String, Sendable, CaseIterable {
    case name, value, date

    var sql: String {
        switch self {
        case .name: "name COLLATE NOCASE"
        case .value: "valueInDollars"
        case .date: "dateCreated"
        }
    }
}

/// One page of live items matching a search, in a chosen order, with the totals the page shows.
public struct BrowseQuery: Sendable, Equatable {
    /// Matched case-insensitively (ASCII) anywhere in the name or the serial number.
    public var search: String
    public var order: BrowseOrder
    public var descending: Bool
    /// Zero-based page number.
    public var page: Int
    public var pageSize: Int

    public init(
        search: String = "", order: BrowseOrder = .date, descending: Bool = true, page: Int = 0,
        pageSize: Int = 60
    ) {
        self.search = search
        self.order = order
        self.descending = descending
        self.page = max(0, page)
        self.pageSize = max(1, pageSize)
    }
}

/// What `browse` returns: the page's items, how many items match and what they are worth, and
/// the same for the whole inventory.
public struct BrowsePage: Sendable, Equatable {
    public var items: [Item]
    public var matching: Int
    public var matchingValue: DollarTotal
    public var total: Int
    public var totalValue: DollarTotal
}

/// Reads for browsing: paged, sorted, filtered. Every part comes from one read transaction, so
/// the counts and the page agree even while a pull commits beside them.
///
/// No index backs the orders: a page costs one scan of the live rows with a top-N sort (SQLite
/// keeps only offset + limit rows), measured by Scripts/bench-web at 100,000 items. Indexes on
/// name, value and date would make every pull and import write three more B-trees for a screen
/// that one person looks at.
extension Store {
    public func browse(_ query: BrowseQuery) throws -> BrowsePage {
        try read { db in
            var filter = "deleted = 0"
            var arguments: StatementArguments = []
            let needle = query.search.trimmingCharacters(in: .whitespacesAndNewlines)
            if !needle.isEmpty {
                let pattern = "%" + Self.escapeLike(needle) + "%"
                filter += " AND (name LIKE ? ESCAPE '\\' OR serialNumber LIKE ? ESCAPE '\\')"
                arguments += [pattern, pattern]
            }
            let totals = try Self.countAndValue(db, filter: "deleted = 0", arguments: [])
            let matched = needle.isEmpty ? totals : try Self.countAndValue(db, filter: filter, arguments: arguments)
            let direction = query.descending ? "DESC" : "ASC"
            let sql = """
                SELECT \(ItemRecord.selection) FROM item WHERE \(filter)
                ORDER BY \(query.order.sql) \(direction), key \(direction) LIMIT ? OFFSET ?
                """
            arguments += [query.pageSize, query.page * query.pageSize]
            var origins = OriginCache()
            var items: [Item] = []
            let cursor = try ItemRecord.fetchCursor(db, sql: sql, arguments: arguments)
            while let record = try cursor.next() { items.append(try record.item(origins: &origins)) }
            return BrowsePage(
                items: items, matching: matched.count, matchingValue: matched.value, total: totals.count,
                totalValue: totals.value)
        }
    }

    /// How many rows match `filter` and their values' exact total. A plain SUM overflows (an
    /// SQL error) with two values near Int64's limits, which rows written before the value range
    /// existed may hold; the halves of each value are summed apart instead (`DollarTotal`).
    private static func countAndValue(_ db: Database, filter: String, arguments: StatementArguments) throws
        -> (count: Int, value: DollarTotal)
    {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT count(*), COALESCE(SUM(valueInDollars >> 32), 0), COALESCE(SUM(valueInDollars & 4294967295), 0)
                FROM item WHERE \(filter)
                """, arguments: arguments)!
        return (row[0], DollarTotal(sumOfHighHalves: row[1], sumOfLowHalves: row[2]))
    }

    /// All live items in `order`, for a report: a cursor's worth at a time, handed to `body`.
    public func forEachLiveItem(order: BrowseOrder, descending: Bool, _ body: (Item) throws -> Void) throws {
        try forEachLiveItem(order: order, descending: descending, count: { _ in }, body)
    }

    /// `forEachLiveItem`, telling `count` first how many items follow (read in the same
    /// transaction), for a writer that sizes its file by them (the streamed `export-homepwner`).
    package func forEachLiveItem(
        order: BrowseOrder, descending: Bool, count: (Int) throws -> Void, _ body: (Item) throws -> Void
    ) throws {
        try read { db in
            try count(try Self.liveItemCount(db))
            let direction = descending ? "DESC" : "ASC"
            let cursor = try ItemRecord.fetchCursor(
                db,
                sql: "SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 ORDER BY \(order.sql) \(direction), key \(direction)")
            var origins = OriginCache()
            while let record = try cursor.next() { try body(try record.item(origins: &origins)) }
        }
    }

    /// The keys of the live items that have an image.
    package func liveImageKeys() throws -> [ItemKey] {
        try read { db in try Self.liveImageKeyTexts(db).map { ItemKey(storedCanonical: $0) } }
    }

    /// The first live item in creation-date order whose value lies outside `range`, if any.
    package func firstLiveItem(valueOutside range: ClosedRange<Int64>) throws -> Item? {
        try read { db in
            try ItemRecord.fetchOne(
                db,
                sql: """
                    SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 AND (valueInDollars < ? OR valueInDollars > ?)
                    ORDER BY dateCreated, key LIMIT 1
                    """, arguments: [range.lowerBound, range.upperBound]
            )?.item()
        }
    }

    /// Whether `header` (a file's first 16 bytes or more) starts an image the store accepts:
    /// the check `setImage` and `add` make, for callers that must refuse bytes before staging.
    package static func isAcceptedImage(header: [UInt8]) -> Bool {
        ImageFormat.isImage(header)
    }

    private static func escapeLike(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
