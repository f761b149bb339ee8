import Foundation
import HPSyncTesting
import Testing

/// `hp-sync web` as users start it: what it refuses before serving anything. (What it serves is
/// tested by HPSyncWebTests and, in a real browser, by Tests/Browser/web_browser_test.py.)
@Suite struct WebCommandTests {
    @Test func aNonLoopbackListenAddressIsRefused() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        for address in ["0.0.0.0:8080", "192.168.1.20:8080", "[::]:8080", "example.com:80"] {
            let result = try runner.run(["web", "--listen", address])
            #expect(result.status == 64, "\(address): \(result.stderr)")
            #expect(result.stderr.contains("loopback only"), "\(address)")
            #expect(result.stderr.contains("ssh -L"), "\(address)")
            #expect(result.text.isEmpty, "\(address)")
        }
        let badPort = try runner.run(["web", "--listen", "127.0.0.1:http"])
        #expect(badPort.status == 64)
    }

    /// Regression (issue 35 §4): on a port in use `web` exited 70 with "internal error ...
    /// please report it"; like `serve`, it exits 69 and says what to do.
    @Test func aPortInUseExits69WithWhatToDo() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let taken = try SilentListener()
        let result = try runner.run(["web", "--listen", taken.address])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("hp-sync: error: cannot listen on \(taken.address): "), "\(result.stderr)")
        #expect(result.stderr.contains("--listen 127.0.0.1:PORT"))
        #expect(!result.stderr.contains("internal error") && !result.stderr.contains("errno"), "\(result.stderr)")
        #expect(result.text.isEmpty)
    }
}
