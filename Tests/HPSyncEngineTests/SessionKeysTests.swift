import HPSyncModel
import Testing

@testable import HPSyncEngine

/// The session's Bloom filter of committed keys: never a false negative (a key it calls absent
/// is read from no row), and about 1% false positives at the size it was made for.
@Suite struct SessionKeysTests {
    @Test(arguments: [1_000, 6_553, 60_000])
    func everyKeyInsertedIsFoundAndFewOthersAre(count: Int) {
        var generator = SystemRandomNumberGenerator()
        var filter = SessionKeys(capacity: count)
        let inserted = (0..<count).map { _ in ItemKey.random(using: &generator) }
        for key in inserted { filter.insert(key) }
        #expect(inserted.allSatisfy(filter.mayContain))
        let others = (0..<50_000).map { _ in ItemKey.random(using: &generator) }
        let falsePositives = others.filter(filter.mayContain).count
        // ~0.8% expected at 10 bits a key (the least a filter gets: it rounds up to a power of
        // two), far fewer at 20; 2% bounds it.
        #expect(falsePositives < 1_000, "\(falsePositives) false positives in 50,000")
    }
}
