import Foundation
import Testing

@testable import HPSyncEngine

@Suite struct SyncReportTests {
    let keys = (0..<5_000).map { String(format: "KEY-%05d", $0) }

    /// Appends the keys the way a sink does: page-sized batches, then single keys.
    func report() -> SyncReport {
        var report = SyncReport(direction: .pull, peer: "nas")
        for batch in Array(keys[..<4_900]).chunked(700) { report.inserted += batch }
        for key in keys[4_900...] { report.inserted.append(key) }
        report.deleted += keys[..<3]
        for key in keys[..<1_200] { report.refused.append(.init(key: key, reason: "clock ahead")) }
        return report
    }

    @Test func countsStayExactWhileTheKeysStopAtTheLimit() {
        let report = report()
        #expect(report.inserted.count == 5_000)
        #expect(report.inserted.kept.count == 1_000)
        #expect(report.inserted.kept.first == keys[0] && report.inserted.kept.last == keys[999], "the first, in order")
        #expect(report.inserted.omitted == 4_000)
        #expect(report.deleted.kept == Array(keys[..<3]) && report.deleted.omitted == 0)
        #expect(report.refused.count == 1_200 && report.refused.kept.count == 1_000)
        #expect(report.updated.isEmpty && report.reconciled.isEmpty)
        let counts = report.counts
        #expect(counts.inserted == 5_000 && counts.deleted == 3 && counts.refused == 1_200)
    }

    @Test func aListKeepsNothingPastItsOwnLimit() {
        var list = CappedList<Int>(limit: 2)
        list += [1, 2, 3]
        list.append(4)
        list += [Int]()
        #expect(list.kept == [1, 2] && list.count == 4 && list.omitted == 2)
        #expect(CappedList([7], limit: 0).kept.isEmpty && CappedList([7], limit: 0).count == 1)
    }

    @Test func jsonCarriesTheCountsBesideTheKeptKeys() throws {
        let data = try JSONEncoder().encode(report())
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((json["inserted"] as? [String])?.count == 1_000)
        #expect(json["insertedCount"] as? Int == 5_000)
        #expect(json["deleted"] as? [String] == Array(keys[..<3]))
        #expect(json["deletedCount"] as? Int == 3)
        #expect(json["updatedCount"] as? Int == 0 && json["reconciledCount"] as? Int == 0)
        #expect((json["refused"] as? [[String: String]])?.first == ["key": keys[0], "reason": "clock ahead"])
        #expect(json["refusedCount"] as? Int == 1_200)
        #expect(json["reconcileHorizon"] == nil, "absent unless the session reconciled")
        #expect(json["peer"] as? String == "nas" && json["direction"] as? String == "pull")
    }
}
