import Foundation
import GRDB
import HPSyncModel

/// The Core Data edition's SQLite store (`store.data` or `items.data`): entity `BNRItem` in
/// table `ZBNRITEM`, entity `BNRAssetType` in `ZBNRASSETTYPE`, dates as seconds since 2001.
enum CoreDataInventory {
    static func decode(_ url: URL, file: String) throws(HomepwnerError) -> [HomepwnerItem] {
        var configuration = Configuration()
        configuration.readonly = true
        // The file is the user's to hand us, so anything in it: no schema-defined SQL (views,
        // triggers) may call functions with side effects, and pages are checked as they are read.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON")
        }
        let rows: [Row]
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            rows = try queue.read { db -> [Row] in
                guard try db.tableExists("ZBNRITEM") else { throw Missing(what: "no ZBNRITEM table") }
                let hasAssets =
                    try db.tableExists("ZBNRASSETTYPE")
                    && db.columns(in: "ZBNRITEM").contains { $0.name.uppercased() == "ZASSETTYPE" }
                let asset = hasAssets ? "(SELECT ZLABEL FROM ZBNRASSETTYPE a WHERE a.Z_PK = i.ZASSETTYPE)" : "NULL"
                return try Row.fetchAll(
                    db,
                    sql: """
                        SELECT ZITEMNAME, ZSERIALNUMBER, ZVALUEINDOLLARS, ZDATECREATED, ZITEMKEY, \(asset) AS label
                        FROM ZBNRITEM i ORDER BY ZORDERINGVALUE, Z_PK
                        """)
            }
        } catch let missing as Missing {
            throw .malformed(file: file, reason: "not a Homepwner Core Data store: \(missing.what)")
        } catch let error as DatabaseError {
            throw .malformed(file: file, reason: "not a readable SQLite store: \(error.message ?? "\(error)")")
        } catch {
            throw .malformed(file: file, reason: "cannot read: \(error)")
        }
        var items: [HomepwnerItem] = []
        for (index, row) in rows.enumerated() {
            func fail(_ reason: String) -> HomepwnerError {
                .malformed(file: file, reason: "ZBNRITEM row \(index + 1) \(reason)")
            }
            // Checked conversions: GRDB's `row[i] as T` traps on a value of the wrong type.
            func value<T: DatabaseValueConvertible>(_ column: Int, _ type: T.Type) throws(HomepwnerError) -> T? {
                let raw: DatabaseValue = row[column]
                if raw.isNull { return nil }
                guard let converted = T.fromDatabaseValue(raw) else {
                    throw fail("has a \(row.columnNames.map { $0 }[column]) of the wrong type (\(raw))")
                }
                return converted
            }
            guard let keyText = try value(4, String.self) else { throw fail("has no ZITEMKEY") }
            let key: ItemKey
            do {
                key = try ItemKey(keyText)
            } catch {
                throw fail("has a malformed ZITEMKEY: \(error)")
            }
            guard let seconds = try value(3, Double.self),
                let ms = ReferenceDate.milliseconds(fromReferenceSeconds: seconds)
            else { throw fail("has no valid ZDATECREATED") }
            items.append(
                HomepwnerItem(
                    key: key, keyText: keyText, name: try value(0, String.self) ?? "",
                    serialNumber: try value(1, String.self), valueInDollars: try value(2, Int64.self) ?? 0,
                    dateCreatedMilliseconds: ms, assetType: try value(5, String.self)))
        }
        return items
    }

    private struct Missing: Error { var what: String }
}
