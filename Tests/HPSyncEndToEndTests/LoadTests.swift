import Foundation
import HPSyncTesting
import Synchronization
import Testing

/// 50 `hp-sync` clients add, push and pull concurrently against one `serve` for a bounded time:
/// no session may fail, every store converges, and the server's peak memory stays bounded.
///
/// CI runs a short round (12 clients, 5 s: setting up 50 stores through the CLI alone takes a
/// minute on 2 cores); `Scripts/torture --load` runs 50 clients for 20 s.
/// `HP_SYNC_LOAD_SECONDS` and `HP_SYNC_LOAD_CLIENTS` scale it.
@Suite(.serialized) struct LoadTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = Double(environment["HP_SYNC_LOAD_SECONDS"] ?? "") ?? 5
    static let clientCount = Int(environment["HP_SYNC_LOAD_CLIENTS"] ?? "") ?? 12

    /// Runs `body` for every index on a few threads at once.
    static func parallel(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<width {
            group.enter()
            Thread.detachNewThread {
                while case let index = next.add(1, ordering: .relaxed).oldValue, index < count { body(index) }
                group.leave()
            }
        }
        group.wait()
    }

    static func peakMemoryKB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) }
    }

    @Test func manyClientsPushAndPullAtOnce() throws {
        let primary = try BinaryRunner.initialized()
        defer { primary.cleanUp() }
        let primaryID = try primary.nodeID()
        let clients = try (0..<Self.clientCount).map { _ in try BinaryRunner() }
        defer { clients.forEach { $0.cleanUp() } }
        let ids = Mutex<[Int: String]>([:])
        Self.parallel(clients.count, width: 4) { index in
            _ = try? clients[index].run(["init"])
            let id = (try? clients[index].nodeID()) ?? ""
            ids.withLock { $0[index] = id }
        }
        for index in clients.indices {
            let id = try #require(ids.withLock { $0[index] })
            try #require(try primary.run(["peer", "add", "c\(index)", id, "--allow", "read-write"]).status == 0)
        }
        let server = try ServeProcess(primary)
        defer { _ = server.stop() }
        let address = server.address
        Self.parallel(clients.count, width: 4) { index in
            _ = try? clients[index].run(["peer", "add", "primary", primaryID, "--address", address])
        }

        let sessions = Mutex<(ok: Int, failed: [String])>((0, []))
        let deadline = Date().addingTimeInterval(Self.seconds)
        Self.parallel(clients.count, width: clients.count) { index in
            var round = 0
            while Date() < deadline {
                round += 1
                _ = try? clients[index].run(["add", "--name", "c\(index) r\(round)", "--value", "\(round)"])
                let verb = round % 2 == 0 ? "pull" : "push"
                let result = try? clients[index].run([verb, "primary"])
                sessions.withLock {
                    if result?.status == 0 {
                        $0.ok += 1
                    } else {
                        $0.failed.append("c\(index) \(verb): \(result?.stderr ?? "did not run")")
                    }
                }
            }
        }
        let peak = Self.peakMemoryKB(server.process.processIdentifier)
        let (ok, failed) = sessions.withLock { ($0.ok, $0.failed) }
        #expect(failed.isEmpty, "failed sessions: \(failed.prefix(5))")

        // Converge: everyone pushes what is left, then everyone pulls.
        Self.parallel(clients.count, width: 4) { index in _ = try? clients[index].run(["sync", "primary"]) }
        Self.parallel(clients.count, width: 4) { index in _ = try? clients[index].run(["pull", "primary"]) }
        let reference = try primary.run(["list", "--json", "--deleted"]).stdout
        let differing = Atomic<Int>(0)
        Self.parallel(clients.count, width: 4) { index in
            if (try? clients[index].run(["list", "--json", "--deleted"]).stdout) != reference {
                differing.add(1, ordering: .relaxed)
            }
        }
        #expect(differing.load(ordering: .relaxed) == 0, "stores that did not converge")
        #expect(try primary.run(["verify"]).status == 0)
        let peakKB = try #require(peak)
        #expect(peakKB < 256 * 1024, "server peak memory \(peakKB) KB")
        let items = (try JSONSerialization.jsonObject(with: reference) as? [Any])?.count ?? 0
        print(
            "load: \(clients.count) clients for \(Int(Self.seconds)) s: \(ok) sessions ok, \(failed.count) failed, "
                + "\(items) items converged, server VmHWM \(peakKB / 1024) MB")
    }
}
