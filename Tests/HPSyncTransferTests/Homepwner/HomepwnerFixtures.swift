import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting

@testable import HPSyncStore
@testable import HPSyncTransfer

/// Writes Documents folders the way each edition of the app does, for the import tests.
enum HomepwnerFixtures {
    static let keys = [
        "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04", "0F1E2D3C-4B5A-4968-8776-A5B4C3D2E1F0",
        "11111111-2222-4333-8444-555555555555",
    ].map { try! ItemKey($0) }

    /// Three items: with serial and a fractional date, without serial, and before 1970.
    static let items = [
        HomepwnerItem(
            key: keys[0], name: "Rusty Bear", serialNumber: "5Y7Q2", valueInDollars: 68,
            dateCreatedMilliseconds: 1_400_000_000_123),
        HomepwnerItem(
            key: keys[1], name: "Shiny Mac ✓", serialNumber: nil, valueInDollars: 2_100_000,
            dateCreatedMilliseconds: 1_712_345_678_999),
        HomepwnerItem(
            key: keys[2], name: "Old Spork", serialNumber: "", valueInDollars: 0, dateCreatedMilliseconds: -86_400_001),
    ]

    static func seconds(_ item: HomepwnerItem) -> Double {
        ReferenceDate.referenceSeconds(fromMilliseconds: item.dateCreatedMilliseconds)
    }

    /// `items.archive` of Objective-C `BNRItem`s with a UIImage `thumbnail` (ignored on import).
    /// With `imageKey`, the 3rd edition's layout: the key as `imageKey`, an NSData `thumbnailData`.
    static func objectiveCArchive(_ items: [HomepwnerItem] = items, imageKey: Bool = false) -> [UInt8] {
        var builder = KeyedArchiveBuilder()
        let root = builder.array { builder in
            items.map { item in
                let uid = builder.reserve()
                var fields: [(String, PlistValue)] = [
                    ("itemName", builder.string(item.name)),
                    ("serialNumber", builder.optionalString(item.serialNumber)),
                    ("dateCreated", builder.date(seconds(item))),
                    (imageKey ? "imageKey" : "itemKey", builder.string(item.keyText)),
                    ("valueInDollars", .integer(item.valueInDollars)),
                ]
                if imageKey {
                    fields.append(("thumbnailData", builder.value(.data(Fixtures.png(9)))))
                } else {
                    let thumbnail = builder.object(
                        classes: ["UIImage", "NSObject"],
                        fields: [("UIImageData", builder.value(.data(jpeg(7))))])
                    fields.append(("thumbnail", thumbnail))
                }
                builder.fill(uid, classes: ["BNRItem", "NSObject"], fields: fields)
                return .uid(uid)
            }
        }
        return builder.encode(root: root)
    }

    /// `items.archive` of the Swift editions (`Homepwner.Item`, nil serial as `$null`).
    static func swiftArchive(_ items: [HomepwnerItem] = items) -> [UInt8] {
        try! HomepwnerArchive.encode(items, style: .swift)
    }

    /// `items.plist` of the LootLogger edition.
    static func lootLoggerPlist(_ items: [HomepwnerItem] = items) -> [UInt8] {
        try! LootLoggerPlist.encode(items)
    }

    /// A Core Data store with Core Data's Z-table schema; `labels[i]` is item i's asset type.
    static func writeCoreData(
        to url: URL, _ items: [HomepwnerItem] = items, labels: [String?] = ["Toys", nil, "Kitchen"]
    )
        throws
    {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZBNRASSETTYPE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR);
                    CREATE TABLE ZBNRITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                      ZVALUEINDOLLARS INTEGER, ZASSETTYPE INTEGER, ZDATECREATED TIMESTAMP, ZORDERINGVALUE FLOAT,
                      ZITEMKEY VARCHAR, ZITEMNAME VARCHAR, ZSERIALNUMBER VARCHAR, ZTHUMBNAIL BLOB);
                    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                    INSERT INTO Z_PRIMARYKEY VALUES (1, 'BNRAssetType', 0, 3), (2, 'BNRItem', 0, \(items.count));
                    INSERT INTO Z_METADATA VALUES (1, 'F1E2D3C4-0000-4000-8000-000000000000', NULL);
                    """)
            var labelPK: [String: Int] = [:]
            for (index, item) in items.enumerated() {
                var assetPK: Int?
                if let label = labels[index] {
                    if labelPK[label] == nil {
                        labelPK[label] = labelPK.count + 1
                        try db.execute(
                            sql: "INSERT INTO ZBNRASSETTYPE VALUES (?, 1, 1, ?)", arguments: [labelPK[label]!, label])
                    }
                    assetPK = labelPK[label]
                }
                try db.execute(
                    sql: "INSERT INTO ZBNRITEM VALUES (?, 2, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [
                        index + 1, item.valueInDollars, assetPK, seconds(item), Double(index + 1) * 1.5, item.keyText,
                        item.name, item.serialNumber, Data(jpeg(3)),
                    ])
            }
        }
        try queue.close()
    }

    /// A Documents folder holding `file` with `bytes`, plus the given images named by key.
    static func folder(_ dir: TempDirectory, file: String, _ bytes: [UInt8], images: [ItemKey: [UInt8]] = [:]) -> URL {
        let folder = dir.url.appendingPathComponent("Documents-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try! Data(bytes).write(to: folder.appendingPathComponent(file))
        for (key, image) in images { try! Data(image).write(to: folder.appendingPathComponent(key.rawValue)) }
        return folder
    }
}

enum GRDBTestSupport {
    /// A valid SQLite file with an unrelated table: not a Core Data store.
    static func emptyDatabase(at url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: "CREATE TABLE other (x INTEGER)") }
        try queue.close()
    }
}
