import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import PropertyBased
import Testing

@testable import HPSyncStore

/// The value range at the store's ways in, and totals that cannot overflow whatever it holds.
@Suite struct ValueRangeTests {
    @Test func addEditAndAPeersRecordRefuseValuesOutsideTheRange() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        for value in [Int64.max, .min, 2_147_483_648, -2_147_483_649] {
            #expect(throws: StoreError.invalidValue(value)) {
                try store.add(ItemDraft(name: "Yacht", valueInDollars: value))
            }
        }
        let item = try store.add(ItemDraft(name: "Yacht", valueInDollars: 2_147_483_647))
        #expect(throws: StoreError.invalidValue(.max)) { try store.edit(item.key, ItemEdit(valueInDollars: .max)) }
        var remote = Fixtures.remoteItem(ItemKey.random(), stamp: 1 << 40)
        remote.valueInDollars = .max
        #expect {
            try store.applyRemote([IncomingRecord(item: remote)], checkpoint: nil)
        } throws: { error in
            guard case StoreError.invalidRecord(let key, let reason) = error else { return false }
            return key == remote.key && reason.contains("\(Int64.max)")
        }
        #expect(try store.items().map(\.valueInDollars) == [2_147_483_647])
    }

    /// Two rows at Int64's limit made `SUM` fail ("integer overflow") and every page with it.
    @Test func browseTotalsRowsFromBeforeTheRangeExactly() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        for value in [Int64.max, .max, .max, .min] {
            let item = try store.add(ItemDraft(name: "Old"))
            try ExtremeRecords.overwrite(
                item.key, with: ExtremeFields(name: "Old", serial: nil, value: value, date: 0),
                inStore: store.directory)
        }
        let page = try store.browse(BrowseQuery(search: "old"))
        #expect(page.totalValue.description == "18446744073709551613")
        #expect(page.matchingValue == page.totalValue && page.totalValue.exactValue == nil)
    }

    @Test func aTotalIsTheExactSumOfAnyValues() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix64(seed: UInt64(seed))
            let values = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                ExtremeRecords.pick(ExtremeRecords.values, using: &generator) {
                    Int64.random(in: .min ... .max, using: &$0)
                }
            }
            // Decimal's 38 digits hold any sum of 40 Int64s exactly.
            let expected = values.reduce(Decimal(0)) { $0 + Decimal($1) }
            let total = DollarTotal(values)
            #expect(total.description == "\(expected)", "\(values)")
            let halves = DollarTotal(
                sumOfHighHalves: values.reduce(0) { $0 + ($1 >> 32) },
                sumOfLowHalves: values.reduce(0) { $0 + ($1 & 0xFFFF_FFFF) })
            #expect(halves == total, "\(values)")
            let fits = values.reduce((Int64(0), false)) { partial, value in
                let (sum, overflow) = partial.0.addingReportingOverflow(value)
                return (sum, partial.1 || overflow)
            }
            if !fits.1 { #expect(total.exactValue == fits.0) }
        }
    }
}
