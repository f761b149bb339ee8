import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Work started in the background never outlives the value that owns it: an owner that fails
/// before asking for the result still leaves only once the work has ended (the process may exit
/// next, and its exit handlers must not run under it).
@Suite struct BackgroundResultTests {
    struct Failure: Error, Equatable {}

    @Test func droppingItWaitsForTheWork() {
        let finished = Locked(false)
        do {
            _ = BackgroundResult {
                Thread.sleep(forTimeInterval: 0.2)
                finished.set(true)
            }
        }
        #expect(finished.current, "the work was still running when its owner let go")
    }

    @Test func waitGivesTheValueOrTheError() throws {
        #expect(try BackgroundResult { 42 }.wait() == 42)
        #expect(throws: Failure()) { try BackgroundResult<Int> { throw Failure() }.wait() }
    }
}
