import HPSyncProtocol
import Testing

@testable import HPSyncEngine

/// When a version-2 sink commits what it holds, without a machine or a store around it.
@Suite struct BatchPolicyTests {
    /// Asks whether a batch of `held` entries commits, with nothing else pressing.
    static func commits(
        _ policy: inout BatchPolicy, held: Int, listed: Int = 0, elapsed: UInt64 = 0, imageBytes: Int64 = 0,
        isFinal: Bool = false
    ) -> Bool {
        policy.commitsNow(held: held, imageBytes: imageBytes, elapsed: elapsed, listed: listed, isFinal: isFinal)
    }

    @Test func aBatchCommitsWhenFullFinalHeavyOrOld() {
        var policy = BatchPolicy(commitEvery: 4, interval: 50)
        policy.start(startsEmpty: false, announcedEntries: nil)
        #expect(!Self.commits(&policy, held: 3))
        #expect(Self.commits(&policy, held: 4))
        #expect(Self.commits(&policy, held: 1, elapsed: 50))
        #expect(!Self.commits(&policy, held: 1, elapsed: 49))
        #expect(Self.commits(&policy, held: 1, isFinal: true))
        #expect(Self.commits(&policy, held: 1, imageBytes: BatchPolicy.imageBytes))
        #expect(!Self.commits(&policy, held: 1, imageBytes: BatchPolicy.imageBytes - 1))
        #expect(policy.limit == 4, "an incremental pull keeps its batch size")
    }

    @Test(arguments: [(true, nil), (false, 8), (false, 100)] as [(Bool, Int?)])
    func aStoreThatBeganEmptyOrALargeAnnouncementMakesABulkPull(startsEmpty: Bool, announced: Int?) {
        var policy = BatchPolicy(commitEvery: 2, bulkLimit: 8)
        policy.start(startsEmpty: startsEmpty, announcedEntries: announced)
        #expect(policy.isBulk)
        #expect(policy.bulkReservation == 2 + ProtocolLimits.manifestPageSize)
    }

    @Test func aSmallAnnouncementIntoAStoreWithRowsIsNoBulkPull() {
        var policy = BatchPolicy(commitEvery: 2, bulkLimit: 8)
        policy.start(startsEmpty: false, announcedEntries: 7)
        #expect(!policy.isBulk)
        #expect(policy.bulkReservation == nil)
    }

    /// Only a full batch doubles the limit, and never past the bulk limit.
    @Test func aBulkPullsLimitDoublesUpToTheBulkLimit() {
        var policy = BatchPolicy(commitEvery: 2, bulkLimit: 8)
        policy.start(startsEmpty: true, announcedEntries: nil)
        var limits: [Int] = []
        for _ in 0..<5 {
            #expect(Self.commits(&policy, held: policy.limit))
            limits.append(policy.limit)
        }
        #expect(limits == [4, 8, 8, 8, 8])
        #expect(Self.commits(&policy, held: 1, elapsed: BatchPolicy.interval))
        #expect(policy.limit == 8)
    }

    /// A bulk limit below the batch size never shrinks it.
    @Test func aBulkLimitBelowTheBatchSizeKeepsTheBatchSize() {
        var policy = BatchPolicy(commitEvery: 10, bulkLimit: 4)
        policy.start(startsEmpty: true, announcedEntries: nil)
        #expect(Self.commits(&policy, held: 10))
        #expect(policy.limit == 10)
    }

    /// Once the pages listed come within the tail of the announced total, the batch held commits
    /// once, when it holds more than the tail; never without an announcement.
    @Test func theTailCommitsOnceAndOnlyWithAnAnnouncedTotal() {
        var policy = BatchPolicy(commitEvery: 100, tailEntries: 4)
        policy.start(startsEmpty: false, announcedEntries: 40)
        #expect(!Self.commits(&policy, held: 6, listed: 35), "not yet within the tail")
        #expect(!Self.commits(&policy, held: 4, listed: 36), "holds no more than the tail")
        #expect(Self.commits(&policy, held: 6, listed: 36))
        #expect(policy.tailCommitted)
        #expect(!Self.commits(&policy, held: 6, listed: 38), "only once")

        var unannounced = BatchPolicy(commitEvery: 100, tailEntries: 4)
        unannounced.start(startsEmpty: false, announcedEntries: nil)
        #expect(!Self.commits(&unannounced, held: 6, listed: 36))
        #expect(!unannounced.tailCommitted)
    }
}
