import ArgumentParser
import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTransfer

/// `hp-sync list`: all items as an aligned table with a totals line, or JSON.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List items.",
        discussion: """
            The table ends with a totals line, `total: N items, value V` (live items shown, their \
            values added up): the figure an insurer asks for first.
            """)

    enum Sort: String, ExpressibleByArgument, CaseIterable {
        case key, name, value, created
    }

    @OptionGroup var options: StoreOptions
    @Flag(help: "Print JSON (the export's item format) instead of a table.") var json = false
    @Flag(help: "Include deleted items (tombstones).") var deleted = false
    @Option(help: "Order: key (default), name, value (highest first) or created (oldest first).")
    var sort: Sort = .key
    @Option(help: "Only items whose name or serial number contains TEXT (ignoring case).") var grep: String?

    func run() throws {
        let store = try options.openStore()
        let items = Self.sorted(try store.items(includeDeleted: deleted).filter(matches), by: sort)
        let amiss = try store.imageFileSizesAmiss(items)
        if json {
            Output.writeData(store.itemsJSON(items, missingImages: Set(amiss.keys)))
            return
        }
        var rows = [["KEY", "NAME", "SERIAL", "VALUE", "CREATED", "IMAGE"]]
        rows.reserveCapacity(items.count + 1)
        var live = 0
        var total = DollarTotal()
        for item in items {
            if item.deleted {
                rows.append([item.key.rawValue, "(deleted)", "", "", "", ""])
                continue
            }
            live += 1
            // Exact: rows from before the value range may hold values near Int64's limits.
            total.add(item.valueInDollars)
            rows.append([
                item.key.rawValue, item.name, item.serialNumber ?? "-", String(item.valueInDollars),
                String(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds).prefix(10)),
                item.image.map { image in
                    switch amiss[item.key] {
                    case nil: "yes (\(image.size) B)"
                    case .some(nil): "MISSING (\(image.size) B)"
                    case .some(let size?): "DAMAGED (\(size) of \(image.size) B)"
                    }
                } ?? "no",
            ])
        }
        Output.write(Output.table(rows) + "total: \(live) item\(live == 1 ? "" : "s"), value \(total)\n")
        if !amiss.isEmpty {
            // On stderr: the table stays the same shape for scripts, the person still sees it.
            let missing = amiss.values.filter { $0 == nil }.count
            let damaged = amiss.count - missing
            let what = [
                missing > 0 ? "\(missing) image\(missing == 1 ? " is" : "s are") MISSING (their files are gone)" : nil,
                damaged > 0
                    ? "\(damaged) image\(damaged == 1 ? " is" : "s are") DAMAGED (their files have the wrong size)"
                    : nil,
            ].compactMap { $0 }.joined(separator: " and ")
            Output.warning("\(what); repair with `\(Store.repairCommand)`")
        }
    }

    func matches(_ item: Item) -> Bool {
        guard let grep else { return true }
        if item.deleted { return false }
        return item.name.localizedCaseInsensitiveContains(grep)
            || (item.serialNumber?.localizedCaseInsensitiveContains(grep) ?? false)
    }

    /// `items` (in key order, as the store returns them) in the order asked for; ties keep key order.
    static func sorted(_ items: [Item], by sort: Sort) -> [Item] {
        switch sort {
        case .key: return items
        case .name:
            return items.enumerated().sorted {
                let order = $0.element.name.localizedStandardCompare($1.element.name)
                return order == .orderedSame ? $0.offset < $1.offset : order == .orderedAscending
            }.map(\.element)
        case .value:
            return items.enumerated().sorted {
                ($1.element.valueInDollars, $0.offset) < ($0.element.valueInDollars, $1.offset)
            }.map(\.element)
        case .created:
            return items.enumerated().sorted {
                ($0.element.dateCreatedMilliseconds, $0.offset) < ($1.element.dateCreatedMilliseconds, $1.offset)
            }.map(\.element)
        }
    }
}
